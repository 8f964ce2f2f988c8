// geminiModel: a ProviderModel over the official `@google/genai` client's generateContent.
import type { GenerateContentConfig, GenerateContentResponse, GoogleGenAI } from '@google/genai'
import { isRecord } from '../util/is-record.js'
import { checkModelOptions } from './adapter-util.js'
import { geminiFormat } from './gemini.js'
import type { ModelRequest, ProviderModel } from './model.js'
import { accumulateGemini } from './stream-accumulate.js'
import { nullAbsentSchemas } from './tool-calls.js'
import { usageOf } from './usage.js'

export interface GeminiModelOptions {
  /** A `@google/genai` client (`new GoogleGenAI({ apiKey })`). */
  readonly client: Pick<GoogleGenAI, 'models'>
  readonly model: string
  /** Further generation config (systemInstruction, temperature, thinkingConfig, …). */
  readonly config?: Omit<GenerateContentConfig, 'tools' | 'abortSignal'>
}

/**
 * Drive a Gemini model (non-streaming `generateContent`). The candidate's content is appended as
 * it is, so thought signatures go back to the model as Gemini requires.
 */
export function geminiModel(options: GeminiModelOptions): ProviderModel<'gemini'> {
  const { client, model, config } = checkModelOptions(options, 'geminiModel')
  const request = ({ messages, tools, signal }: ModelRequest<'gemini'>) => {
    const { tools: definitions } = geminiFormat.toTools(tools, false)
    const requestConfig: GenerateContentConfig = { ...config }
    if (definitions.length > 0) requestConfig.tools = definitions
    if (signal !== undefined) requestConfig.abortSignal = signal
    return { model, contents: [...messages], config: requestConfig }
  }
  const reply = (found: unknown, { tools }: ModelRequest<'gemini'>) => {
    const response = found as GenerateContentResponse | undefined
    const content = response?.candidates?.[0]?.content
    if (response === undefined || content === undefined)
      throw new Error('geminiModel: the response has no candidates[0].content')
    const calls = geminiFormat.parseToolCalls(response, nullAbsentSchemas({ schemas: tools }, false))
    // functionCall.args must be an object when sent back: a malformed one goes back empty.
    const parts = content.parts?.map((part) =>
      part.functionCall !== undefined && !isRecord(part.functionCall.args)
        ? { ...part, functionCall: { ...part.functionCall, args: {} } }
        : part,
    )
    const usage = usageOf('gemini', response)
    return {
      messages: [{ ...content, role: content.role ?? 'model', ...(parts ? { parts } : {}) }],
      calls,
      ...(usage !== undefined ? { usage } : {}),
    }
  }
  return {
    format: 'gemini',
    async generate(given) {
      return reply(await client.models.generateContent(request(given)), given)
    },
    async stream(given, onDelta) {
      return reply(await accumulateGemini(await client.models.generateContentStream(request(given)), onDelta), given)
    },
  }
}
