// anthropicModel: a ProviderModel over the official `@anthropic-ai/sdk` client's Messages API.
import type Anthropic from '@anthropic-ai/sdk'
import { ConfigError } from '../errors/config-error.js'
import { isRecord } from '../util/is-record.js'
import { checkModelOptions } from './adapter-util.js'
import { anthropicFormat } from './anthropic.js'
import type { ProviderModel } from './model.js'
import { nullAbsentSchemas } from './tool-calls.js'

type CreateParams = Anthropic.Messages.MessageCreateParamsNonStreaming

export interface AnthropicModelOptions {
  /** An `@anthropic-ai/sdk` client (`new Anthropic({ apiKey })`). */
  readonly client: Pick<Anthropic, 'messages'>
  readonly model: string
  /** `max_tokens` of every request (default 4096). */
  readonly maxTokens?: number
  /** Further request fields (system, temperature, thinking, …). */
  readonly params?: Omit<CreateParams, 'model' | 'messages' | 'tools' | 'stream' | 'max_tokens'>
}

/** Drive a Claude model (non-streaming `POST /v1/messages`). */
export function anthropicModel(options: AnthropicModelOptions): ProviderModel<'anthropic'> {
  const { client, model, params } = checkModelOptions(options, 'anthropicModel')
  const maxTokens = options.maxTokens ?? 4096
  if (!(Number.isSafeInteger(maxTokens) && maxTokens > 0))
    throw new ConfigError('anthropicModel(options).maxTokens', `expected a positive integer, got ${String(maxTokens)}`)
  return {
    format: 'anthropic',
    async generate({ messages, tools, signal }) {
      const { tools: definitions } = anthropicFormat.toTools(tools, false)
      const body: CreateParams = { ...params, model, max_tokens: maxTokens, messages: [...messages] }
      if (definitions.length > 0) body.tools = definitions
      const message = await client.messages.create(body, { signal })
      if (!Array.isArray(message?.content)) throw new Error('anthropicModel: the message has no content array')
      const calls = anthropicFormat.parseToolCalls(message, nullAbsentSchemas({ schemas: tools }, false))
      // The API takes tool_use input only as an object: one the model sent malformed goes back empty
      // (its tool_result says why).
      const content = message.content.map((block) =>
        block.type === 'tool_use' && !isRecord(block.input) ? { ...block, input: {} } : block,
      )
      return { messages: [{ role: 'assistant', content }], calls }
    },
  }
}
