import type { Context } from 'cordis'
import type { ContentBlock, UserMessage } from './content.js'
import type { JsonValue } from './json-value.js'

/** Identifier of one model-requested (or nested) call. */
export type CallId = string

declare const toolExecutionTokenBrand: unique symbol

/** Opaque call identity that permits correlation without exposing mutable execution state. */
export type ToolExecutionToken = symbol & { readonly [toolExecutionTokenBrand]: true }

/** An agent scope: an id and the child context that carries the scope. */
export interface Agent {
  readonly id: string
  readonly ctx: Context
  /** Whom the agent acts for, as a policy's `who` and `when` see it (given to `createAgent`). */
  readonly identity?: AgentIdentity
}

/** Whom an agent acts for: a subject, and optionally its groups, scopes and claims. */
export interface AgentIdentity {
  readonly subject: string
  readonly groups?: readonly string[]
  readonly scopes?: readonly string[]
  readonly claims?: Readonly<Record<string, unknown>>
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
  /** The enclosing call's id for a nested call (a Code Mode sub-call); null for a top-level call. */
  readonly parentCallId: CallId | null
  readonly token: ToolExecutionToken
  /**
   * The stored turn (`store.saveTurn` id) whose resume runs this call, when the host named one
   * (`ToolExecuteOptions.storedTurnId`; nested calls inherit it). The journal records it, so a
   * turn's crash evidence is never another turn's that reused the call id.
   */
  readonly storedTurnId?: string
  /**
   * The model-loop turn whose reply emitted this call (`ToolExecuteOptions.turnId`; nested calls
   * inherit it). The journal records it, so two turns that reuse a call id are two calls.
   */
  readonly turnId?: string
  /**
   * The W3C trace id (32 lowercase hex digits) of the request that asked for this call, when its
   * caller carried trace context (`ToolExecuteOptions.traceId`; nested calls inherit it). Logs
   * name it so a call's lines join the caller's trace.
   */
  readonly traceId?: string
  /**
   * The W3C trace context (`traceparent`, and `tracestate` when given) of the request that asked
   * for this call (`ToolExecuteOptions.traceContext`; nested calls inherit it): the remote parent
   * of the call's OpenTelemetry span.
   */
  readonly traceContext?: TraceContext
}

/** W3C Trace Context as a request carried it: a valid `traceparent`, and its `tracestate` when given. */
export interface TraceContext {
  readonly traceparent: string
  readonly tracestate?: string
}

/**
 * What the host that starts a call (a model loop, an MCP server, a resumed turn) hands the pipeline
 * beside the input: decisions and channels that belong to the host, never to the model, so nothing
 * in the call's arguments can reach them. Every field is optional; `tools.execute(input)` alone is a
 * plain call.
 */
export interface ToolExecuteOptions {
  /**
   * An approval decision already made for this call (a resumed turn): the call's first ask takes it
   * instead of asking a standing rule or the approval service. Used once; nested calls do not inherit it.
   */
  readonly decision?: ApprovalOutcome
  /**
   * The approval service for this call and its nested calls (an MCP server asks the client that made
   * the call). It answers instead of the `approval` service of the call's context.
   */
  readonly approval?: ApprovalService
  /**
   * Called once, before the result is returned, when the call's approval was suspended: the request
   * that waits for a later decision. A result that merely carries the `APPROVAL_SUSPENDED` code
   * (a tool faking it) never triggers it.
   */
  readonly onSuspended?: (request: ApprovalRequest, program?: ProgramSuspension) => void
  /**
   * With `onSuspended`: called by a Code Mode program (`run_code`) each time one of its sub-calls
   * finished, with its replay log so far (as a paused program's `log`). The program gets that
   * sub-call's outcome only once the returned promise settles (a failure is logged and ignored), so
   * a host that saves the log there has every finished sub-call saved before the program goes on:
   * another process can continue the program from it (`program: { log, decisions: {} }`) if this
   * one dies, and the finished sub-calls answer from the log instead of running again.
   */
  readonly onProgramLog?: (log: JsonValue) => void | Promise<void>
  /**
   * The stored turn this call belongs to (a resumed store turn): carried on the execution as
   * `storedTurnId` and journaled with the call's records. A non-empty string when present.
   */
  readonly storedTurnId?: string
  /**
   * The model-loop turn whose reply emitted this call (the `turnId` of that turn's journal
   * records): carried on the execution as `turnId` and journaled with the call's records. A
   * non-empty string when present.
   */
  readonly turnId?: string
  /**
   * The W3C trace id of the request behind this call (an MCP request's `_meta.traceparent`, say):
   * carried on the execution as `traceId`. 32 lowercase hex digits, not all zero, when present.
   */
  readonly traceId?: string
  /**
   * The W3C trace context of the request behind this call (an MCP request's `_meta.traceparent`
   * and `_meta.tracestate`): carried on the execution as `traceContext`. A valid `traceparent`
   * (and a `tracestate` of at most 512 characters) when present.
   */
  readonly traceContext?: TraceContext
  /**
   * A paused Code Mode program's resumption (a resumed turn whose `run_code` call waited for
   * approval of a sub-call): the replay log its suspension carried and the decisions for its
   * waiting sub-calls, by sub-call id.
   */
  readonly program?: ProgramResumption
}

