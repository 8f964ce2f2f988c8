// anthropicModel: a ProviderModel over the official `@anthropic-ai/sdk` client's Messages API.
import type Anthropic from '@anthropic-ai/sdk'
import { ConfigError } from '../errors/config-error.js'
import { isRecord } from '../util/is-record.js'
import { checkModelOptions } from './adapter-util.js'
import { anthropicFormat } from './anthropic.js'
import type { ModelReply, ModelRequest, ProviderModel } from './model.js'
import { accumulateAnthropic } from './stream-accumulate.js'
import { nullAbsentSchemas } from './tool-calls.js'
import { checkToolSearch, projectTools } from './tool-search.js'
import type { ToolSearchMode } from './types.js'
import { sumUsage, type TokenUsage, usageOf } from './usage.js'

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
    const paused = message.stop_reason === 'pause_turn'
    return {
      messages: [{ role: 'assistant' as const, content }],
      calls,
      paused,
      ...(usage !== undefined ? { usage } : {}),
    }
  }
  // A turn the API paused (a long server-side tool loop, such as a tool search) is resumed by sending
  // it back as it stands; the reply is the whole turn, every part of it and the usage of each request.
  const complete = async (
    request: ModelRequest<'anthropic'>,
    once: (request: ModelRequest<'anthropic'>) => Promise<unknown>,
  ): Promise<ModelReply<'anthropic'>> => {
    const messages: Anthropic.Messages.MessageParam[] = []
    const usages: (TokenUsage | undefined)[] = []
    for (let part = 0; ; part++) {
      const answer = reply(await once({ ...request, messages: [...request.messages, ...messages] }), request)
      messages.push(...answer.messages)
      usages.push(answer.usage)
      if (!answer.paused || answer.calls.length > 0 || part + 1 >= MAX_TURN_PARTS) {
        const counted = usages.some((usage) => usage !== undefined)
        return { messages, calls: answer.calls, ...(counted ? { usage: sumUsage(usages) } : {}) }
      }
    }
  }
  return {
    format: 'anthropic',
    generate: (request) => complete(request, (part) => client.messages.create(body(part), { signal: request.signal })),
    stream: (request, onDelta) =>
      complete(request, async (part) =>
        accumulateAnthropic(
          await client.messages.create({ ...body(part), stream: true }, { signal: request.signal }),
          onDelta,
        ),
      ),
  }
}

/** Requests one turn may take when the API keeps pausing it (`stop_reason: 'pause_turn'`). */
const MAX_TURN_PARTS = 10
