import type { ToolSchema } from '../contract/tool-definition.js'
import type { ProviderFormat, ProviderMessage, ProviderToolCall } from './types.js'
import type { TokenUsage } from './usage.js'

/** One request `runModelLoop` makes. */
export interface ModelRequest<F extends ProviderFormat = ProviderFormat> {
  /** The whole conversation so far, in the format's own message type. */
  readonly messages: readonly ProviderMessage<F>[]
  /** What `ctx.tools.schemas(agent)` shows right now. */
  readonly tools: readonly ToolSchema[]
  /**
   * The tools the agent may call that `tools` leaves out because they are deferred (present when
   * any are): an adapter with a native tool search sends them to load on demand.
   */
  readonly deferred?: readonly ToolSchema[]
  readonly signal?: AbortSignal
}

/** What the model answered: the messages to append (its own turn) and the calls in them. */
export interface ModelReply<F extends ProviderFormat = ProviderFormat> {
  readonly messages: ProviderMessage<F>[]
  readonly calls: ProviderToolCall[]
  /** The tokens the request used, when the provider reported them. */
  readonly usage?: TokenUsage
}

/** A piece of a reply while it streams in. `index` numbers the reply's tool calls from 0, in call order. */
export type ModelDelta =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  | {
      readonly type: 'tool-call-delta'
      readonly index: number
      /** Set on a call's first delta (and whenever the provider repeats it). */
      readonly callId?: string
      readonly name?: string
      /** The next piece of the call's argument text (JSON, as the model writes it); may be empty. */
      readonly argumentsDelta: string
    }

/** A model `runModelLoop` can drive; the adapters (`openAIChatModel`, …) make one from an SDK client. */
export interface ProviderModel<F extends ProviderFormat = ProviderFormat> {
  readonly format: F
  generate(request: ModelRequest<F>): Promise<ModelReply<F>>
  /**
   * The same request through the provider's streaming API: `onDelta` gets the reply's pieces as
   * they arrive, and the promise the whole reply, as `generate` would have returned it.
   * `streamModelLoop` uses it when present, else `generate`.
   */
  stream?(request: ModelRequest<F>, onDelta: (delta: ModelDelta) => void): Promise<ModelReply<F>>
}
