import { ToolgateError } from '../errors/toolgate-error.js'
/** Error codes the pipeline itself produces (a failure's `error.info.code`). */
export const UNKNOWN_TOOL = 'UNKNOWN_TOOL'
export const INVALID_ARGS = 'INVALID_ARGS'
export const INVALID_TOOL_OUTPUT = 'INVALID_TOOL_OUTPUT'
export const TOOL_ABORTED_BEFORE_DISPATCH = 'ABORTED_BEFORE_DISPATCH'
export const TOOL_ABORTED = 'ABORTED'
export const TOOL_TIMEOUT = 'TOOL_TIMEOUT'
export const TOOL_DENIED = 'TOOL_DENIED'
/** The approval step suspended the call until a decision arrives (`SuspendingApproval`). */
export const APPROVAL_SUSPENDED = 'APPROVAL_SUSPENDED'

/** Codes for failures the pipeline's own policies and checks produce. */
export const POLICY_ERROR = 'POLICY_ERROR'
export const INVALID_DECISION = 'INVALID_DECISION'
export const INVALID_INPUT = 'INVALID_INPUT'
export const TOOL_BLOCKED = 'TOOL_BLOCKED'
export const RENDER_FAILED = 'RENDER_FAILED'
export const FINALIZE_FAILED = 'FINALIZE_FAILED'
export const INVALID_RESULT = 'INVALID_RESULT'
export const INTERNAL_ERROR = 'INTERNAL_ERROR'
/** A thrown value that carries no string `code` of its own. */
export const TOOL_ERROR = 'TOOL_ERROR'

/** Lifecycle: the runtime, or the calling agent, was disposed. */
export const RUNTIME_DISPOSED = 'RUNTIME_DISPOSED'
export const AGENT_DISPOSED = 'AGENT_DISPOSED'

/** Aliases under the issue's spelling. */
export const ABORTED_BEFORE_DISPATCH = TOOL_ABORTED_BEFORE_DISPATCH
export const ABORTED = TOOL_ABORTED

/** Base class: every pipeline error carries a stable `code`. */
export class ToolPipelineError extends ToolgateError {
  readonly code: string
  constructor(code: string, message: string) {
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
    super(UNKNOWN_TOOL, `Unknown tool "${toolName}"${hint ? `: ${hint}` : ''}${didYouMean(suggestions)}`)
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
    super(TOOL_ABORTED_BEFORE_DISPATCH, `Tool "${toolName}" was cancelled before it was dispatched`)
  }
}

/** Cancellation arrived after the tool body was invoked. */
export class ToolAbortedError extends ToolPipelineError {
  constructor(toolName: string) {
    super(TOOL_ABORTED, `Tool "${toolName}" was cancelled`)
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
      TOOL_TIMEOUT,
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
    super(TOOL_DENIED, `Tool "${toolName}" was denied: ${reason}`)
  }
}

/** The call waits for an approval decision that will arrive later (possibly in another process). */
export class ToolSuspendedError extends ToolPipelineError {
  constructor(toolName: string, reason: string) {
    super(APPROVAL_SUSPENDED, `Tool "${toolName}" is waiting for approval: ${reason}`)
  }
}

/** The runtime was disposed: it registers and runs nothing more; in-flight calls were aborted. */
export class RuntimeDisposedError extends ToolPipelineError {
  constructor(action: string) {
    super(RUNTIME_DISPOSED, `${action}: the tool runtime was disposed`)
  }
}

/** The agent was disposed: its scope registers and runs nothing more; its in-flight calls were aborted. */
export class AgentDisposedError extends ToolPipelineError {
  readonly agentId: string
  constructor(agentId: string, action: string) {
    super(AGENT_DISPOSED, `${action}: agent "${agentId}" was disposed`)
    this.agentId = agentId
  }
}
