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
 * A `run_code` program that does not type-check against the SDK its agent sees, refused before any
 * of it ran (`codeMode.typeCheck: 'refuse'`). The message gives each diagnostic as
 * `line:column: message` on the program's own lines and says what it was checked against.
 */
export class CodeTypeError extends ToolgateError {
  readonly code = 'CODE_TYPE_ERROR' as const
  readonly diagnostics: readonly string[]
  constructor(diagnostics: readonly string[], typescript: string) {
    super(
      `run_code refused: the program does not type-check against the SDK declarations above ` +
        `(TypeScript ${typescript}, strict); nothing of it ran. Fix these and call run_code again:\n` +
        diagnostics.join('\n'),
    )
    this.name = 'CodeTypeError'
    this.diagnostics = Object.freeze([...diagnostics])
  }
}

/**
 * A resumed `run_code` program did not re-run the way its replay log says (it asked for another
 * sub-call than the log has at that point, read the clock where it drew a random number, or ended
 * before it asked for every logged sub-call). Nothing new of it ran.
 */
export class CodeReplayDivergedError extends ToolgateError {
  readonly code = 'CODE_REPLAY_DIVERGED' as const
  constructor(detail: string) {
    super(
      `run_code could not resume: the program diverged from its replay log (${detail}); ` +
        'none of its sub-calls ran again and nothing new ran',
    )
    this.name = 'CodeReplayDivergedError'
  }
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
