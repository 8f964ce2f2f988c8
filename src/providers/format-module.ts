import type { JsonValue } from '../contract/json-value.js'
import type { ToolSchema } from '../contract/tool-definition.js'
import type { ProviderBatch, ProviderFormat, ProviderMessage, ProviderToolCall, ProviderTools } from './types.js'

/** What one provider format implements; `formats.ts` holds the registry of them. */
export interface FormatModule<F extends ProviderFormat> {
  /** Whether the API has a strict mode (then only tools sent strict get their nulls undone). */
  readonly hasStrictMode: boolean
  /** Tool definitions for a request (`strict` matters only where the API has a strict mode). */
  toTools(schemas: readonly ToolSchema[], strict: boolean): ProviderTools<F>
  /**
   * The calls of one response in emitted order. `response` is untrusted: read defensively.
   * `nullAbsent` maps each tool whose optional-property nulls mean "absent" to its original schema.
   */
  parseToolCalls(response: unknown, nullAbsent: ReadonlyMap<string, JsonValue> | undefined): ProviderToolCall[]
  /**
   * The tools with the provider's own tool search: `schemas` as usual, `deferred` marked to load on
   * demand, and the provider's search tool. Absent where the API has no tool search.
   */
  nativeSearch?(schemas: readonly ToolSchema[], deferred: readonly ToolSchema[], strict: boolean): ProviderTools<F>
  /** The messages answering one executed batch: one result per call, in call order. */
  toMessages(batch: ProviderBatch): ProviderMessage<F>[]
}
