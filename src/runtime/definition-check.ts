import type { JsonSchemaNode } from '../contract/json-schema.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolDefinition, ToolOutputDefinition } from '../contract/tool-definition.js'
import { ToolgateError } from '../errors/toolgate-error.js'
import { jsonDepthExceeds, snapshotJsonValue } from '../json/index.js'
import { assertSupportedJsonSchema } from '../schema/assert.js'
import { snapshotToolMeta } from '../schema/tool-meta.js'
import { getJsonSchemaValidator } from '../schema/validator.js'
import { describeThrown } from './results.js'
import { readInherited, UNREADABLE } from './untrusted.js'

/** A registration the registry refused; the registry is left exactly as it was. */
export class ToolRegistrationError extends ToolgateError {
  readonly code = 'INVALID_REGISTRATION' as const
  readonly issues: readonly string[]
  constructor(subject: string, issues: readonly string[]) {
    super(`Cannot register ${subject}:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`)
    this.name = 'ToolRegistrationError'
    this.issues = issues
  }
}

/**
 * Deepest container nesting a registered schema (`parameters`, `output.schema`) may have. The
 * model-facing projection is serialized with the engine's recursive JSON.stringify, which fails
 * somewhere past a few thousand levels depending on the stack left; real schemas stay well under
 * 50. Refusing at registration keeps one deep schema from breaking `schemas()` for every tool.
 */
export const MAX_SCHEMA_DEPTH = 256

const optionalCallbacks = ['finalizeContent', 'isConcurrencySafe', 'listedFor', 'presentCall', 'presentResult'] as const

/** Read one field for the snapshot: each field of the definition is read exactly once, here. */
function field(source: object, key: string, path: string, issues: string[]): unknown {
  const value = readInherited(source, key)
  if (value === UNREADABLE) {
    issues.push(`${path}: could not be read (reading it threw)`)
    return undefined
  }
  return value
}

function snapshotSchema(value: unknown, path: string, issues: string[]): JsonValue | undefined {
  let snapshot: JsonValue
  try {
    snapshot = snapshotJsonValue(value, path)
  } catch (error) {
    issues.push(describeThrown(error))
    return undefined
  }
  if (jsonDepthExceeds(snapshot, MAX_SCHEMA_DEPTH)) {
    issues.push(`${path}: nests deeper than ${MAX_SCHEMA_DEPTH} levels, which toolgate does not serve to models`)
    return undefined
  }
  return snapshot
}

/**
 * Checks the semantic contract of a definition, returns every issue at once, and
 * returns a frozen snapshot: every field is read exactly once (getters run once, inherited
 * members included), so what was checked is what runs — a `name` getter cannot answer one
 * thing to the check and another to the registry. Callbacks keep their function identity and
 * run with the snapshot as `this`. Raw `parameters` only need to be lossless JSON: they are
 * the model-facing schema and may use any JSON Schema dialect (MCP servers do); `defineTool`
 * tools validate their own args.
 */
