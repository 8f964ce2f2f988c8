import type { ErrorCode } from '../errors/codes.js'
import { ToolgateError } from '../errors/toolgate-error.js'

// Codes are written as literals typed `ErrorCode`: ERROR_CODES is their one list, and the compiler
// refuses a code it does not hold.

/** Base class: every pipeline error carries a stable `code`. */
export class ToolPipelineError extends ToolgateError {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string) {
    super(message)
    this.code = code
    this.name = new.target.name
  }
}

/** The named tool is unknown or not visible to the calling scope. */
export class ToolNotFoundError extends ToolPipelineError {
  readonly toolName: string
  /** The nearest names visible to the same caller (closest first); never a tool hidden from it. */
  readonly suggestions: readonly string[]
  constructor(toolName: string, hint?: string, suggestions: readonly string[] = []) {
    super('UNKNOWN_TOOL', `Unknown tool "${toolName}"${hint ? `: ${hint}` : ''}${didYouMean(suggestions)}`)
    this.toolName = toolName
    this.suggestions = Object.freeze([...suggestions])
  }
}

function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return ''
  const quoted = names.map((name) => JSON.stringify(name))
  const list = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`
  return `. Did you mean ${list}?`
}

/** Cancellation arrived before the tool body was invoked. */
export class ToolAbortedBeforeDispatchError extends ToolPipelineError {
  constructor(toolName: string) {
    super('ABORTED_BEFORE_DISPATCH', `Tool "${toolName}" was cancelled before it was dispatched`)
  }
}

/** Cancellation arrived after the tool body was invoked. */
export class ToolAbortedError extends ToolPipelineError {
  constructor(toolName: string) {
    super('ABORTED', `Tool "${toolName}" was cancelled`)
  }
}

/** A cooperative `timeoutMs` deadline elapsed, or (`idle`) an `idleTimeoutMs` passed without progress. */
export class ToolTimeoutError extends ToolPipelineError {
  readonly timeoutMs: number
  /** True when the call was idle (no `exec.progress(...)`) for `timeoutMs`, not over a fixed deadline. */
  readonly idle: boolean
  constructor(toolName: string, timeoutMs: number, options: { idle?: boolean } = {}) {
    const idle = options.idle === true
    super(
      'TOOL_TIMEOUT',
      idle
        ? `Tool "${toolName}" timed out after ${timeoutMs} ms without progress`
        : `Tool "${toolName}" timed out after ${timeoutMs} ms`,
    )
    this.timeoutMs = timeoutMs
    this.idle = idle
  }
}

/** A pre-execute decision, approval or guard denied the call. */
export class ToolDeniedError extends ToolPipelineError {
  constructor(toolName: string, reason: string) {
    super('TOOL_DENIED', `Tool "${toolName}" was denied: ${reason}`)
  }
}

/** The call waits for an approval decision that will arrive later (possibly in another process). */
export class ToolSuspendedError extends ToolPipelineError {
  constructor(toolName: string, reason: string) {
    super('APPROVAL_SUSPENDED', `Tool "${toolName}" is waiting for approval: ${reason}`)
  }
}

/** The runtime was disposed: it registers and runs nothing more; in-flight calls were aborted. */
export class RuntimeDisposedError extends ToolPipelineError {
  constructor(action: string) {
    super('RUNTIME_DISPOSED', `${action}: the tool runtime was disposed`)
  }
}

/** The agent was disposed: its scope registers and runs nothing more; its in-flight calls were aborted. */
export class AgentDisposedError extends ToolPipelineError {
  readonly agentId: string
  constructor(agentId: string, action: string) {
    super('AGENT_DISPOSED', `${action}: agent "${agentId}" was disposed`)
    this.agentId = agentId
  }
}
