import type { ToolSchema } from '../contract/tool-definition.js'
import type { ProviderFormat, ProviderMessage, ProviderToolCall } from './types.js'

/** One request `runModelLoop` makes. */
export interface ModelRequest<F extends ProviderFormat = ProviderFormat> {
  /** The whole conversation so far, in the format's own message type. */
  readonly messages: readonly ProviderMessage<F>[]
  /** What `ctx.tools.schemas(agent)` shows right now. */
  readonly tools: readonly ToolSchema[]
  readonly signal?: AbortSignal
}

/** What the model answered: the messages to append (its own turn) and the calls in them. */
export interface ModelReply<F extends ProviderFormat = ProviderFormat> {
  readonly messages: ProviderMessage<F>[]
  readonly calls: ProviderToolCall[]
}

/** A model `runModelLoop` can drive; the adapters (`openAIChatModel`, …) make one from an SDK client. */
export interface ProviderModel<F extends ProviderFormat = ProviderFormat> {
  readonly format: F
  generate(request: ModelRequest<F>): Promise<ModelReply<F>>
}
