// openAIResponsesModel: a ProviderModel over the official `openai` client's Responses API.
import type OpenAI from 'openai'
import { checkModelOptions } from './adapter-util.js'
import type { ModelRequest, ProviderModel } from './model.js'
import { openAIResponsesFormat, replyItems } from './openai-responses.js'
import { openAIToolRound } from './openai-tools.js'
import { accumulateOpenAIResponses } from './stream-accumulate.js'
import { checkToolSearch } from './tool-search.js'
import type { ProviderToolCall, ToolSearchMode } from './types.js'
import { usageOf } from './usage.js'

type CreateParams = OpenAI.Responses.ResponseCreateParamsNonStreaming

export interface OpenAIResponsesModelOptions {
  /** An `openai` client (`new OpenAI({ baseURL, apiKey })`). */
  readonly client: Pick<OpenAI, 'responses'>
  readonly model: string
  /** Send tools in strict mode where expressible (default `true`). */
  readonly strict?: boolean
  /** Further request fields (instructions, reasoning, max_output_tokens, …). */
  readonly params?: Omit<CreateParams, 'model' | 'input' | 'tools' | 'stream'>
  /**
   * `'native'`: deferred tools go out with `defer_loading` beside the hosted `tool_search` tool,
   * instead of toolgate's `search_tools` (models that support it: gpt-5.4 and later). Default `'toolgate'`.
   */
  readonly toolSearch?: ToolSearchMode
}

/**
 * Drive a model through the Responses API (non-streaming `POST /responses`). The whole
 * conversation is sent as `input` each step; the response's output items are appended as they
 * are (reasoning items included, which reasoning models need back).
 */
export function openAIResponsesModel(options: OpenAIResponsesModelOptions): ProviderModel<'openai-responses'> {
  const { client, model, params } = checkModelOptions(options, 'openAIResponsesModel')
  const strict = options.strict ?? true
  const toolSearch = checkToolSearch(options.toolSearch, 'openAIResponsesModel(options).toolSearch')
  const round = ({ messages, tools, deferred }: ModelRequest<'openai-responses'>) => {
    const { definitions, parseCalls } = openAIToolRound(openAIResponsesFormat, tools, strict, {
      name: 'openai-responses',
      toolSearch,
      ...(deferred !== undefined ? { deferred } : {}),
    })
    const body: CreateParams = { ...params, model, input: [...messages] }
    if (definitions.length > 0) body.tools = definitions
    return { body, parseCalls }
  }
  const reply = (response: unknown, parseCalls: (response: unknown) => ProviderToolCall[]) => {
    const output = (response as { output?: unknown } | undefined)?.output
    if (!Array.isArray(output)) throw new Error('openAIResponsesModel: the response has no output array')
    const usage = usageOf('openai-responses', response)
    return { messages: replyItems(output), calls: parseCalls(response), ...(usage !== undefined ? { usage } : {}) }
  }
  return {
    format: 'openai-responses',
    async generate(request) {
      const { body, parseCalls } = round(request)
      return reply(await client.responses.create(body, { signal: request.signal }), parseCalls)
    },
    async stream(request, onDelta) {
      const { body, parseCalls } = round(request)
      const events = await client.responses.create({ ...body, stream: true }, { signal: request.signal })
      return reply(await accumulateOpenAIResponses(events, onDelta), parseCalls)
    },
  }
}
