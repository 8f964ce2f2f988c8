// anthropicModel: a ProviderModel over the official `@anthropic-ai/sdk` client's Messages API.
import type Anthropic from '@anthropic-ai/sdk'
import { ConfigError } from '../errors/config-error.js'
import { isRecord } from '../util/is-record.js'
import { checkModelOptions } from './adapter-util.js'
import { anthropicFormat } from './anthropic.js'
import type { ModelRequest, ProviderModel } from './model.js'
import { accumulateAnthropic } from './stream-accumulate.js'
import { nullAbsentSchemas } from './tool-calls.js'
import { checkToolSearch, projectTools } from './tool-search.js'
import type { ToolSearchMode } from './types.js'
import { usageOf } from './usage.js'

type CreateParams = Anthropic.Messages.MessageCreateParamsNonStreaming

export interface AnthropicModelOptions {
  /** An `@anthropic-ai/sdk` client (`new Anthropic({ apiKey })`). */
  readonly client: Pick<Anthropic, 'messages'>
  readonly model: string
  /** `max_tokens` of every request (default 4096). */
  readonly maxTokens?: number
  /** Further request fields (system, temperature, thinking, …). */
  readonly params?: Omit<CreateParams, 'model' | 'messages' | 'tools' | 'stream' | 'max_tokens'>
  /**
   * `'native'`: deferred tools go out with `defer_loading` beside Anthropic's tool search tool (BM25),
   * instead of toolgate's `search_tools`; the API searches them server-side. Default `'toolgate'`.
   */
  readonly toolSearch?: ToolSearchMode
}

/** Drive a Claude model (non-streaming `POST /v1/messages`). */
export function anthropicModel(options: AnthropicModelOptions): ProviderModel<'anthropic'> {
  const { client, model, params } = checkModelOptions(options, 'anthropicModel')
  const maxTokens = options.maxTokens ?? 4096
  if (!(Number.isSafeInteger(maxTokens) && maxTokens > 0))
    throw new ConfigError('anthropicModel(options).maxTokens', `expected a positive integer, got ${String(maxTokens)}`)
  const toolSearch = checkToolSearch(options.toolSearch, 'anthropicModel(options).toolSearch')
  const body = ({ messages, tools, deferred }: ModelRequest<'anthropic'>): CreateParams => {
    const { tools: definitions } = projectTools(
      'anthropic',
      anthropicFormat,
      tools,
      { toolSearch, ...(deferred !== undefined ? { deferred } : {}) },
      'anthropicModel',
    )
    const created: CreateParams = { ...params, model, max_tokens: maxTokens, messages: [...messages] }
    if (definitions.length > 0) created.tools = definitions
    return created
  }
  const reply = (found: unknown, { tools }: ModelRequest<'anthropic'>) => {
    const message = found as Anthropic.Messages.Message | undefined
    if (!Array.isArray(message?.content)) throw new Error('anthropicModel: the message has no content array')
    const calls = anthropicFormat.parseToolCalls(message, nullAbsentSchemas({ schemas: tools }, false))
    // The API takes tool_use input only as an object: one the model sent malformed goes back empty
    // (its tool_result says why).
    const content = message.content.map((block) =>
      block.type === 'tool_use' && !isRecord(block.input) ? { ...block, input: {} } : block,
    )
    const usage = usageOf('anthropic', message)
    return { messages: [{ role: 'assistant' as const, content }], calls, ...(usage !== undefined ? { usage } : {}) }
  }
  return {
    format: 'anthropic',
    async generate(request) {
      return reply(await client.messages.create(body(request), { signal: request.signal }), request)
    },
    async stream(request, onDelta) {
      const events = await client.messages.create({ ...body(request), stream: true }, { signal: request.signal })
      return reply(await accumulateAnthropic(events, onDelta), request)
    },
  }
}
