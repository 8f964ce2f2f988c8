import type { JsonSchemaNode, ObjectJsonSchema } from '../contract/json-schema.js'
import { appendIndex, appendKey } from '../json/path.js'
import { findJsonIssue, snapshotJsonValue } from '../json/snapshot.js'
import { isRecord } from '../util/is-record.js'
import { assertSupportedJsonSchema, kindOf, scalarConstraintIssues } from './assert.js'
import { JsonSchemaError } from './errors.js'
import type { ParameterSchemaSpec, ValueSchemaSpec } from './spec.js'

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null'])
const SPEC_TYPES = 'string, number, integer, boolean, null, array, object, json'
const ANNOTATIONS = ['description', 'title']

type Out = Record<string, unknown>

function setOwn(target: Out, key: string, value: unknown): void {
  // Property names such as `__proto__` stay ordinary own keys of the compiled schema.
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

interface Task {
  spec: unknown
  path: string
  /** Whether the node is a property (of an object spec or the parameter root): `required` is allowed. */
  property: boolean
  /** Receives the compiled node. */
  attach(node: Out): void
}

/**
 * Compile a record of property specs (object `properties` or the parameter root) into `properties` and
 * `required`, queueing each property spec.
 */
function queueProperties(
  props: Record<string, unknown>,
  path: string,
  tasks: Task[],
): {
  properties: Out
  required: string[]
} {
  const properties: Out = {}
  const required: string[] = []
  const keys = Object.keys(props)
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]
    const spec = props[key]
    const at = appendKey(path, key)
    if (isRecord(spec) && spec.required === true) required.push(key)
    tasks.push({ spec, path: at, property: true, attach: (node) => setOwn(properties, key, node) })
  }
  // Tasks run LIFO, so the reversed queue attaches properties in declaration order.
  required.reverse()
  return { properties, required }
}

/** Compile the node graph rooted at `tasks`, reporting every offending path. */
function run(tasks: Task[], issues: string[]): void {
  while (tasks.length > 0) {
    const { spec, path, property, attach } = tasks.pop()!
    if (!isRecord(spec)) {
      issues.push(`${path}: expected a schema spec object, got ${kindOf(spec)}`)
      continue
    }
    const node: Out = {}
    // `type` problems are reported on their own, never also as an unsupported key.
    const allowed = new Set([...ANNOTATIONS, 'type'])
    if (property) {
      allowed.add('required')
      if (Object.hasOwn(spec, 'required') && spec.required !== true) {
        issues.push(`${path}.required: must be true or omitted, got ${JSON.stringify(spec.required)}`)
      }
    }
    for (const key of ANNOTATIONS) {
      if (Object.hasOwn(spec, key)) {
        if (typeof spec[key] !== 'string') issues.push(`${path}.${key}: must be a string`)
        else node[key] = spec[key]
      }
    }
    const hasOneOf = Object.hasOwn(spec, 'oneOf')
    const type = spec.type
    if (hasOneOf) {
      allowed.add('oneOf')
      if (Object.hasOwn(spec, 'type')) issues.push(`${path}: a oneOf spec must not also declare "type"`)
      const branches = spec.oneOf
      if (!Array.isArray(branches)) issues.push(`${path}.oneOf: must be an array of at least two specs`)
      else {
        if (branches.length < 2) issues.push(`${path}.oneOf: needs at least two branches, got ${branches.length}`)
        const compiled: unknown[] = new Array(branches.length)
        node.oneOf = compiled
        for (let i = branches.length - 1; i >= 0; i--) {
          tasks.push({
            spec: branches[i],
            path: appendIndex(`${path}.oneOf`, i),
            property: false,
            attach: (child) => {
              compiled[i] = child
            },
          })
        }
      }
    } else if (typeof type !== 'string') {
      issues.push(
        Object.hasOwn(spec, 'type')
          ? `${path}.type: ${JSON.stringify(type)} is not one of ${SPEC_TYPES}`
          : `${path}: missing "type" (one of ${SPEC_TYPES}) or "oneOf"`,
      )
    } else if (SCALAR_TYPES.has(type)) {
      allowed.add('type').add('enum').add('const')
      node.type = type
      const constraintIssues = scalarConstraintIssues(spec, path, type)
      issues.push(...constraintIssues)
      if (Object.hasOwn(spec, 'enum') && Array.isArray(spec.enum)) node.enum = [...spec.enum]
      if (Object.hasOwn(spec, 'const')) node.const = spec.const
    } else if (type === 'json') {
      allowed.add('type')
    } else if (type === 'array') {
      allowed.add('type').add('items')
      node.type = 'array'
      if (Object.hasOwn(spec, 'items')) {
        tasks.push({
          spec: spec.items,
          path: `${path}.items`,
          property: false,
          attach: (child) => {
            node.items = child
          },
        })
      }
    } else if (type === 'object') {
      allowed.add('type').add('properties').add('additionalProperties')
      node.type = 'object'
      const props = spec.properties
      if (!Object.hasOwn(spec, 'properties')) issues.push(`${path}: an object spec must declare "properties"`)
      else if (!isRecord(props)) issues.push(`${path}.properties: must be an object mapping names to specs`)
      else {
        const { properties, required } = queueProperties(props, `${path}.properties`, tasks)
        node.properties = properties
        if (required.length > 0) node.required = required
      }
      if (!Object.hasOwn(spec, 'additionalProperties')) {
        issues.push(`${path}: an object spec must declare additionalProperties: true or false`)
      } else if (typeof spec.additionalProperties !== 'boolean') {
        issues.push(`${path}.additionalProperties: must be true or false`)
      } else node.additionalProperties = spec.additionalProperties
    } else {
      issues.push(`${path}.type: ${JSON.stringify(type)} is not one of ${SPEC_TYPES}`)
    }
    for (const key of Object.keys(spec)) {
      if (!allowed.has(key)) issues.push(`${path}: unsupported key ${JSON.stringify(key)}`)
    }
    attach(node)
  }
}

