import { ToolgateError } from '../errors/toolgate-error.js'
import type { CodeRunFailureReason } from './code-runtime.js'

/**
 * A `run_code` program did not produce a result: syntax error, uncaught throw, non-JSON return
 * value, CPU/memory/stack/tool-call limit, or a promise that can never settle.
 * The message carries the reason and the program's logs so far; the pipeline turns the throw
 * into an error result.
 */
export class CodeRunFailedError extends ToolgateError {
  readonly code = 'CODE_RUN_FAILED' as const
  readonly reason: CodeRunFailureReason
  readonly logs: readonly string[]
  constructor(reason: CodeRunFailureReason, detail: string, logs: readonly string[]) {
    super(formatFailure(detail, logs))
    this.name = 'CodeRunFailedError'
    this.reason = reason
    this.logs = Object.freeze([...logs])
  }
}

function formatFailure(detail: string, logs: readonly string[]): string {
  const head = `run_code failed: ${detail}`
  return logs.length === 0 ? head : `${head}\n\nLogs before the failure:\n${logs.join('\n')}`
}

/**
 * The host-side twin of the error a failed sub-call rejects with inside a program: only
 * `toolName` and `message` are own fields, so nothing else of the sub-result leaks into the
 * program. Custom `CodeRuntime` implementations throw this shape into their guests.
 */
export class ToolCallError extends Error {
  readonly toolName: string
  constructor(toolName: string, message: string) {
    super(message)
    this.toolName = toolName
    Object.defineProperty(this, 'name', { value: 'ToolCallError', enumerable: false })
  }
}
