// OpenAI strict mode (Structured Outputs for function calling): project a tool's parameter
// schema into what strict mode accepts, or say exactly what it cannot express.
import type { JsonObject, JsonValue } from '../contract/json-value.js'
import { appendIndex, appendKey } from '../json/path.js'
import { isRecord } from '../util/is-record.js'

/** Result of projecting one parameter schema. `schema` is usable only when `downgrades` is empty. */
export interface StrictProjection {
  readonly schema: JsonObject
  readonly downgrades: string[]
}

/** Keywords strict mode accepts unchanged on a node (beside the structural ones handled below). */
const PASS_THROUGH = new Set([
  'description',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
])
/** Annotations strict mode does not take; dropping them loses no constraint. */
const DROPPED = new Set(['title', 'default', 'examples', '$schema', '$comment'])
/** Handled structurally. */
const STRUCTURAL = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'oneOf',
  'anyOf',
])
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'])

/** Published limits of strict schemas. */
export const STRICT_LIMITS = Object.freeze({
  maxDepth: 10,
  maxProperties: 5000,
  maxEnumValues: 1000,
  maxStringLength: 120_000,
})

interface Walk {
  readonly downgrades: string[]
  properties: number
  enumValues: number
  stringLength: number
}

/**
 * Project `parameters` (the tool's model-facing JSON Schema) into an OpenAI strict schema:
 * every object closed (the parameter root's implicit openness included), every property
 * required, optional properties made nullable, `oneOf` as `anyOf`, `const` as a one-value
 * `enum`. Whatever strict mode cannot express is listed as `path: reason`.
 */
export function toStrictSchema(parameters: JsonValue, rootPath = 'parameters'): StrictProjection {
  const walk: Walk = { downgrades: [], properties: 0, enumValues: 0, stringLength: 0 }
  if (
    !isRecord<JsonObject>(parameters) ||
    parameters.type !== 'object' ||
    'oneOf' in parameters ||
    'anyOf' in parameters
  ) {
    walk.downgrades.push(`${rootPath}: strict mode needs a plain object schema at the root`)
    return { schema: {}, downgrades: walk.downgrades }
  }
  const schema = convert(parameters, rootPath, walk, 1, true)
  if (walk.properties > STRICT_LIMITS.maxProperties)
    walk.downgrades.push(`${rootPath}: more than ${STRICT_LIMITS.maxProperties} properties in total`)
  if (walk.enumValues > STRICT_LIMITS.maxEnumValues)
    walk.downgrades.push(`${rootPath}: more than ${STRICT_LIMITS.maxEnumValues} enum values in total`)
  if (walk.stringLength > STRICT_LIMITS.maxStringLength)
    walk.downgrades.push(
      `${rootPath}: property names and enum values exceed ${STRICT_LIMITS.maxStringLength} characters`,
    )
  return { schema, downgrades: walk.downgrades }
}