/**
 * What a `run_code` call that paused hands `onSuspended` beside its first waiting request: the
 * sub-calls that wait for a decision, and the program's replay log (plain JSON, bound to the
 * program's text) that a resume hands back as {@link ProgramResumption}.
 */
export interface ProgramSuspension {
  readonly waiting: readonly ApprovalRequest[]
  readonly log: JsonValue
}

/** A paused program's log and the decisions for its waiting sub-calls, by sub-call id. */
export interface ProgramResumption {
  readonly log: JsonValue
  readonly decisions: Readonly<Record<string, ApprovalOutcome>>
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

/**
 * What an approval service is asked when a pre-execute listener answers `ask`: plain, frozen JSON
 * data that can be logged, stored and sent to another process; the object has exactly these fields.
 * The call's abort signal, agent and execution travel beside it (the service's second argument,
 * {@link ApprovalContext}), never inside it.
 */
export interface ApprovalRequest {
  readonly callId: CallId
  readonly rootCallId: CallId
  /** The enclosing call's id for a Code Mode sub-call; null for a model-direct call. */
  readonly parentCallId: CallId | null
  /** The id given to `createAgent`, or null for a call without an agent. */
  readonly agentId: string | null
  readonly toolName: string
  /** The call's arguments as the model wrote them (lossless JSON). */
  readonly arguments: JsonValue
  /** Why the policy asked, or null. */
  readonly reason: string | null
}

/** What travels beside an {@link ApprovalRequest}: live objects that never serialize. */
export interface ApprovalContext {
  /** The call's cancellation: an approver that waits should answer `cancelled` when it aborts. */
  readonly signal: AbortSignal
  /** The agent the call runs for, when it has one. */
  readonly agent: Agent | undefined
  /** The frozen execution being asked about. */
  readonly execution: Readonly<ToolExecution>
}

/**
 * An approval service's answer (plain JSON). `allowed-once` proceeds, optionally with edited
 * `arguments` (validated again against the tool's parameters); `denied` fails the call with a
 * `reason` the model sees; `allowed-always` / `denied-always` also install a standing rule for the
 * agent scope and tool that answers later asks without the service; `suspended` parks the call
 * until a decision arrives (see `SuspendingApproval`); `cancelled` is a denial because the call was
 * cancelled while waiting.
 */
export type ApprovalOutcome = (
  | { readonly kind: 'allowed-once'; readonly arguments?: JsonValue; readonly reason?: string }
  | { readonly kind: 'allowed-always'; readonly reason?: string }
  | { readonly kind: 'denied'; readonly reason?: string }
  | { readonly kind: 'denied-always'; readonly reason?: string }
  | { readonly kind: 'suspended'; readonly reason?: string }
  | { readonly kind: 'cancelled'; readonly reason?: string }
) & {
  /** Who decided, when the approver knows (an authenticated subject); the journal records it. */
  readonly decidedBy?: string
}

/** Who answered an ask: the approval service, a standing rule, or a decision handed to a resume. */
export type ApprovalAnswerSource = 'service' | 'standing' | 'decision'

/** Every {@link ApprovalOutcome} kind. */
export type ApprovalOutcomeKind = ApprovalOutcome['kind']

/** A standing approval rule: an `allowed-always` / `denied-always` answer for one agent scope and tool. */
export interface StandingApprovalRule {
  /** The agent scope the rule belongs to (null: calls without an agent). */
  readonly agentId: string | null
  readonly toolName: string
  readonly kind: 'allowed-always' | 'denied-always'
  readonly reason: string | null
  /** The call whose answer installed the rule. */
  readonly callId: CallId
  /** When the rule was installed (ms since the epoch). */
  readonly createdAt: number
}

/**
 * Where standing approval rules are kept when they must outlive the process or be shared by several
 * (`tools.host.installStandingStore`). Rules are keyed by agent id and tool name, so every runtime
 * whose agent has the same id shares them.
 */
export interface StandingApprovalStore {
  /** The rule for `toolName` in the scope of `agentId` (null: calls without an agent), if any. */
  find(
    agentId: string | null,
    toolName: string,
  ): Promise<{ readonly kind: StandingApprovalRule['kind']; readonly reason?: string | null } | undefined>
  /** Keep `rule`, replacing the scope's rule for its tool. */
  keep(rule: StandingApprovalRule): Promise<void>
}

/**
 * The `approval` Cordis service contract. `request` must settle (never hang past `context.signal`'s
 * abort for long); a rejection or a malformed answer is a denial (fail closed).
 */
export interface ApprovalService {
  request(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalOutcome>
}
