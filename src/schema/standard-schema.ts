import type { StandardJSONSchemaV1, StandardTypedV1 } from '@standard-schema/spec'
import type { JsonSchemaNode, ObjectJsonSchema } from '../contract/json-schema.js'
import { appendIndex, appendKey } from '../json/path.js'
import { findJsonIssue, snapshotJsonValue } from '../json/snapshot.js'
import { isRecord } from '../util/is-record.js'
import { assertSupportedJsonSchema, collectJsonSchemaIssues, kindOf } from './assert.js'
import { JsonSchemaError } from './errors.js'

/**
 * A schema object of any library implementing Standard JSON Schema (`~standard.jsonSchema`): zod 4,
 * arktype, valibot through `toStandardJsonSchema`. toolgate reads its JSON Schema once, at
 * `defineTool`, and enforces it with its own validator; the library's `validate` is never called.
 */
export type StandardJsonSchema<Input = unknown, Output = Input> = StandardJSONSchemaV1<Input, Output>

/** The output type of a Standard Schema (what `execute` receives or returns). */
export type InferStandardOutput<S extends StandardTypedV1> = StandardTypedV1.InferOutput<S>

type Node = Record<string, unknown>

/** Whether `value` is a Standard Schema (or Standard Typed) object rather than a toolgate spec. */
export function isStandardSchema(value: unknown): value is StandardTypedV1 {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && isRecord<Node>(read(value))
}

function read(value: object): unknown {
  try {
    return (value as { '~standard'?: unknown })['~standard']
  } catch {
    return undefined
  }
}

// The target every Standard JSON Schema implementer is asked to support first.
const TARGET = { target: 'draft-2020-12' } as const
const SCALAR_KEYS = new Set(['enum', 'const'])
// Keys that only structure the document; the subset needs none of them once references are inlined.
const DOCUMENT_KEYS = new Set(['$schema', '$id', '$defs', 'definitions', '$comment'])
const BY_TYPE: Record<string, readonly string[]> = {
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items'],
}

/**
 * The JSON Schema of a Standard JSON Schema object, converted into the enforced subset. Uses the
 * schema's *output* side: the arguments `execute` receives (and the value it returns) are the JSON
 * toolgate validated, unchanged, so the JSON Schema must describe the output type. Every part the
 * subset cannot express is reported with its path (`JsonSchemaError`); nothing is dropped silently,
 * except integer bounds that only restate the safe-integer range.
 */
export function standardSchemaToJsonSchema(schema: StandardTypedV1, path: string, root: 'object'): ObjectJsonSchema
export function standardSchemaToJsonSchema(schema: StandardTypedV1, path: string, root?: 'any'): JsonSchemaNode
export function standardSchemaToJsonSchema(
  schema: StandardTypedV1,
  path: string,
  root: 'object' | 'any' = 'any',
): JsonSchemaNode {
  const cache = root === 'object' ? objectCache : valueCache
  const cached = cache.get(schema)
  if (cached !== undefined) return cached
  const props = read(schema) as Node
  const vendor = typeof props.vendor === 'string' ? props.vendor : 'Standard Schema'
  const subject = `${vendor} schema`
  const converter = props.jsonSchema
  if (!isRecord<Node>(converter) || typeof converter.output !== 'function') {
    const hint = vendor === 'valibot' ? ' (wrap it with toStandardJsonSchema() from @valibot/to-json-schema)' : ''
    throw new JsonSchemaError(
      [
        `${path}: this ${vendor} schema implements Standard Schema but not Standard JSON Schema (~standard.jsonSchema), so there is no JSON Schema to enforce${hint}`,
      ],
      subject,
    )
  }
  let raw: unknown
  try {
    raw = (converter.output as StandardJSONSchemaV1.Converter['output']).call(converter, TARGET)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new JsonSchemaError([`${path}: ${vendor} cannot express this schema as JSON Schema: ${reason}`], subject)
  }
  // Some converters tag the document they return with non-enumerable members (zod: `~standard`).
  if (isRecord<Node>(raw)) raw = Object.fromEntries(Object.entries(raw))
  const jsonIssue = findJsonIssue(raw, path)
  if (jsonIssue !== undefined) throw new JsonSchemaError([`${jsonIssue.path}: ${jsonIssue.reason}`], subject)
  const issues: string[] = []
  const defs = isRecord<Node>(raw) ? { ...asRecord(raw.definitions), ...asRecord(raw.$defs) } : {}
  const converted = normalize(raw, path, { defs, resolving: new Set(), issues })
  if (root === 'object' && !(isRecord<Node>(converted) && converted.type === 'object')) {
    issues.unshift(
      `${path}: tool parameters must be an object schema, got ${isRecord<Node>(converted) && typeof converted.type === 'string' ? `type "${converted.type}"` : kindOf(converted)}`,
    )
  }
  issues.push(...collectJsonSchemaIssues(converted, path))
  if (issues.length > 0) throw new JsonSchemaError(issues, subject)
  const frozen = snapshotJsonValue(converted, path) as unknown as JsonSchemaNode
  assertSupportedJsonSchema(frozen)
  cache.set(schema, frozen)
  return frozen
}

