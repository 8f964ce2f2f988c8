// openAIChatModel: a ProviderModel over the official `openai` client's Chat Completions.
import type OpenAI from 'openai'
import { checkModelOptions } from './adapter-util.js'
import type { ModelRequest, ProviderModel } from './model.js'
import { openAIChatFormat, replyToolCalls } from './openai-chat.js'
import { openAIToolRound } from './openai-tools.js'
import { accumulateOpenAIChat } from './stream-accumulate.js'
import type { ProviderToolCall } from './types.js'
import { usageOf } from './usage.js'

type CreateParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming

export interface OpenAIChatModelOptions {
  /** An `openai` client (`new OpenAI({ baseURL, apiKey })`); any OpenAI-compatible server works. */
  readonly client: Pick<OpenAI, 'chat'>
  readonly model: string
  /** Send tools in strict mode where expressible (default `true`). */
  readonly strict?: boolean
  /** Further request fields (temperature, max_completion_tokens, …). */
  readonly params?: Omit<CreateParams, 'model' | 'messages' | 'tools' | 'stream'>
}

/** Drive an OpenAI Chat Completions model (non-streaming `POST /chat/completions`). */
export function openAIChatModel(options: OpenAIChatModelOptions): ProviderModel<'openai-chat'> {
  const { client, model, params } = checkModelOptions(options, 'openAIChatModel')
  const strict = options.strict ?? true
  const round = ({ messages, tools }: ModelRequest<'openai-chat'>) => {
    const { definitions, parseCalls } = openAIToolRound(openAIChatFormat, tools, strict)
    const body: CreateParams = { ...params, model, messages: [...messages] }
    if (definitions.length > 0) body.tools = definitions
    return { body, parseCalls }
  }
  const reply = (completion: unknown, parseCalls: (response: unknown) => ProviderToolCall[]) => {
    const found = completion as OpenAI.Chat.Completions.ChatCompletion | undefined
    const message = found?.choices?.[0]?.message
    if (message === undefined) throw new Error('openAIChatModel: the completion has no choices[0].message')
    const calls = parseCalls(found)
    const answer: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = {
      role: 'assistant',
      content: message.content ?? null,
    }
    if (typeof message.refusal === 'string') answer.refusal = message.refusal
    const toolCalls = replyToolCalls(message)
    if (toolCalls.length > 0) answer.tool_calls = toolCalls
    const usage = usageOf('openai-chat', completion)
    return { messages: [answer], calls, ...(usage !== undefined ? { usage } : {}) }
  }
  return {
    format: 'openai-chat',
    async generate(request) {
      const { body, parseCalls } = round(request)
      return reply(await client.chat.completions.create(body, { signal: request.signal }), parseCalls)
    },
    async stream(request, onDelta) {
      const { body, parseCalls } = round(request)
      const chunks = await client.chat.completions.create(
        { ...body, stream: true, stream_options: { ...body.stream_options, include_usage: true } },
        { signal: request.signal },
      )
      return reply(await accumulateOpenAIChat(chunks, onDelta), parseCalls)
    },
  }
}
