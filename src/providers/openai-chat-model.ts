// openAIChatModel: a ProviderModel over the official `openai` client's Chat Completions.
import type OpenAI from 'openai'
import { checkModelOptions } from './adapter-util.js'
import type { ProviderModel } from './model.js'
import { openAIChatFormat, replyToolCalls } from './openai-chat.js'
import { openAIToolRound } from './openai-tools.js'

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
  return {
    format: 'openai-chat',
    async generate({ messages, tools, signal }) {
      const { definitions, parseCalls } = openAIToolRound(openAIChatFormat, tools, strict)
      const body: CreateParams = { ...params, model, messages: [...messages] }
      if (definitions.length > 0) body.tools = definitions
      const completion = await client.chat.completions.create(body, { signal })
      const message = completion?.choices?.[0]?.message
      if (message === undefined) throw new Error('openAIChatModel: the completion has no choices[0].message')
      const calls = parseCalls(completion)
      const reply: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = {
        role: 'assistant',
        content: message.content ?? null,
      }
      if (typeof message.refusal === 'string') reply.refusal = message.refusal
      const toolCalls = replyToolCalls(message)
      if (toolCalls.length > 0) reply.tool_calls = toolCalls
      return { messages: [reply], calls }
    },
  }
}