const objectCache = new WeakMap<object, ObjectJsonSchema>()
const valueCache = new WeakMap<object, JsonSchemaNode>()

function asRecord(value: unknown): Node {
  return isRecord<Node>(value) ? value : {}
}

interface Walk {
  readonly defs: Node
  /** References being inlined on the current branch: seeing one again means recursion. */
  readonly resolving: Set<string>
  readonly issues: string[]
}

function normalize(node: unknown, path: string, walk: Walk): unknown {
  if (!isRecord<Node>(node)) return node
  const ref = node.$ref
  if (ref !== undefined) return inline(node, ref, path, walk)
  const out: Node = {}
  for (const key of Object.keys(node)) {
    if (DOCUMENT_KEYS.has(key) || key === 'anyOf') continue
    const value = node[key]
    if (key === 'properties' && isRecord<Node>(value)) {
      const properties: Node = {}
      for (const name of Object.keys(value)) {
        define(properties, name, normalize(value[name], appendKey(`${path}.properties`, name), walk))
      }
      out.properties = properties
    } else if (key === 'items' && isRecord<Node>(value)) out.items = normalize(value, `${path}.items`, walk)
    else if (key === 'additionalProperties' && isRecord<Node>(value)) {
      // `{}` (any value) is JSON Schema's open default, spelled as a schema.
      out.additionalProperties =
        Object.keys(value).length === 0 ? true : normalize(value, `${path}.additionalProperties`, walk)
    } else if (key === 'oneOf' && Array.isArray(value)) {
      out.oneOf = value.map((branch, i) => normalize(branch, appendIndex(`${path}.oneOf`, i), walk))
    } else define(out, key, value)
  }
  if (out.type === 'integer') {
    // zod states the safe-integer range on every integer; JSON integers beyond it are not exact anyway.
    if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum
    if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum
  }
  if (Array.isArray(out.type)) splitTypes(out, path, walk)
  if (Object.hasOwn(node, 'anyOf')) anyOf(out, node.anyOf, path, walk)
  return out
}

function define(target: Node, key: string, value: unknown): void {
  // Property names such as `__proto__` stay ordinary own keys.
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/** Inline a local reference (`#/$defs/Name`); recursion cannot be expressed without references. */
function inline(node: Node, ref: unknown, path: string, walk: Walk): unknown {
  if (ref === '#') {
    walk.issues.push(
      `${path}: recursive schema ("#" refers to the root) is not supported: the subset has no references`,
    )
    return {}
  }
  const match = typeof ref === 'string' ? /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref) : null
  const name = match?.[1]?.replaceAll('~1', '/').replaceAll('~0', '~')
  if (name === undefined || !Object.hasOwn(walk.defs, name)) {
    walk.issues.push(`${path}.$ref: ${JSON.stringify(ref)} is not a local definition`)
    return {}
  }
  if (walk.resolving.has(name)) {
    walk.issues.push(
      `${path}: recursive schema (${JSON.stringify(ref)} refers to itself) is not supported: the subset has no references`,
    )
    return {}
  }
  walk.resolving.add(name)
  const { $ref: _ref, ...siblings } = node
  const target = walk.defs[name]
  const resolved = normalize(isRecord<Node>(target) ? { ...target, ...siblings } : target, path, walk)
  walk.resolving.delete(name)
  return resolved
}

