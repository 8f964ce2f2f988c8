// openAIResponsesModel: a ProviderModel over the official `openai` client's Responses API.
import type OpenAI from 'openai'
import { checkModelOptions } from './adapter-util.js'
import type { ProviderModel } from './model.js'
import { openAIResponsesFormat, replyItems } from './openai-responses.js'
import { openAIToolRound } from './openai-tools.js'

type CreateParams = OpenAI.Responses.ResponseCreateParamsNonStreaming

export interface OpenAIResponsesModelOptions {
  /** An `openai` client (`new OpenAI({ baseURL, apiKey })`). */
  readonly client: Pick<OpenAI, 'responses'>
  readonly model: string
  /** Send tools in strict mode where expressible (default `true`). */
  readonly strict?: boolean
  /** Further request fields (instructions, reasoning, max_output_tokens, …). */
  readonly params?: Omit<CreateParams, 'model' | 'input' | 'tools' | 'stream'>
}

/**
 * Drive a model through the Responses API (non-streaming `POST /responses`). The whole
 * conversation is sent as `input` each step; the response's output items are appended as they
 * are (reasoning items included, which reasoning models need back).
 */
export function openAIResponsesModel(options: OpenAIResponsesModelOptions): ProviderModel<'openai-responses'> {
  const { client, model, params } = checkModelOptions(options, 'openAIResponsesModel')
  const strict = options.strict ?? true
  return {
    format: 'openai-responses',
    async generate({ messages, tools, signal }) {
      const { definitions, parseCalls } = openAIToolRound(openAIResponsesFormat, tools, strict)
      const body: CreateParams = { ...params, model, input: [...messages] }
      if (definitions.length > 0) body.tools = definitions
      const response = await client.responses.create(body, { signal })
      if (!Array.isArray(response?.output)) throw new Error('openAIResponsesModel: the response has no output array')
      const calls = parseCalls(response)
      return { messages: replyItems(response.output), calls }
    },
  }
}
