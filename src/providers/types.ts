import type { ToolExecutionResult } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolSchema } from '../contract/tool-definition.js'

/** The provider APIs toolgate speaks. */
export type ProviderFormat = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini'

/**
 * A provider value whose SDK types are not in the program: a plain object. Importing a
 * provider's subpath (`toolgate/providers/openai`, `…/anthropic`, `…/gemini`) fills the maps below
 * with that SDK's own types, so this module type-checks with any set of SDKs installed, or none.
 */
export interface UntypedProviderValue {
  [key: string]: unknown
}

// The three maps start empty: each provider subpath adds its formats' SDK types to them by
// declaration merging. A format nobody added reads as UntypedProviderValue.
/** The conversation message type of each format (what a request's message list holds). */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging from the provider subpaths
export interface ProviderMessageMap {}

/** One entry of a request's `tools` array, per format. */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging from the provider subpaths
export interface ProviderToolMap {}

/** The response object each format's `parseToolCalls` reads. */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging from the provider subpaths
export interface ProviderResponseMap {}

export type ProviderMessage<F extends ProviderFormat = ProviderFormat> = F extends keyof ProviderMessageMap
  ? ProviderMessageMap[F]
  : UntypedProviderValue
export type ProviderTool<F extends ProviderFormat = ProviderFormat> = F extends keyof ProviderToolMap
  ? ProviderToolMap[F]
  : UntypedProviderValue
export type ProviderResponse<F extends ProviderFormat = ProviderFormat> = F extends keyof ProviderResponseMap
  ? ProviderResponseMap[F]
  : UntypedProviderValue

/**
 * One tool call the model emitted, shaped like a `ToolExecutionInput` without `signal`
 * (and without `agent`, which the loop adds). Plain JSON, so a suspended loop can be stored.
 */
export interface ProviderToolCall {
  readonly callId: string
  readonly name: string
  /** The parsed arguments (`null` when they could not be parsed: see `argumentsError`). */
  readonly arguments: JsonValue
  /**
   * Why the model's argument text could not be used (e.g. the JSON parse error). Such a call
   * is kept: it executes to an `INVALID_ARGS` result quoting this, so the model can retry.
   */
  readonly argumentsError?: string
  /**
   * `'custom'` for a call of a non-function (custom, free-text) tool: it is answered the way the
   * API answers such calls (Responses: a `custom_tool_call_output`). Absent for function calls.
   */
  readonly kind?: 'custom'
}

/** One executed call of a batch, as `toProviderMessages` reads it (an `executeBatch` entry fits). */
export interface ProviderBatchEntry {
  readonly call: { readonly callId: string; readonly name: string; readonly kind?: 'custom' }
  readonly result: ToolExecutionResult
}

/** The executed batch of one model turn (`executeBatch`'s `BatchResult` fits). */
export interface ProviderBatch {
  readonly results: readonly ProviderBatchEntry[]
}

/**
 * Which tool search a request carries: `'native'`, the provider's own (Anthropic's tool search tool,
 * the Responses API's `tool_search`), with the deferred tools sent marked `defer_loading`; or
 * `'toolgate'`, the registry's finder (`search_tools`) sent as an ordinary tool.
 */
export type ToolSearchMode = 'native' | 'toolgate'

/** Options of `toProviderTools`. */
export interface ProviderToolsOptions {
  /** OpenAI strict mode (chat and responses). Default `false` here; the OpenAI model adapters default to `true`. */
  readonly strict?: boolean
  /**
   * `'native'`: where the provider has a tool search of its own, use it instead of toolgate's finder
   * (the finder is left out, `deferred` goes out marked `defer_loading`, and the provider's search
   * tool is added). Where it has none, toolgate's finder is sent and `downgrades` says so.
   * Default `'toolgate'`.
   */
  readonly toolSearch?: ToolSearchMode
  /**
   * The deferred tools the agent may call, for a native search (`deferredSchemas(ctx.tools, agent)`):
   * never more than the agent may see, so a native search cannot reveal a hidden or denied tool.
   */
  readonly deferred?: readonly ToolSchema[]
  /** The name of toolgate's finder among `schemas` (default `'search_tools'`). */
  readonly finder?: string
}

/** Tool definitions ready for a request, and what could not be expressed. */
export interface ProviderTools<F extends ProviderFormat = ProviderFormat> {
  readonly tools: ProviderTool<F>[]
  /**
   * Path-qualified descriptions of everything the provider cannot express (`name: parameters.x: why`),
   * and, when a tool search is in play, a `tool search: …` line saying which one the request carries.
   */
  readonly downgrades: string[]
  /** The tool search the request carries, when any (see {@link ToolSearchMode}). */
  readonly toolSearch?: ToolSearchMode
}

/** Options of `parseToolCalls`. */
export interface ParseToolCallsOptions {
  /**
   * The schemas the request sent, with the same `strict` flag: for each tool that went out
   * strict, a `null` the model sent for an optional property becomes an absent key again.
   */
  readonly schemas?: readonly ToolSchema[]
  readonly strict?: boolean
}
