import type { ContentBlock } from './content.js'
import type { ToolExecution, ToolExecutionResult, ToolRunContext } from './execution.js'
import type { JsonSchemaNode } from './json-schema.js'
import type { JsonObject, JsonValue } from './json-value.js'
import type { ToolCallView, ToolResultView } from './views.js'

/** The model-facing wire schema of one tool: the only fields `schemas()` ever projects. */
export interface ToolSchema {
  readonly name: string
  readonly description: string
  /** Model-facing JSON Schema of the arguments (lossless JSON; raw tools own its dialect). */
  readonly parameters: JsonValue
}

/** Tool-owned canonical output contract used after the body returns a JSON value. */
export interface ToolOutputDefinition {
  /** Raw supported JSON Schema enforced against every successful canonical value. */
  readonly schema: JsonSchemaNode
  /** Pure projection from validated arguments and value to model content. */
  render(args: unknown, value: JsonValue): ContentBlock[]
  /** Pure replayable presentation projection, computed only for top-level calls. */
  presentationMeta?(args: unknown, value: JsonValue): JsonValue
}

/** The durable projection of a result a presenter sees on replay. */
export interface ToolResult {
  readonly isError: boolean
  readonly content: readonly ContentBlock[]
  readonly meta?: JsonValue
}

/** Behaviour hints a tool gives the clients that list it (MCP's tool annotations): hints, never guarantees. */
export interface ToolAnnotations {
  readonly title?: string
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

/**
 * What a tool carries for the hosts that list it again (an MCP server, a gateway), beside its
 * model-facing schema. Never model-visible: `schemas()`, the Code Mode SDK and tool search project
 * name, description and parameters only. Registration keeps a deep-frozen JSON snapshot of it.
 */
export interface ToolMeta {
  /** A display name for people (MCP `title`); models see `name`. */
  readonly title?: string
  readonly annotations?: ToolAnnotations
  /** Icons for a client's interface (MCP `icons`), passed on as they are. */
  readonly icons?: readonly JsonObject[]
  /** How the tool runs (MCP `execution`, e.g. `{ taskSupport: 'optional' }`), passed on as it is. */
  readonly execution?: JsonObject
  /** The tool-level `_meta` object it is listed with, passed on as it is. */
  readonly _meta?: JsonObject
  /**
   * Set on a tool imported from an MCP server (`connectMcpServer`): its value is the server's
   * `{ content, structuredContent?, _meta? }`, served again as the server sent it, and
   * `outputSchema` is the output schema the server declared, if it declared one.
   */
  readonly imported?: { readonly outputSchema?: JsonObject }
}

/** A registered tool: its schema plus the execution function (R-DEF). */
export interface ToolDefinition extends ToolSchema {
  /** Mandatory canonical output declaration. */
  readonly output: ToolOutputDefinition
  /**
   * Run one accepted call and return only its canonical lossless-JSON value.
   * Async work must observe or forward `exec.signal` and settle only after its
   * owned work reaches quiescence.
   */
  execute(args: unknown, exec: ToolRunContext): Promise<unknown>
  /** Synchronous last-mile transform for model-facing content, called exactly once per outcome. */
  finalizeContent?(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): ContentBlock[] | undefined
  /** Cooperative timeout budget in ms; never model-visible. */
  readonly timeoutMs?: number
  /**
   * Cooperative idle budget in ms: the call times out when it reports no `exec.progress(...)` for
   * this long (enforced by `TimeoutPolicy`); never model-visible. A tool that declares it and no
   * `timeoutMs` is not subject to the policy's fixed `defaultTimeoutMs`.
   */
  readonly idleTimeoutMs?: number
  /**
   * Ask the approval service before every call (`true`), or decide per call: return `true` or a
   * reason string to ask, `false` to proceed. Asked at most once per call, also when a
   * `tools/pre-execute` listener already asked. A throwing predicate fails the call (`POLICY_ERROR`).
   */
  readonly needsApproval?: boolean | ((args: unknown, exec: Readonly<ToolExecution>) => boolean | string)
  /** Pure synchronous overlap classifier; only an exact `true` opts in. */
  isConcurrencySafe?(args: unknown): boolean
  /**
   * Deferred loading: `true` leaves the tool out of `schemas()` and the Code Mode SDK until it is
   * loaded for the agent (`tools.load`, or a tool search), `false` keeps it listed even where a
   * `tools.defer(patterns)` rule matches it; omitted, the scope's rules decide. A deferred tool is
   * still callable, under the same policies.
   */
  readonly defer?: boolean
  /** What hosts that list the tool again pass on (title, annotations, icons); never model-visible. */
  readonly meta?: ToolMeta
  /**
   * Whether clients of an MCP protocol era (`legacy` 2025-11-25, `modern` 2026-07-28) are listed
   * this tool when it is served again: an upstream spoken to in both eras may list different tools
   * in each. Absent: every client. Read when a listing is built, never per call.
   */
  listedFor?(era: 'legacy' | 'modern'): boolean
  /** Pending-state presentation; pure and replay-safe. */
  presentCall?(args: unknown): ToolCallView | undefined
  /** Completed-state presentation; pure and replay-safe. */
  presentResult?(args: unknown, result: ToolResult): ToolResultView | undefined
}
