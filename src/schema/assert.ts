import type { JsonSchemaNode, JsonSchemaScalar, JsonSchemaType, ObjectJsonSchema } from '../contract/json-schema.js'
import { appendIndex, appendKey } from '../json/path.js'
import { findJsonIssue } from '../json/snapshot.js'
import { isRecord } from '../util/is-record.js'
import { JsonSchemaError } from './errors.js'

/** The seven single-type keywords of the subset. */
export const JSON_SCHEMA_TYPES: readonly JsonSchemaType[] = Object.freeze([
  'object',
  'array',
  'string',
  'number',
  'integer',
  'boolean',
  'null',
])
const TYPES = new Set<string>(JSON_SCHEMA_TYPES)
const KEYWORDS = new Set([
  'type',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'description',
  'title',
  'default',
  'examples',
])
const TYPE_LIST = JSON_SCHEMA_TYPES.map((t) => `"${t}"`).join(', ')

/** Human name of a JSON value's kind, for messages. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer'
  return typeof value
}

/** Whether a scalar satisfies a scalar type keyword (`integer` = finite number without fraction). */
export function scalarMatchesType(value: JsonSchemaScalar, type: JsonSchemaType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number'
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
    default:
      return false
  }
}

function isScalar(value: unknown): value is JsonSchemaScalar {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value)
}

/** Checks enum/const of one node against its (valid) type; shared with the DSL compiler's messages. */
export function scalarConstraintIssues(
  node: Record<string, unknown>,
  path: string,
  type: string | undefined,
): string[] {
  const issues: string[] = []
  const scalarType = type !== undefined && TYPES.has(type) ? (type as JsonSchemaType) : undefined
  const containerType = scalarType === 'object' || scalarType === 'array'
  if (Object.hasOwn(node, 'enum')) {
    const values = node.enum
    if (containerType) issues.push(`${path}: enum is only supported on scalar types, not "${scalarType}"`)
    else if (!Array.isArray(values)) issues.push(`${path}: enum must be an array of scalars`)
    else if (values.length === 0) issues.push(`${path}: enum must not be empty`)
    else {
      for (let i = 0; i < values.length; i++) {
        const v = values[i]
        if (!isScalar(v))
          issues.push(`${path}: enum value ${show(v)} at enum[${i}] is not a string, number, boolean or null`)
        else if (scalarType !== undefined && !scalarMatchesType(v, scalarType)) {
          issues.push(`${path}: enum value ${show(v)} does not match type ${scalarType}`)
        }
      }
    }
  }
  if (Object.hasOwn(node, 'const')) {
    const v = node.const
    if (containerType) issues.push(`${path}: const is only supported on scalar types, not "${scalarType}"`)
    else if (!isScalar(v)) issues.push(`${path}: const value ${show(v)} is not a string, number, boolean or null`)
    else if (scalarType !== undefined && !scalarMatchesType(v, scalarType)) {
      issues.push(`${path}: const value ${show(v)} does not match type ${scalarType}`)
    }
  }
  return issues
}

/**
 * Every reason `schema` is outside the enforced subset, path-qualified (`schema.properties.x`),
 * empty when supported. A schema that is not lossless JSON reports only its first JSON problem (its
 * members cannot be read safely past that point).
 */
