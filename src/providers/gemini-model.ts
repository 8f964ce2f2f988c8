// geminiModel: a ProviderModel over the official `@google/genai` client's generateContent.
import type { GenerateContentConfig, GoogleGenAI } from '@google/genai'
import { isRecord } from '../util/is-record.js'
import { checkModelOptions } from './adapter-util.js'
import { geminiFormat } from './gemini.js'
import type { ProviderModel } from './model.js'
import { nullAbsentSchemas } from './tool-calls.js'

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
  return {
    format: 'gemini',
    async generate({ messages, tools, signal }) {
      const { tools: definitions } = geminiFormat.toTools(tools, false)
      const requestConfig: GenerateContentConfig = { ...config }
      if (definitions.length > 0) requestConfig.tools = definitions
      if (signal !== undefined) requestConfig.abortSignal = signal
      const response = await client.models.generateContent({ model, contents: [...messages], config: requestConfig })
      const content = response?.candidates?.[0]?.content
      if (content === undefined) throw new Error('geminiModel: the response has no candidates[0].content')
      const calls = geminiFormat.parseToolCalls(response, nullAbsentSchemas({ schemas: tools }, false))
      // functionCall.args must be an object when sent back: a malformed one goes back empty.
      const parts = content.parts?.map((part) =>
        part.functionCall !== undefined && !isRecord(part.functionCall.args)
          ? { ...part, functionCall: { ...part.functionCall, args: {} } }
          : part,
      )
      return { messages: [{ ...content, role: content.role ?? 'model', ...(parts ? { parts } : {}) }], calls }
    },
  }
}
