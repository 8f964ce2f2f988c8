import type { Context } from 'cordis'
import type { JsonValue } from '../json/json-value.js'
import type { ContentBlock, UserMessage } from '../schema/content.js'

/** Identifier of one model-requested (or nested) call. */
export type CallId = string

declare const toolExecutionTokenBrand: unique symbol

/** Opaque call identity that permits correlation without exposing mutable execution state. */
export type ToolExecutionToken = symbol & { readonly [toolExecutionTokenBrand]: true }

/** An agent scope: an id and the child context that carries the scope. */
export interface Agent {
  readonly id: string
  readonly ctx: Context
}

/** Identifies a viewing scope for `get`/`schemas`: the agent. */
export type ScopeKey = Agent

/** How a scope's model sees its tools. */
export type ToolPresentationMode = 'native' | 'code' | 'both'

/**
 * Per-scope filter over inherited tools. Restrictions intersect and do not affect
 * scoped registrations or the reserved Code Mode transport.
 */
export interface ToolRestriction {
  /** Inherited tool names that stay visible; everything else is removed. */
  readonly allow?: readonly string[]
  /** Inherited tool names removed from visibility. */
  readonly deny?: readonly string[]
}

/** Caller-supplied description of one tool call. */
export interface ToolExecutionInput {
  readonly callId: CallId
  /** Root model-requested call owning this execution tree; omitted for a root call. */
  readonly rootCallId?: CallId
  readonly name: string
  /** Losslessly JSON-serializable parsed arguments (tools validate their own schema). */
  readonly arguments: unknown
  /** The agent on whose behalf the call runs. */
  readonly agent?: Agent
  /** Opaque token of the enclosing transport execution (Code Mode sub-dispatch). */
  readonly parent?: ToolExecutionToken
  /** Required caller-owned cancellation for this invocation. */
  readonly signal: AbortSignal
}

/** One pending tool call inside the pipeline; frozen, arguments deep-frozen. */
export interface ToolExecution extends ToolExecutionInput {
  readonly arguments: JsonValue
  readonly rootCallId: CallId
  readonly token: ToolExecutionToken
}

/** Around-dispatch view: only `signal` may be replaced (never removed). */
export interface ToolDispatchExecution extends Omit<ToolExecution, 'signal'> {
  signal: AbortSignal
}

/** What a running tool reports through `exec.progress(...)`; both fields are optional. */
export interface ToolProgress {
  /** Human-readable status, e.g. the latest output line. */
  readonly message?: string
  /** Completed share of the work, a finite number in [0, 1]. */
  readonly fraction?: number
}

/** Runtime context handed to a tool body after the pipeline accepted the call. */
export interface ToolRunContext extends ToolExecution {
  /** Attach a context to this execution's own result, in call order. */
  deferContext(context: UserMessage): void
  /** Mark a successful final result as terminal for the current agent turn. */
  concludeTurn(): void
  /**
   * Report progress: emitted as a scope-filtered `tools/progress` event (listeners get the
   * call's `ToolExecution`, then a frozen copy of `progress`) and, under `TimeoutPolicy`, resets
   * the call's idle timer. Throws a `TypeError` for a malformed progress; a no-op once the body settled.
   */
  progress(progress: ToolProgress): void
}

/** A monotonic guard run after `tools/pre-execute`: a returned reason denies. */
export type ToolGuard = (execution: Readonly<ToolExecution>) => string | undefined

/** Structured error identity carried by a failure. */
export interface ToolErrorInfo {
  /** Error class name, e.g. `ToolNotFoundError`. */
  readonly name: string
  /** Stable error code, e.g. `UNKNOWN_TOOL`. */
  readonly code: string
  readonly [key: string]: JsonValue
}

/** Canonical failure detail. */
export interface ToolFailure {
  /** Human-readable failure message without the `Error: ` envelope. */
  message: string
  info?: ToolErrorInfo
}

/** Successful canonical tool execution. */
export interface ToolExecutionSuccess {
  readonly isError: false
  readonly value: JsonValue
  readonly content: ContentBlock[]
  readonly error?: never
  readonly meta?: JsonValue
  readonly additionalContexts?: UserMessage[]
  readonly concludesTurn?: true
}

/** Failed canonical tool execution; failures never carry a value. */
export interface ToolExecutionFailure {
  readonly isError: true
  readonly error: ToolFailure
  readonly value?: never
  readonly content: ContentBlock[]
  readonly meta?: JsonValue
  readonly additionalContexts?: UserMessage[]
  readonly concludesTurn?: never
}

/** The discriminated, execution-local outcome of one tool call. */
export type ToolExecutionResult = ToolExecutionSuccess | ToolExecutionFailure

/** Scheduling mode for one pending call. */
export type ToolExecutionMode = { kind: 'parallel' } | { kind: 'exclusive' }

/** Pre-dispatch decision. */
export type PreToolDecision = { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; reason?: string }

/** Post-dispatch decision. */
export type PostToolDecision =
  | { kind: 'accept'; content?: ContentBlock[]; value?: never; additionalContexts?: UserMessage[] }
  | { kind: 'accept'; value: JsonValue; content?: never; additionalContexts?: UserMessage[] }
  | { kind: 'block'; feedback: ContentBlock[]; additionalContexts?: UserMessage[] }

/** One settled `run_code` sub-dispatch about to be logged. */
export interface CodeDispatchLog {
  readonly exec: ToolExecution
  readonly agent?: Agent
  readonly subCallId: CallId
  readonly name: string
  readonly isError: boolean
  readonly content: ContentBlock[]
}

/** What an approval service is asked when a pre-execute listener answers `ask`. */
export interface ApprovalRequest {
  readonly execution: ToolExecution
  readonly agent: Agent
  readonly reason?: string
}

/** An approval service's answer; only `allowed-once` proceeds. */
export type ApprovalOutcome =
  | { kind: 'allowed-once' }
  | { kind: 'denied'; reason?: string }
  | { kind: 'cancelled'; reason?: string }

/** The `approval` Cordis service contract. */
export interface ApprovalService {
  request(request: ApprovalRequest): Promise<ApprovalOutcome>
}