function convert(node: JsonValue, path: string, walk: Walk, depth: number, root = false): JsonObject {
  if (!isRecord<JsonObject>(node)) {
    walk.downgrades.push(`${path}: a ${JSON.stringify(node)} schema cannot be expressed in strict mode`)
    return {}
  }
  const out: JsonObject = {}
  for (const key of Object.keys(node)) {
    if (PASS_THROUGH.has(key)) out[key] = node[key]
    else if (!STRUCTURAL.has(key) && !DROPPED.has(key))
      walk.downgrades.push(`${appendKey(path, key)}: keyword not supported in strict mode`)
  }
  const union = node.oneOf ?? node.anyOf
  if (union !== undefined) {
    if ('oneOf' in node && 'anyOf' in node) walk.downgrades.push(`${path}: both oneOf and anyOf`)
    if ('type' in node || 'enum' in node || 'const' in node || 'properties' in node || 'items' in node) {
      walk.downgrades.push(`${path}: a type or value constraint beside oneOf/anyOf cannot be expressed in strict mode`)
    }
    if (!Array.isArray(union) || union.length === 0) {
      walk.downgrades.push(`${path}: oneOf/anyOf must be a non-empty array`)
      return out
    }
    const keyword = 'oneOf' in node ? 'oneOf' : 'anyOf'
    const branches: JsonValue[] = []
    union.forEach((branch, i) => {
      const converted = convert(branch, appendIndex(appendKey(path, keyword), i), walk, depth)
      // A converted branch that is itself a bare union flattens into this one.
      const keys = Object.keys(converted)
      if (Array.isArray(converted.anyOf) && keys.every((k) => k === 'anyOf' || k === 'description'))
        branches.push(...converted.anyOf)
      else branches.push(converted)
    })
    out.anyOf = branches
    return out
  }

  let values: JsonValue[] | undefined
  if ('enum' in node) {
    if (!Array.isArray(node.enum) || node.enum.length === 0)
      walk.downgrades.push(`${path}.enum: must be a non-empty array`)
    else values = node.enum
  }
  if ('const' in node) {
    if (values === undefined || values.some((v) => v === node.const)) values = [node.const]
    else walk.downgrades.push(`${path}: enum and const admit no common value`)
  }
  if (values !== undefined) {
    walk.enumValues += values.length
    for (const v of values) if (typeof v === 'string') walk.stringLength += v.length
    out.enum = values
  }

  let type: JsonValue | undefined = node.type
  if (type === undefined && values !== undefined) type = inferType(values)
  if (type === undefined) {
    walk.downgrades.push(`${path}: a schema without a type (any JSON value) cannot be expressed in strict mode`)
    return out
  }
  const types = Array.isArray(type) ? type : [type]
  if (types.length === 0 || !types.every((t) => typeof t === 'string' && TYPES.has(t))) {
    walk.downgrades.push(`${path}.type: ${JSON.stringify(type)} is not a JSON Schema type`)
    return out
  }
  out.type = type
  if (types.includes('object')) convertObject(node, out, path, walk, depth, root)
  else if ('properties' in node || 'required' in node || 'additionalProperties' in node) {
    walk.downgrades.push(`${path}: object keywords on a non-object type`)
  }
  if (types.includes('array')) {
    if (node.items === undefined) {
      walk.downgrades.push(`${path}: an array without items (any JSON items) cannot be expressed in strict mode`)
    } else out.items = convert(node.items, appendKey(path, 'items'), walk, depth + 1)
  } else if ('items' in node) walk.downgrades.push(`${path}: items on a non-array type`)
  return out
}

