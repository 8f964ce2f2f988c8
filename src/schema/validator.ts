import type { JsonSchemaNode, JsonSchemaScalar } from '../contract/json-schema.js'
import { appendIndex, appendKey } from '../json/path.js'
import {
  arrayExtraKey,
  containerProblem,
  descriptorProblem,
  findJsonIssue,
  isFrozenSnapshot,
  isJsonValue,
  primitiveProblem,
} from '../json/snapshot.js'
import { assertSupportedJsonSchema } from './assert.js'
import { type CollectHelpers, generateTrustedCheck, generateTrustedCollector } from './codegen.js'
import { type CNode, compileNodes, K_ARR, K_BOOL, K_NULL, K_NUM, K_OBJ, K_STR, newNode } from './compiled-node.js'

/** A schema compiled once: `isValid` allocates nothing; `violations` explains a failure. */
export interface CompiledJsonSchemaValidator {
  /** Whether `value` is lossless JSON satisfying the schema. */
  isValid(value: unknown): boolean
  /** Every path-qualified violation (empty when valid). `rootPath` defaults to `value`. */
  violations(value: unknown, rootPath?: string): string[]
  /** `isValid` then `violations` in one pass (proves a raw value JSON once): `[]` when valid. */
  validate(value: unknown, rootPath?: string): string[]
}

function kindBit(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return K_STR
    case 'number':
      return K_NUM
    case 'boolean':
      return K_BOOL
    case 'object':
      return value === null ? K_NULL : Array.isArray(value) ? K_ARR : K_OBJ
    default:
      return 0
  }
}

function gotName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value)
}

function enumAllows(node: CNode, value: unknown): boolean {
  const values = node.enumValues
  if (values === null) return true
  return node.enumSet !== null
    ? node.enumSet.has(value as JsonSchemaScalar)
    : values.includes(value as JsonSchemaScalar)
}

function scalarAllowed(node: CNode, value: unknown): boolean {
  return enumAllows(node, value) && (!node.hasConst || value === node.constValue)
}

// ---------------------------------------------------------------------------------------------
// Trusted interpreter: the value is already proven lossless JSON (a snapshot, or isJsonValue passed).
// Explicit stack of (value, node) pairs; a oneOf opens a context whose branches run in isolation.
// State is module-level: validation never runs user code, so it is not reentrant.

/** Sentinel pushed below a oneOf branch: popping it means the branch completed without failure. */
const MARK = {} as CNode
const vStack: unknown[] = []
const nStack: CNode[] = []
const ctxValue: unknown[] = []
const ctxNode: CNode[] = []
const ctxBranch: number[] = []
const ctxMatches: number[] = []
const ctxBase: number[] = []

/** Check one value against the non-oneOf parts of a node and push its children. */
function stepTrusted(value: unknown, node: CNode, sp: number): number {
  const kind = kindBit(value)
  if ((node.mask & kind) === 0) return -1
  if (kind <= K_STR) {
    if (node.integer && !Number.isInteger(value)) return -1
    if ((node.enumValues !== null || node.hasConst) && !scalarAllowed(node, value)) return -1
    return sp
  }
  if (kind === K_OBJ) {
    if (!node.objectNode) return sp
    const obj = value as Record<string, unknown>
    const required = node.required
    for (let i = 0; i < required.length; i++) if (!Object.hasOwn(obj, required[i])) return -1
    if (node.closed) {
      const index = node.propIndex
      for (const key in obj) if (!index.has(key)) return -1
    }
    const keys = node.propKeys
    const children = node.propNodes
    for (let i = 0; i < keys.length; i++) {
      const child = children[i]
      if (child.trivial) continue
      const key = keys[i]
      if (Object.hasOwn(obj, key)) {
        vStack[sp] = obj[key]
        nStack[sp] = child
        sp++
      }
    }
    return sp
  }
  const items = node.items
  if (items !== null && !items.trivial) {
    const arr = value as unknown[]
    for (let i = arr.length - 1; i >= 0; i--) {
      vStack[sp] = arr[i]
      nStack[sp] = items
      sp++
    }
  }
  return sp
}

