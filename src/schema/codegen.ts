import { appendKey } from '../json/path.js'
import { type CNode, K_ANY, K_ARR, K_BOOL, K_NULL, K_NUM, K_OBJ, K_STR } from './compiled-node.js'

/**
 * Straight-line code for the common shallow case. The validator proves a value is lossless JSON first
 * (snapshot membership or `isJsonValue`), so the generated checker only tests the schema: no
 * descriptors, no allocation, one function per schema (plus one per `oneOf` branch).
 *
 * Nesting is inlined up to MAX_INLINE_DEPTH levels and MAX_INLINE_NODES emitted nodes; anything
 * deeper or larger becomes a call into the explicit-stack interpreter, so any schema depth works and
 * the emitter's own (bounded) recursion can never exceed MAX_INLINE_DEPTH frames.
 */
const MAX_INLINE_DEPTH = 64
const MAX_INLINE_NODES = 3000
/** Enums up to this size compile to `!==` chains; larger ones to a Set lookup. */
const INLINE_ENUM = 8

type Interpreter = (node: CNode, value: unknown) => boolean
/** Slow-path helpers the collecting code calls; each pushes messages onto `out`. */
export interface CollectHelpers {
  /** Violations of `node` at `path`, by the interpreter (used past the inline limits). */
  interp(node: CNode, value: unknown, path: string, out: string[]): void
  /** The oneOf verdict of `node` for `value` (its other keywords already hold). */
  oneOf(node: CNode, value: unknown, path: string, out: string[]): void
  /** `expected …, got <kind>` wording. */
  got(value: unknown): string
  /** Path of an object member. */
  key(path: string, key: string): string
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** Message prefix expression: `path + ": "` etc. `path` is a JS expression yielding the path string. */
function msg(path: string, text: string, tail = ''): string {
  return `${path} + ${JSON.stringify(`: ${text}`)}${tail ? ` + ${tail}` : ''}`
}

function seg(path: string, literal: string): string {
  return `${path} + ${JSON.stringify(literal)}`
}

class Emitter {
  readonly constants: unknown[] = []
  readonly helpers: string[] = []
  private vars = 0
  private budget = MAX_INLINE_NODES

  /** `collect`: push every violation onto `out` (paths built only when reporting); else `return false`. */
  constructor(private readonly collect: boolean) {}

  constant(value: unknown): string {
    let index = this.constants.indexOf(value)
    if (index === -1) index = this.constants.push(value) - 1
    return `k${index}`
  }

  fresh(prefix: string): string {
    return `${prefix}${this.vars++}`
  }

  private fail(message: string): string {
    return this.collect ? `out.push(${message});` : 'return false;'
  }

  /** Statements checking `x` (at path expression `p`) against `node`. */
  node(node: CNode, x: string, p: string, depth: number): string {
    if (node.trivial) return ''
    if (depth >= MAX_INLINE_DEPTH || --this.budget < 0) {
      return this.collect
        ? `h.interp(${this.constant(node)}, ${x}, ${p}, out);\n`
        : `if (!interp(${this.constant(node)}, ${x})) return false;\n`
    }
    // Each stage runs only when the previous ones held, exactly like the interpreter.
    const stages: string[] = []
    const type = this.typeTest(node, x)
    if (type !== '')
      stages.push(`if (${type}) { ${this.fail(msg(p, `expected ${node.typeName}, got `, `h.got(${x})`))} }`)
    if (node.integer) stages.push(`if (${x} % 1 !== 0) { ${this.fail(msg(p, 'expected integer, got ', `${x}`))} }`)
    if (node.enumValues !== null) {
      const test =
        node.enumValues.length <= INLINE_ENUM
          ? node.enumValues.map((v) => `${x} !== ${JSON.stringify(v)}`).join(' && ')
          : `!${this.constant(new Set(node.enumValues))}.has(${x})`
      const list = node.enumValues
        .slice(0, 10)
        .map((v) => JSON.stringify(v))
        .join(', ')
      const more = node.enumValues.length > 10 ? ', …' : ''
      stages.push(
        `if (${test}) { ${this.fail(msg(p, `expected one of ${list}${more}; got `, `JSON.stringify(${x})`))} }`,
      )
    }
    if (node.hasConst) {
      const c = JSON.stringify(node.constValue)
      stages.push(`if (${x} !== ${c}) { ${this.fail(msg(p, `expected ${c}, got `, `JSON.stringify(${x})`))} }`)
    }
    let body = ''
    if (node.objectNode) body += this.object(node, x, p, depth)
    else if (node.mask === K_ARR && node.items !== null && !node.items.trivial) {
      const i = this.fresh('i')
      const y = this.fresh('v')
      const at = `${p} + "[" + ${i} + "]"`
      body += `for (let ${i} = 0; ${i} < ${x}.length; ${i}++) {\nconst ${y} = ${x}[${i}];\n${this.node(node.items, y, at, depth + 1)}}\n`
    }
    if (node.oneOf !== null) body += this.oneOf(node, x, p, depth)
    // if (a) fail; else if (b) fail; else { body }
    if (stages.length === 0) return body
    return `${stages.join(' else ')}${body ? ` else {\n${body}}` : ''}\n`
  }