export function checkDefinition(definition: unknown): ToolDefinition {
  if (typeof definition !== 'object' || definition === null) {
    throw new ToolRegistrationError('a tool', ['definition: expected an object'])
  }
  const issues: string[] = []
  const name = field(definition, 'name', 'definition.name', issues)
  const description = field(definition, 'description', 'definition.description', issues)
  const rawParameters = field(definition, 'parameters', 'definition.parameters', issues)
  const execute = field(definition, 'execute', 'definition.execute', issues)
  const output = field(definition, 'output', 'definition.output', issues)
  const timeoutMs = field(definition, 'timeoutMs', 'definition.timeoutMs', issues)
  const idleTimeoutMs = field(definition, 'idleTimeoutMs', 'definition.idleTimeoutMs', issues)
  const needsApproval = field(definition, 'needsApproval', 'definition.needsApproval', issues)
  const defer = field(definition, 'defer', 'definition.defer', issues)
  const rawMeta = field(definition, 'meta', 'definition.meta', issues)
  const callbacks: Partial<Record<(typeof optionalCallbacks)[number], unknown>> = {}
  for (const key of optionalCallbacks) callbacks[key] = field(definition, key, `definition.${key}`, issues)

  const subject = typeof name === 'string' ? `tool "${name}"` : 'a tool'
  if (typeof name !== 'string' || name.length === 0) {
    if (!issues.includes('definition.name: could not be read (reading it threw)'))
      issues.push('definition.name: expected a non-empty string')
  }
  if (typeof description !== 'string') issues.push('definition.description: expected a string')
  const parameters = snapshotSchema(rawParameters, 'definition.parameters', issues)
  if (typeof execute !== 'function') issues.push('definition.execute: expected a function')
  let checkedOutput: ToolOutputDefinition | undefined
  if (typeof output !== 'object' || output === null) {
    issues.push('definition.output: required; declare { schema, render } for the canonical value')
  } else {
    const rawSchema = field(output, 'schema', 'definition.output.schema', issues)
    const render = field(output, 'render', 'definition.output.render', issues)
    const presentationMeta = field(output, 'presentationMeta', 'definition.output.presentationMeta', issues)
    const schema = snapshotSchema(rawSchema, 'definition.output.schema', issues)
    if (schema !== undefined) {
      try {
        assertSupportedJsonSchema(schema)
      } catch (error) {
        const nested = (error as { issues?: unknown }).issues
        if (Array.isArray(nested)) for (const issue of nested) issues.push(`definition.output.${String(issue)}`)
        else issues.push(`definition.output.schema: ${describeThrown(error)}`)
      }
    }
    if (typeof render !== 'function') issues.push('definition.output.render: expected a function')
    if (presentationMeta !== undefined && typeof presentationMeta !== 'function') {
      issues.push('definition.output.presentationMeta: expected a function when present')
    }
    const out: Record<string, unknown> = { schema, render }
    if (presentationMeta !== undefined) out.presentationMeta = presentationMeta
    checkedOutput = Object.freeze(out) as unknown as ToolOutputDefinition
  }
  for (const key of optionalCallbacks) {
    if (callbacks[key] !== undefined && typeof callbacks[key] !== 'function')
      issues.push(`definition.${key}: expected a function when present`)
  }
  if (needsApproval !== undefined && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    issues.push('definition.needsApproval: expected a boolean or a function (args, exec) => boolean | string')
  }
  if (defer !== undefined && typeof defer !== 'boolean')
    issues.push('definition.defer: expected a boolean when present')
  const checkedMeta = snapshotToolMeta(rawMeta, 'definition.meta')
  issues.push(...checkedMeta.issues)
  const budgets = { timeoutMs, idleTimeoutMs }
  for (const [key, ms] of Object.entries(budgets)) {
    if (ms !== undefined && !(typeof ms === 'number' && Number.isFinite(ms) && ms > 0)) {
      const shown = typeof ms === 'number' ? String(ms) : `a ${typeof ms}`
      issues.push(`definition.${key}: expected a positive finite number of milliseconds, got ${shown}`)
    }
  }
  if (issues.length) throw new ToolRegistrationError(subject, issues)
  const snapshot: Record<string, unknown> = { name, description, parameters, output: checkedOutput, execute }
  if (timeoutMs !== undefined) snapshot.timeoutMs = timeoutMs
  if (idleTimeoutMs !== undefined) snapshot.idleTimeoutMs = idleTimeoutMs
  if (needsApproval !== undefined) snapshot.needsApproval = needsApproval
  if (defer !== undefined) snapshot.defer = defer
  if (checkedMeta.meta !== undefined) snapshot.meta = checkedMeta.meta
  for (const key of optionalCallbacks) if (callbacks[key] !== undefined) snapshot[key] = callbacks[key]
  const checked = Object.freeze(snapshot) as unknown as ToolDefinition
  // Compile the output validator now so the per-call path only looks it up.
  getJsonSchemaValidator(checked.output.schema as JsonSchemaNode)
  return checked
}