/** Interpret `root` over a value already proven JSON. Handles any depth of value and schema. */
export function checkTrusted(root: CNode, value: unknown): boolean {
  let sp = 1
  let cp = 0
  let hwm = 1
  vStack[0] = value
  nStack[0] = root
  try {
    while (sp > 0) {
      if (sp > hwm) hwm = sp
      sp--
      const node = nStack[sp]
      const v = vStack[sp]
      let failed = false
      if (node === MARK) {
        // The current branch of the innermost oneOf completed: it matched.
        const c = cp - 1
        if (++ctxMatches[c] > 1) failed = true
        else if (ctxBranch[c] + 1 < ctxNode[c].oneOf!.length) {
          const b = ++ctxBranch[c]
          nStack[sp] = MARK
          vStack[sp] = undefined
          vStack[sp + 1] = ctxValue[c]
          nStack[sp + 1] = ctxNode[c].oneOf![b]
          sp += 2
          continue
        } else {
          cp--
          continue
        }
      } else if (node.trivial) {
        continue
      } else {
        const next = stepTrusted(v, node, sp)
        if (next < 0) failed = true
        else {
          sp = next
          if (node.oneOf !== null) {
            ctxValue[cp] = v
            ctxNode[cp] = node
            ctxBranch[cp] = 0
            ctxMatches[cp] = 0
            ctxBase[cp] = sp
            cp++
            nStack[sp] = MARK
            vStack[sp] = undefined
            vStack[sp + 1] = v
            nStack[sp + 1] = node.oneOf[0]
            sp += 2
          }
        }
      }
      // Failure unwinds to the innermost oneOf: that branch failed; try the next or settle the oneOf.
      while (failed) {
        if (cp === 0) return false
        const c = cp - 1
        sp = ctxBase[c]
        if (ctxMatches[c] <= 1 && ctxBranch[c] + 1 < ctxNode[c].oneOf!.length) {
          const b = ++ctxBranch[c]
          nStack[sp] = MARK
          vStack[sp] = undefined
          vStack[sp + 1] = ctxValue[c]
          nStack[sp + 1] = ctxNode[c].oneOf![b]
          sp += 2
          failed = false
        } else {
          cp--
          failed = ctxMatches[c] !== 1
        }
      }
    }
    return true
  } finally {
    // Release references to user data without giving up the stacks' backing stores.
    if (hwm < sp + 2) hwm = sp + 2
    for (let i = 0; i < hwm; i++) vStack[i] = undefined
    for (let i = 0; i < ctxValue.length; i++) ctxValue[i] = undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Violation collector: the slow path, only run for invalid values. Collects every violation. When the
// value is not proven JSON (`careful`), members are read through descriptors and non-JSON members are
// reported at their path instead of being descended into (no getter or proxy trap ever runs).

interface OneOfFrame {
  value: unknown
  node: CNode
  path: string
  branch: number
  outBase: number
  matched: number[]
  details: string[]
}

const BRANCH_DETAIL_LIMIT = 3

/** Reads a member for the collector: directly when trusted, else through its descriptor (never a getter). */
function readMember(value: object, key: string | number, careful: boolean): { value: unknown; problem?: string } {
  if (!careful) return { value: (value as Record<string | number, unknown>)[key] }
  const desc = Object.getOwnPropertyDescriptor(value, key)
  if (desc === undefined) return { value: undefined, problem: 'is a hole in a sparse array, which is not JSON' }
  const bad = descriptorProblem(desc)
  return bad === undefined ? { value: desc.value } : { value: undefined, problem: bad }
}

function branchDetail(branch: number, violations: string[]): string {
  const shown = violations.slice(0, BRANCH_DETAIL_LIMIT).join('; ')
  const more = violations.length > BRANCH_DETAIL_LIMIT ? `; … ${violations.length - BRANCH_DETAIL_LIMIT} more` : ''
  return `oneOf[${branch}]: ${shown}${more}`
}

/** The oneOf violation for a settled set of matching branches, or `undefined` when exactly one matched. */
function oneOfMessage(path: string, count: number, matched: number[], details: string[]): string | undefined {
  if (matched.length === 0) return `${path}: matched none of the ${count} oneOf branches (${details.join(' | ')})`
  if (matched.length === 1) return undefined
  const which = matched.map((b) => `oneOf[${b}]`).join(', ')
  return `${path}: matched ${matched.length} oneOf branches (${which}); exactly one must match`
}

/** Work-item kinds besides "validate value against node". */
const MESSAGE = {} as CNode
const ONEOF = {} as CNode

/**
 * Collect every violation with an explicit stack. Work items run in depth-first declaration order —
 * the same order the generated collector reports in: a node's own keyword failures, then its declared
 * properties (missing ones where they are declared), then undeclared keys, then items, then its oneOf.
 */
export function collectViolations(root: CNode, value: unknown, rootPath: string, careful: boolean): string[] {
  return new ViolationWalk(careful).run(root, value, rootPath)
}

/**
 * The state of one `collectViolations` walk: three parallel work stacks (value, node, path), the
 * open oneOf frames, and the batch of children of the node being visited. Marker nodes on the stack
 * stand for a message to emit (`MESSAGE`), a oneOf to open (`ONEOF`) and a branch to close (`MARK`).
 */
class ViolationWalk {
  readonly out: string[] = []
  private readonly values: unknown[] = []
  private readonly nodes: CNode[] = []
  private readonly paths: string[] = []
  private readonly frames: OneOfFrame[] = []
  // Children are gathered per node, then pushed in reverse so they pop in order.
  private readonly batchValues: unknown[] = []
  private readonly batchNodes: CNode[] = []
  private readonly batchPaths: string[] = []

  constructor(private readonly careful: boolean) {}

  run(root: CNode, value: unknown, rootPath: string): string[] {
    this.push(value, root, rootPath)
    const { values, nodes, paths, out } = this
    while (values.length > 0) {
      const v = values.pop()
      const node = nodes.pop() as CNode
      const path = paths.pop() as string
      if (node === MESSAGE) out.push(path)
      else if (node === ONEOF) this.openOneOf(v as { value: unknown; path: string; node: CNode })
      else if (node === MARK) this.closeBranch()
      else this.visit(v, node, path)
    }
    return out
  }

  private push(v: unknown, n: CNode, p: string): void {
    this.values.push(v)
    this.nodes.push(n)
    this.paths.push(p)
  }

  private add(v: unknown, n: CNode, p: string): void {
    this.batchValues.push(v)
    this.batchNodes.push(n)
    this.batchPaths.push(p)
  }

  private flush(): void {
    const { batchValues, batchNodes, batchPaths } = this
    for (let i = batchValues.length - 1; i >= 0; i--) this.push(batchValues[i], batchNodes[i], batchPaths[i])
    batchValues.length = 0
    batchNodes.length = 0
    batchPaths.length = 0
  }

  private openOneOf(item: { value: unknown; path: string; node: CNode }): void {
    const frame: OneOfFrame = { ...item, branch: 0, outBase: 0, matched: [], details: [] }
    this.frames.push(frame)
    this.startBranch(frame)
  }

  /** Try the frame's current branch with its own slice of `out`; a MARK closes it. */
  private startBranch(frame: OneOfFrame): void {
    frame.outBase = this.out.length
    this.push(undefined, MARK, '')
    this.push(frame.value, (frame.node.oneOf as CNode[])[frame.branch], frame.path)
  }

  /** A branch ended: it matched when it added nothing; after the last branch, judge the oneOf. */
  private closeBranch(): void {
    const frame = this.frames[this.frames.length - 1]
    const branchOut = this.out.splice(frame.outBase)
    if (branchOut.length === 0) frame.matched.push(frame.branch)
    else frame.details.push(branchDetail(frame.branch, branchOut))
    const branches = (frame.node.oneOf as CNode[]).length
    if (++frame.branch < branches) {
      this.startBranch(frame)
      return
    }
    this.frames.pop()
    const message = oneOfMessage(frame.path, branches, frame.matched, frame.details)
    if (message !== undefined) this.out.push(message)
  }

  /** One value against one schema node: its own keywords, then its children in order. */
  private visit(v: unknown, node: CNode, path: string): void {
    const { out, careful } = this
    if (careful) {
      const problem = typeof v === 'object' && v !== null ? containerProblem(v) : primitiveProblem(v)
      if (problem !== undefined) {
        out.push(`${path}: ${problem}`)
        return
      }
    }
    if (node.trivial) {
      if (careful) {
        const issue = findJsonIssue(v, path)
        if (issue !== undefined) out.push(`${issue.path}: ${issue.reason}`)
      }
      return
    }
    const kind = kindBit(v)
    if ((node.mask & kind) === 0) {
      out.push(`${path}: expected ${node.typeName}, got ${gotName(v)}`)
      return
    }
    if (kind <= K_STR) this.visitScalar(v, node, path)
    else if (kind === K_OBJ) this.visitObject(v as Record<string, unknown>, node, path)
    else this.visitArray(v as unknown[], node, path)
    if (kind > K_STR && node.oneOf !== null) this.add({ value: v, path, node }, ONEOF, '')
    this.flush()
  }

  private visitScalar(v: unknown, node: CNode, path: string): void {
    const { out } = this
    if (node.integer && !Number.isInteger(v)) out.push(`${path}: expected integer, got ${v}`)
    else if (node.enumValues !== null && !enumAllows(node, v)) {
      const list = node.enumValues.slice(0, 10).map(show).join(', ')
      out.push(`${path}: expected one of ${list}${node.enumValues.length > 10 ? ', …' : ''}; got ${show(v)}`)
    } else if (node.hasConst && v !== node.constValue) {
      out.push(`${path}: expected ${show(node.constValue)}, got ${show(v)}`)
    } else if (node.oneOf !== null) this.add({ value: v, path, node }, ONEOF, '')
  }

  private visitObject(obj: Record<string, unknown>, node: CNode, path: string): void {
    const { careful } = this
    if (careful) {
      const symbols = Object.getOwnPropertySymbols(obj)
      if (symbols.length > 0) this.out.push(`${path}: has a symbol key ${symbols[0].toString()}, which is not JSON`)
    }
    if (node.objectNode) {
      for (let i = 0; i < node.propKeys.length; i++) {
        const key = node.propKeys[i]
        const at = appendKey(path, key)
        if (!Object.hasOwn(obj, key)) {
          if (node.required.includes(key)) this.add(undefined, MESSAGE, `${at}: required property is missing`)
          continue
        }
        const child = node.propNodes[i]
        if (!careful && child.trivial) continue
        this.addMember(obj, key, child, at)
      }
    }
    if (!careful && !node.closed) return
    const keys = careful ? Object.getOwnPropertyNames(obj) : Object.keys(obj)
    for (const key of keys) {
      if (node.objectNode && node.propIndex.has(key)) continue
      const at = appendKey(path, key)
      if (node.closed) this.add(undefined, MESSAGE, `${at}: property is not allowed (additionalProperties: false)`)
      else this.addMember(obj, key, TRIVIAL, at)
    }
  }

  private visitArray(arr: unknown[], node: CNode, path: string): void {
    const { careful } = this
    if (careful) {
      const extra = arrayExtraKey(arr)
      if (extra !== undefined) {
        const shown = typeof extra === 'symbol' ? extra.toString() : JSON.stringify(extra)
        this.out.push(`${path}: is an array with an extra property ${shown}, which is not JSON`)
      }
    }
    const items = node.items ?? TRIVIAL
    if (!careful && items.trivial) return
    for (let i = 0; i < arr.length; i++) this.addMember(arr, i, items, appendIndex(path, i))
  }

  /** A member read (defensively when careful): its problem as a message, or the member as work. */
  private addMember(container: object, key: string | number, child: CNode, at: string): void {
    const member = readMember(container, key, this.careful)
    if (member.problem !== undefined) this.add(undefined, MESSAGE, `${at}: ${member.problem}`)
    else this.add(member.value, child, at)
  }
}

const TRIVIAL: CNode = newNode({})

/** Generated boolean checkers of oneOf branches, compiled on first use. */
const branchChecks = new WeakMap<CNode, (value: unknown) => boolean>()

function branchCheck(node: CNode): (value: unknown) => boolean {
  let check = branchChecks.get(node)
  if (check === undefined) {
    check = generateTrustedCheck(node, checkTrusted) ?? ((value: unknown) => checkTrusted(node, value))
    branchChecks.set(node, check)
  }
  return check
}

/** Generated violation collectors of oneOf branches, compiled on first use. */
const branchCollectors = new WeakMap<CNode, (value: unknown, path: string) => string[]>()

function branchViolations(node: CNode, value: unknown, path: string): string[] {
  let collect = branchCollectors.get(node)
  if (collect === undefined) {
    const generated = generateTrustedCollector(node, collectHelpers)
    collect =
      generated === undefined
        ? (v: unknown, p: string) => collectViolations(node, v, p, false)
        : (v: unknown, p: string) => {
            const out: string[] = []
            generated(v, p, out)
            return out
          }
    branchCollectors.set(node, collect)
  }
  return collect(value, path)
}

/** What generated collectors call for the rare or deep parts (trusted values only). */
const collectHelpers: CollectHelpers = {
  interp(node, value, path, out) {
    for (const violation of collectViolations(node, value, path, false)) out.push(violation)
  },
  oneOf(node, value, path, out) {
    const branches = node.oneOf!
    const matched: number[] = []
    for (let b = 0; b < branches.length; b++) if (branchCheck(branches[b])(value)) matched.push(b)
    if (matched.length === 1) return
    const details =
      matched.length === 0 ? branches.map((branch, b) => branchDetail(b, branchViolations(branch, value, path))) : []
    out.push(oneOfMessage(path, branches.length, matched, details)!)
  },
  got: gotName,
  key: appendKey,
}

// ---------------------------------------------------------------------------------------------

const validators = new WeakMap<object, CompiledJsonSchemaValidator>()

/** Lossless-JSON proof: snapshots are proven by construction, anything else is walked once. */
function proveJson(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return primitiveProblem(value) === undefined
  return isFrozenSnapshot(value) || isJsonValue(value)
}

/**
 * The compiled validator of a supported schema, built once per schema object and cached.
 * Asserts support on first use (throws `JsonSchemaError`). Schemas are treated as immutable afterwards.
 */
export function getJsonSchemaValidator(schema: JsonSchemaNode): CompiledJsonSchemaValidator {
  const cached = validators.get(schema)
  if (cached !== undefined) return cached
  assertSupportedJsonSchema(schema)
  const root = compileNodes(schema)
  // Shallow schemas get generated straight-line code; very deep ones keep the stack interpreter.
  // The code is generated at the first validation, not here: a registry (a gateway listing an
  // upstream's tools) defines many more tools at its start than it calls soon after.
  let check: ((value: unknown) => boolean) | undefined
  const fast = (value: unknown): boolean => {
    check ??= generateTrustedCheck(root, checkTrusted) ?? ((data: unknown) => checkTrusted(root, data))
    return check(value)
  }
  let collect: ReturnType<typeof generateTrustedCollector> | null = null
  const explain = (value: unknown, rootPath: string, proven: boolean): string[] => {
    if (proven && collect === null) collect = generateTrustedCollector(root, collectHelpers)
    if (!proven || collect === undefined || collect === null) return collectViolations(root, value, rootPath, !proven)
    const out: string[] = []
    collect(value, rootPath, out)
    return out
  }
  const validator: CompiledJsonSchemaValidator = {
    isValid: (value) => proveJson(value) && fast(value),
    violations: (value, rootPath = 'value') => explain(value, rootPath, proveJson(value)),
    validate(value, rootPath = 'value') {
      const proven = proveJson(value)
      return proven && fast(value) ? [] : explain(value, rootPath, proven)
    },
  }
  validators.set(schema, Object.freeze(validator))
  return validator
}

/**
 * Every path-qualified violation of `value` against `schema`, empty when valid.
 * Throws `JsonSchemaError` when the schema itself is unsupported. The valid path allocates nothing.
 */
export function validateJsonSchemaValue(schema: JsonSchemaNode, value: unknown): string[] {
  return getJsonSchemaValidator(schema).validate(value)
}