  private oneOf(node: CNode, x: string, p: string, depth: number): string {
    if (this.collect) return `h.oneOf(${this.constant(node)}, ${x}, ${p}, out);\n`
    const m = this.fresh('m')
    let code = `{\nlet ${m} = 0;\n`
    for (const branch of node.oneOf!) {
      const fn = this.fresh('b')
      const arg = this.fresh('v')
      this.helpers.push(`function ${fn}(${arg}) {\n${this.node(branch, arg, '""', depth + 1)}return true;\n}\n`)
      code += `if (${fn}(${x}) && ++${m} > 1) return false;\n`
    }
    return `${code}if (${m} !== 1) return false;\n}\n`
  }

  /** A condition that is true when `x` has the wrong JSON kind ('' when any kind is fine). */
  private typeTest(node: CNode, x: string): string {
    switch (node.mask) {
      case K_STR:
        return `typeof ${x} !== 'string'`
      case K_NUM:
        // Values are proven finite, so `% 1` (next stage) is an exact integer test.
        return `typeof ${x} !== 'number'`
      case K_BOOL:
        return `typeof ${x} !== 'boolean'`
      case K_NULL:
        return `${x} !== null`
      case K_ARR:
        return `!isArray(${x})`
      case K_OBJ:
        return `typeof ${x} !== 'object' || ${x} === null || isArray(${x})`
      case K_ANY:
        return ''
      default:
        throw new Error(`unexpected type mask ${node.mask}`)
    }
  }

  private object(node: CNode, x: string, p: string, depth: number): string {
    let code = ''
    const count = node.closed ? this.fresh('n') : ''
    if (node.closed) code += `let ${count} = 0;\n`
    for (let i = 0; i < node.propKeys.length; i++) {
      const key = node.propKeys[i]
      const child = node.propNodes[i]
      const required = node.required.includes(key)
      if (child.trivial && !required && !node.closed) continue
      const literal = JSON.stringify(key)
      // Keys Object.prototype also answers (constructor, toString, __proto__, …) need an own-property test;
      // any other key reads directly (a JSON value is never undefined, so undefined means absent).
      const read =
        key in Object.prototype
          ? `(hasOwn(${x}, ${literal}) ? ${x}[${literal}] : undefined)`
          : IDENTIFIER.test(key)
            ? `${x}.${key}`
            : `${x}[${literal}]`
      const y = this.fresh('v')
      const at = seg(p, appendKey('', key))
      const inner = `${node.closed ? `${count}++;\n` : ''}${this.node(child, y, at, depth + 1)}`
      code += `const ${y} = ${read};\n`
      if (required)
        code += `if (${y} === undefined) { ${this.fail(msg(at, 'required property is missing'))} } else {\n${inner}}\n`
      else if (inner) code += `if (${y} !== undefined) {\n${inner}}\n`
    }
    if (node.closed) {
      // Own keys counted against the declared ones present: any extra key makes the counts differ.
      const total = this.fresh('t')
      const k = this.fresh('key')
      code += `let ${total} = 0;\nfor (const ${k} in ${x}) ${total}++;\n`
      if (!this.collect) code += `if (${total} !== ${count}) return false;\n`
      else {
        const declared = this.constant(node.propIndex)
        code += `if (${total} !== ${count}) for (const ${k} in ${x}) if (!${declared}.has(${k})) out.push(h.key(${p}, ${k}) + ": property is not allowed (additionalProperties: false)");\n`
      }
    }
    return code
  }
}

function build<T>(emitter: Emitter, params: string[], args: unknown[], fnParams: string, body: string): T | undefined {
  const constants = emitter.constants.map((_, i) => `k${i} = c[${i}]`).join(', ')
  const source = `${constants ? `const ${constants};\n` : ''}${emitter.helpers.join('')}return function (${fnParams}) {\n${body}};`
  try {
    const factory = new Function('c', ...params, source) as (...a: unknown[]) => T
    return factory(emitter.constants, ...args)
  } catch {
    return undefined
  }
}

/**
 * Generate the trusted boolean checker for a compiled schema, or `undefined` when code generation is
 * unavailable (e.g. `new Function` forbidden); callers then use the interpreter.
 */
export function generateTrustedCheck(root: CNode, interp: Interpreter): ((value: unknown) => boolean) | undefined {
  const emitter = new Emitter(false)
  const body = `${emitter.node(root, 'v', '""', 0)}return true;\n`
  return build(emitter, ['interp', 'isArray', 'hasOwn'], [interp, Array.isArray, Object.hasOwn], 'v', body)
}

/** Generate the trusted violation collector (messages identical to the interpreter's), or `undefined`. */
export function generateTrustedCollector(
  root: CNode,
  helpers: CollectHelpers,
): ((value: unknown, path: string, out: string[]) => void) | undefined {
  const emitter = new Emitter(true)
  const body = emitter.node(root, 'v', 'path', 0)
  return build(emitter, ['h', 'isArray', 'hasOwn'], [helpers, Array.isArray, Object.hasOwn], 'v, path, out', body)
}