function convertObject(node: JsonObject, out: JsonObject, path: string, walk: Walk, depth: number, root: boolean) {
  if (depth > STRICT_LIMITS.maxDepth)
    walk.downgrades.push(`${path}: nested deeper than ${STRICT_LIMITS.maxDepth} levels`)
  const additional = node.additionalProperties
  // The parameter root is open only because the DSL never closes it; anywhere else openness is meant.
  if (!(additional === false || (additional === undefined && root))) {
    walk.downgrades.push(
      `${path}: an open object (additionalProperties ${additional === undefined ? 'absent' : JSON.stringify(additional)}) cannot be expressed in strict mode`,
    )
  }
  const properties = isRecord<JsonObject>(node.properties) ? node.properties : {}
  if ('properties' in node && !isRecord<JsonObject>(node.properties))
    walk.downgrades.push(`${path}.properties: must be an object`)
  const required = new Set(Array.isArray(node.required) ? node.required.filter((r) => typeof r === 'string') : [])
  const converted: JsonObject = {}
  const names = Object.keys(properties)
  for (const name of names) {
    walk.properties++
    walk.stringLength += name.length
    const propertyPath = appendKey(appendKey(path, 'properties'), name)
    const schema = convert(properties[name], propertyPath, walk, depth + 1)
    Object.defineProperty(converted, name, {
      value: required.has(name) ? schema : nullable(schema),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  out.properties = converted
  out.required = names
  out.additionalProperties = false
}

function inferType(values: readonly JsonValue[]): string | string[] | undefined {
  const types = new Set<string>()
  for (const v of values) {
    if (v === null) types.add('null')
    else if (typeof v === 'string' || typeof v === 'boolean') types.add(typeof v)
    else if (typeof v === 'number') types.add(Number.isInteger(v) ? 'integer' : 'number')
    else return undefined
  }
  if (types.has('number')) types.delete('integer')
  const list = [...types]
  return list.length === 1 ? list[0] : list
}

/** Strict mode's way of saying "optional": the property is required but may be `null`. */
function nullable(schema: JsonObject): JsonObject {
  if (acceptsNull(schema)) return schema
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] }
  if (typeof schema.type === 'string' && schema.enum === undefined) return { ...schema, type: [schema.type, 'null'] }
  const { description, ...rest } = schema
  const wrapped: JsonObject = { anyOf: [rest, { type: 'null' }] }
  if (description !== undefined) wrapped.description = description
  return wrapped
}

/** Whether a schema (raw or projected) admits `null`. A schema without any constraint does. */
export function acceptsNull(schema: JsonValue | undefined): boolean {
  if (!isRecord<JsonObject>(schema)) return schema === true
  const union = schema.oneOf ?? schema.anyOf
  if (Array.isArray(union) && !union.some(acceptsNull)) return false
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return false
  if ('const' in schema && schema.const !== null) return false
  const type = schema.type
  if (type === undefined) return true
  return type === 'null' || (Array.isArray(type) && type.includes('null'))
}

/**
 * Undo the nullable projection on a strict call's arguments: a `null` for an optional property
 * whose own schema never admits `null` can only mean "absent", so the key is removed before the
 * tool validates. Returns the input unchanged when nothing applies.
 */
export function stripStrictNulls(schema: JsonValue, value: JsonValue): JsonValue {
  if (!isRecord<JsonObject>(schema)) return value
  const union = schema.oneOf ?? schema.anyOf
  if (Array.isArray(union)) {
    const branch = pickBranch(union, value)
    return branch === undefined ? value : stripStrictNulls(branch, value)
  }
  if (Array.isArray(value)) {
    if (schema.items === undefined) return value
    let changed = false
    const out = value.map((item) => {
      const next = stripStrictNulls(schema.items as JsonValue, item)
      if (next !== item) changed = true
      return next
    })
    return changed ? out : value
  }
  if (!isRecord<JsonObject>(value) || !isRecord<JsonObject>(schema.properties)) return value
  const properties = schema.properties
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  let out: JsonObject | undefined
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(properties, key)) continue
    const member = value[key]
    const propertySchema = properties[key]
    let next: JsonValue | undefined = member
    if (member === null && !required.has(key) && !acceptsNull(propertySchema)) next = undefined
    else if (member !== null && typeof member === 'object') next = stripStrictNulls(propertySchema, member)
    if (next !== member) {
      out ??= { ...value }
      if (next === undefined) delete out[key]
      else Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true })
    }
  }
  return out ?? value
}

/** The branch a value most plausibly took: the first whose kind matches (objects: whose properties cover its keys). */
function pickBranch(branches: readonly JsonValue[], value: JsonValue): JsonValue | undefined {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
  if (kind !== 'object' && kind !== 'array') return undefined
  let fallback: JsonValue | undefined
  for (const branch of branches) {
    if (!isRecord<JsonObject>(branch)) continue
    const types = Array.isArray(branch.type) ? branch.type : [branch.type]
    if (!types.includes(kind)) continue
    if (kind === 'array') return branch
    const properties = isRecord<JsonObject>(branch.properties) ? branch.properties : {}
    if (Object.keys(value as JsonObject).every((k) => Object.hasOwn(properties, k))) return branch
    fallback ??= branch
  }
  return fallback
}