/** Freeze the compiled output and prove it against the raw subset. */
function finish<T extends JsonSchemaNode>(out: Out): T {
  const schema = snapshotJsonValue(out) as unknown as T
  assertSupportedJsonSchema(schema)
  return schema
}

function specIssuesOrThrow(spec: unknown, path: string): void {
  const issue = findJsonIssue(spec, path)
  if (issue !== undefined) throw new JsonSchemaError([`${issue.path}: ${issue.reason}`], 'schema spec')
}

const valueCache = new WeakMap<object, JsonSchemaNode>()
const parameterCache = new WeakMap<object, ObjectJsonSchema>()

/**
 * Compile an author value spec to the raw subset. Validates the spec with every offending
 * path (`JsonSchemaError`); the result is frozen, lossless JSON and passes `assertSupportedJsonSchema`.
 * Cached per spec object.
 */
export function valueSchemaSpecToJsonSchema(spec: ValueSchemaSpec, rootPath = 'schema'): JsonSchemaNode {
  const cached = typeof spec === 'object' && spec !== null ? valueCache.get(spec) : undefined
  if (cached !== undefined) return cached
  specIssuesOrThrow(spec, rootPath)
  const issues: string[] = []
  let root: Out = {}
  run(
    [
      {
        spec,
        path: rootPath,
        property: false,
        attach: (node) => {
          root = node
        },
      },
    ],
    issues,
  )
  if (issues.length > 0) throw new JsonSchemaError(issues, 'schema spec')
  const schema = finish<JsonSchemaNode>(root)
  valueCache.set(spec, schema)
  return schema
}

/**
 * Compile a parameter spec — the implicit open object root — to `{ type: 'object', properties, required? }`
 *. `required` is omitted when empty; `additionalProperties` is omitted (open by default).
 */
export function parameterSchemaSpecToJsonSchema(
  parameters: ParameterSchemaSpec,
  rootPath = 'parameters',
): ObjectJsonSchema {
  const cached = typeof parameters === 'object' && parameters !== null ? parameterCache.get(parameters) : undefined
  if (cached !== undefined) return cached
  specIssuesOrThrow(parameters, rootPath)
  if (!isRecord(parameters)) {
    throw new JsonSchemaError(
      [`${rootPath}: expected an object mapping parameter names to specs, got ${kindOf(parameters)}`],
      'schema spec',
    )
  }
  const issues: string[] = []
  const tasks: Task[] = []
  const { properties, required } = queueProperties(parameters, rootPath, tasks)
  run(tasks, issues)
  if (issues.length > 0) throw new JsonSchemaError(issues, 'schema spec')
  const root: Out = { type: 'object', properties }
  if (required.length > 0) root.required = required
  const schema = finish<ObjectJsonSchema>(root)
  parameterCache.set(parameters, schema)
  return schema
}