/** `type: ["string", "null"]` becomes a `oneOf` of single-type branches (types never overlap, except number/integer). */
function splitTypes(out: Node, path: string, walk: Walk): void {
  const types = out.type as unknown[]
  if (types.some((t) => typeof t !== 'string')) return // reported by the subset check
  if (types.includes('number') && types.includes('integer')) {
    walk.issues.push(`${path}.type: "number" and "integer" overlap; the subset has no type arrays (use "number")`)
    return
  }
  if (Object.hasOwn(out, 'oneOf')) {
    walk.issues.push(`${path}: a type array beside oneOf cannot be expressed`)
    return
  }
  delete out.type
  const branches: Node[] = []
  for (const type of types as string[]) {
    const branch: Node = { type }
    for (const key of BY_TYPE[type] ?? []) if (Object.hasOwn(out, key)) branch[key] = out[key]
    if (type !== 'object' && type !== 'array') {
      if (Array.isArray(out.enum)) {
        const values = out.enum.filter((v) => matchesType(v, type))
        if (values.length === 0) continue
        branch.enum = values
      }
      if (Object.hasOwn(out, 'const')) {
        if (!matchesType(out.const, type)) continue
        branch.const = out.const
      }
    }
    branches.push(branch)
  }
  for (const key of [...SCALAR_KEYS, ...BY_TYPE.object, ...BY_TYPE.array]) delete out[key]
  if (branches.length === 1) Object.assign(out, branches[0])
  else out.oneOf = branches
}

function matchesType(value: unknown, type: string): boolean {
  if (type === 'null') return value === null
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value)
  return typeof value === type
}

/** `anyOf` is expressible as the subset's `oneOf` only when no value can match two branches. */
function anyOf(out: Node, raw: unknown, path: string, walk: Walk): void {
  if (!Array.isArray(raw)) {
    walk.issues.push(`${path}.anyOf: must be an array of schemas`)
    return
  }
  const branches = raw.map((branch, i) => normalize(branch, appendIndex(`${path}.anyOf`, i), walk))
  if (Object.hasOwn(out, 'oneOf') || Object.hasOwn(out, 'type')) {
    walk.issues.push(`${path}.anyOf: anyOf beside type or oneOf cannot be expressed`)
    return
  }
  if (branches.length === 1 && isRecord<Node>(branches[0])) {
    for (const [key, value] of Object.entries(branches[0])) if (!Object.hasOwn(out, key)) define(out, key, value)
    return
  }
  for (let i = 0; i < branches.length; i++) {
    for (let j = i + 1; j < branches.length; j++) {
      if (!disjoint(branches[i], branches[j])) {
        walk.issues.push(
          `${path}.anyOf: branches ${i} and ${j} can match the same value; the subset only has oneOf (exactly one branch), so make the branches exclusive (distinct types, or a discriminating const property)`,
        )
        return
      }
    }
  }
  out.oneOf = branches
}

/** Whether no JSON value can match both schemas (decided conservatively: `false` when unsure). */
function disjoint(a: unknown, b: unknown): boolean {
  if (!isRecord<Node>(a) || !isRecord<Node>(b)) return false
  if (Array.isArray(a.oneOf)) return a.oneOf.every((branch) => disjoint(branch, b))
  if (Array.isArray(b.oneOf)) return b.oneOf.every((branch) => disjoint(a, branch))
  const va = valuesOf(a)
  const vb = valuesOf(b)
  if (va !== undefined && vb !== undefined) return va.every((v) => !vb.includes(v))
  if (typeof a.type !== 'string' || typeof b.type !== 'string') return false
  const numeric = (t: string) => t === 'number' || t === 'integer'
  if (a.type !== b.type && !(numeric(a.type) && numeric(b.type))) return true
  if (a.type !== 'object') return false
  // Objects that require the same property with different constant values (a discriminator).
  const pa = asRecord(a.properties)
  const pb = asRecord(b.properties)
  const ra = Array.isArray(a.required) ? a.required : []
  const rb = Array.isArray(b.required) ? b.required : []
  return ra.some((key) => typeof key === 'string' && rb.includes(key) && disjoint(pa[key], pb[key]))
}

function valuesOf(node: Node): unknown[] | undefined {
  if (Object.hasOwn(node, 'const')) return [node.const]
  return Array.isArray(node.enum) ? node.enum : undefined
}
