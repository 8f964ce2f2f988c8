import { RUN_CODE_NAME } from '../code-mode/constants.js'
import { snapshotJsonValue } from '../json/index.js'
import { assertSupportedJsonSchema } from '../schema/assert.js'
import type { ToolDefinition } from '../schema/tool-definition.js'
import { getJsonSchemaValidator } from '../schema/validator.js'

/** A registration the registry refused; the registry is left exactly as it was. */
export class ToolRegistrationError extends Error {
  readonly code = 'INVALID_REGISTRATION'
  readonly issues: readonly string[]
  constructor(subject: string, issues: readonly string[]) {
    super(`Cannot register ${subject}:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`)
    this.name = 'ToolRegistrationError'
    this.issues = issues
  }
}

const optionalCallbacks = ['finalizeContent', 'isConcurrencySafe', 'presentCall', 'presentResult'] as const

/**
 * Checks the semantic contract of a definition (R-REG-3) and returns every issue at once.
 * Raw `parameters` only need to be lossless JSON: they are the model-facing schema and may
 * use any JSON Schema dialect (MCP servers do); `defineTool` tools validate their own args.
 */
export function checkDefinition(definition: unknown): ToolDefinition {
  if (typeof definition !== 'object' || definition === null) {
    throw new ToolRegistrationError('a tool', ['definition: expected an object'])
  }
  const d = definition as Record<string, unknown>
  const name = d.name
  const subject = typeof name === 'string' ? `tool "${name}"` : 'a tool'
  const issues: string[] = []
  if (typeof name !== 'string' || name.length === 0) issues.push('definition.name: expected a non-empty string')
  else if (name === RUN_CODE_NAME)
    issues.push(`definition.name: "${RUN_CODE_NAME}" is reserved for the Code Mode transport`)
  if (typeof d.description !== 'string') issues.push('definition.description: expected a string')
  try {
    snapshotJsonValue(d.parameters, 'definition.parameters')
  } catch (error) {
    issues.push(error instanceof Error ? error.message : String(error))
  }
  if (typeof d.execute !== 'function') issues.push('definition.execute: expected a function')
  const output = d.output
  if (typeof output !== 'object' || output === null) {
    issues.push('definition.output: required; declare { schema, render } for the canonical value')
  } else {
    const o = output as Record<string, unknown>
    try {
      assertSupportedJsonSchema(o.schema)
    } catch (error) {
      const nested = (error as { issues?: unknown }).issues
      if (Array.isArray(nested)) for (const issue of nested) issues.push(`definition.output.${String(issue)}`)
      else issues.push(`definition.output.schema: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (typeof o.render !== 'function') issues.push('definition.output.render: expected a function')
    if (o.presentationMeta !== undefined && typeof o.presentationMeta !== 'function') {
      issues.push('definition.output.presentationMeta: expected a function when present')
    }
  }
  for (const key of optionalCallbacks) {
    if (d[key] !== undefined && typeof d[key] !== 'function')
      issues.push(`definition.${key}: expected a function when present`)
  }
  for (const key of ['timeoutMs', 'idleTimeoutMs'] as const) {
    const ms = d[key]
    if (ms !== undefined && !(typeof ms === 'number' && Number.isFinite(ms) && ms > 0)) {
      issues.push(`definition.${key}: expected a positive finite number of milliseconds, got ${String(ms)}`)
    }
  }
  if (issues.length) throw new ToolRegistrationError(subject, issues)
  const checked = definition as ToolDefinition
  // Compile the output validator now so the per-call path only looks it up.
  getJsonSchemaValidator(checked.output.schema)
  return checked
}
