import { ToolgateError } from '../errors/toolgate-error.js'

function bullet(lines: readonly string[]): string {
  return lines.map((line) => `\n  - ${line}`).join('')
}

/**
 * A schema (raw JSON Schema or author DSL spec) outside the enforced subset.
 * `issues` lists every offending path with its reason.
 */
export class JsonSchemaError extends ToolgateError {
  override readonly name: string = 'JsonSchemaError'
  readonly code = 'INVALID_JSON_SCHEMA' as const
  readonly issues: string[]

  constructor(issues: readonly string[], subject = 'JSON Schema') {
    super(`Unsupported ${subject} (${issues.length} issue${issues.length === 1 ? '' : 's'}):${bullet(issues)}`)
    this.issues = [...issues]
  }
}

function violationMessage(what: string, violations: readonly string[], toolName: string | undefined): string {
  const who = toolName === undefined ? '' : ` for tool "${toolName}"`
  return `${what}${who} (${violations.length} violation${violations.length === 1 ? '' : 's'}):${bullet(violations)}`
}

/** Arguments that do not match a tool's parameter schema. Thrown before the tool body runs. */
export class ToolArgsError extends ToolgateError {
  override readonly name = 'ToolArgsError'
  readonly code = 'INVALID_ARGS' as const
  readonly violations: readonly string[]

  constructor(violations: readonly string[], toolName?: string) {
    super(violationMessage('Invalid arguments', violations, toolName))
    this.violations = Object.freeze([...violations])
  }
}

/** A body's (or a policy's) value that does not satisfy `output.schema`. */
export class ToolOutputError extends ToolgateError {
  override readonly name = 'ToolOutputError'
  readonly code = 'INVALID_TOOL_OUTPUT' as const
  readonly violations: readonly string[]

  constructor(violations: readonly string[], toolName?: string) {
    super(violationMessage('Invalid tool output', violations, toolName))
    this.violations = Object.freeze([...violations])
  }
}