export function collectJsonSchemaIssues(schema: unknown, rootPath = 'schema'): string[] {
  const jsonIssue = findJsonIssue(schema, rootPath)
  if (jsonIssue !== undefined) return [`${jsonIssue.path}: ${jsonIssue.reason}`]
  const issues: string[] = []
  const nodes: unknown[] = [schema]
  const paths: string[] = [rootPath]
  while (nodes.length > 0) {
    const node = nodes.pop()
    const path = paths.pop()!
    if (!isRecord(node)) {
      const hint = typeof node === 'boolean' ? ' (boolean schemas are not supported; use {} for any value)' : ''
      issues.push(`${path}: expected a schema object, got ${kindOf(node)}${hint}`)
      continue
    }
    for (const key of Object.keys(node)) {
      if (!KEYWORDS.has(key)) issues.push(`${path}: unsupported keyword ${show(key)}`)
    }
    let type: string | undefined
    if (Object.hasOwn(node, 'type')) {
      const t = node.type
      if (Array.isArray(t)) issues.push(`${path}.type: type arrays are not supported (use oneOf)`)
      else if (typeof t !== 'string' || !TYPES.has(t))
        issues.push(`${path}.type: ${show(t)} is not one of ${TYPE_LIST}`)
      else type = t
    }
    for (const key of ['description', 'title']) {
      if (Object.hasOwn(node, key) && typeof node[key] !== 'string') issues.push(`${path}.${key}: must be a string`)
    }
    const isObject = type === 'object'
    let properties: Record<string, unknown> | undefined
    if (Object.hasOwn(node, 'properties')) {
      const props = node.properties
      if (!isObject) issues.push(`${path}.properties: requires type "object"`)
      if (!isRecord(props)) issues.push(`${path}.properties: must be an object mapping names to schemas`)
      else {
        properties = props
        const keys = Object.keys(props)
        for (let i = keys.length - 1; i >= 0; i--) {
          nodes.push(props[keys[i]])
          paths.push(appendKey(`${path}.properties`, keys[i]))
        }
      }
    }
    if (Object.hasOwn(node, 'required')) {
      const required = node.required
      if (!isObject) issues.push(`${path}.required: requires type "object"`)
      if (!Array.isArray(required)) issues.push(`${path}.required: must be an array of property names`)
      else {
        const seen = new Set<string>()
        for (let i = 0; i < required.length; i++) {
          const name = required[i]
          const at = appendIndex(`${path}.required`, i)
          if (typeof name !== 'string') issues.push(`${at}: must be a string, got ${kindOf(name)}`)
          else if (seen.has(name)) issues.push(`${at}: duplicate required property ${show(name)}`)
          else {
            seen.add(name)
            if (properties === undefined || !Object.hasOwn(properties, name)) {
              issues.push(`${at}: required property ${show(name)} is not declared in properties`)
            }
          }
        }
      }
    }
    if (Object.hasOwn(node, 'additionalProperties')) {
      if (!isObject) issues.push(`${path}.additionalProperties: requires type "object"`)
      if (typeof node.additionalProperties !== 'boolean') {
        issues.push(
          `${path}.additionalProperties: must be a boolean (schema-valued additionalProperties is not supported)`,
        )
      }
    }
    if (Object.hasOwn(node, 'items')) {
      const items = node.items
      if (type !== 'array') issues.push(`${path}.items: requires type "array"`)
      if (Array.isArray(items)) issues.push(`${path}.items: tuple items are not supported (use a single schema)`)
      else {
        nodes.push(items)
        paths.push(`${path}.items`)
      }
    }
    issues.push(...scalarConstraintIssues(node, path, type))
    if (Object.hasOwn(node, 'oneOf')) {
      const branches = node.oneOf
      if (!Array.isArray(branches)) issues.push(`${path}.oneOf: must be an array of at least two schemas`)
      else {
        if (branches.length < 2) {
          issues.push(`${path}.oneOf: needs at least two branches, got ${branches.length}`)
        }
        for (let i = branches.length - 1; i >= 0; i--) {
          nodes.push(branches[i])
          paths.push(appendIndex(`${path}.oneOf`, i))
        }
      }
    }
  }
  return issues
}

/** Schemas already proven supported; schemas are treated as immutable once asserted. */
const supported = new WeakSet<object>()

/** Whether `schema` was already asserted supported (cached per schema object). */
export function isKnownSupportedJsonSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && supported.has(schema)
}

/**
 * Assert that `schema` is inside the enforced raw subset. Any JSON root type is allowed.
 * Throws {@link JsonSchemaError} listing every offending path. Cached per schema object.
 */
export function assertSupportedJsonSchema(schema: unknown): asserts schema is JsonSchemaNode {
  if (typeof schema === 'object' && schema !== null && supported.has(schema)) return
  const issues = collectJsonSchemaIssues(schema)
  if (issues.length > 0) throw new JsonSchemaError(issues)
  supported.add(schema as object)
}

/** Like {@link assertSupportedJsonSchema}, and additionally require an object root. */
export function assertObjectJsonSchema(schema: unknown): asserts schema is ObjectJsonSchema {
  const known = typeof schema === 'object' && schema !== null && supported.has(schema)
  const issues = known ? [] : collectJsonSchemaIssues(schema)
  if (isRecord(schema) && (schema as { type?: unknown }).type !== 'object') {
    const t = (schema as { type?: unknown }).type
    issues.unshift(
      `schema.type: an object-rooted schema must declare type "object", got ${t === undefined ? 'no type' : show(t)}`,
    )
  } else if (!isRecord(schema) && issues.length === 0) {
    issues.push(`schema: expected an object schema, got ${kindOf(schema)}`)
  }
  if (issues.length > 0) throw new JsonSchemaError(issues)
  supported.add(schema as object)
}
