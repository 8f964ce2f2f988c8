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
  /** The messages answering one executed batch: one result per call, in call order. */
  toMessages(batch: ProviderBatch): ProviderMessage<F>[]
}
