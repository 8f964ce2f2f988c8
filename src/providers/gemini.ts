// Format 'gemini': the Gemini API (functionDeclarations, functionCall / functionResponse parts).

import { randomUUID } from 'node:crypto'
import type { Content, FunctionResponsePart, Part } from '@google/genai'
import type { ContentBlock } from '../contract/content.js'
import type { FormatModule } from './format-module.js'
import { toGeminiSchema } from './gemini-schema.js'
import {
  deferredMessages,
  errorCode,
  imagePlaceholder,
  isPortableImage,
  joinText,
  modelBlocks,
} from './result-content.js'
import { asArray, record, toolCall } from './tool-calls.js'
import type { ProviderToolCall } from './types.js'

/** Prefix of a call id toolgate made up because the model sent none (never sent back to Gemini). */
export const SYNTHETIC_ID_PREFIX = 'toolgate-gemini-'

export const geminiFormat: FormatModule<'gemini'> = {
  hasStrictMode: false,

  toTools(schemas) {
    const downgrades: string[] = []
    const functionDeclarations = schemas.map(({ name, description, parameters }) => {
      const projected = toGeminiSchema(parameters, `${name}.parameters`)
      downgrades.push(...projected.downgrades)
      return { name, description, parametersJsonSchema: projected.schema }
    })
    return { tools: functionDeclarations.length > 0 ? [{ functionDeclarations }] : [], downgrades }
  },

  parseToolCalls(response, nullableSchemas) {
    const root = record(response)
    const content =
      root !== undefined && 'candidates' in root ? record(record(asArray(root.candidates)[0])?.content) : root
    const calls: ProviderToolCall[] = []
    for (const entry of asArray(content?.parts)) {
      const call = record(record(entry)?.functionCall)
      if (call === undefined) continue
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : `${SYNTHETIC_ID_PREFIX}${randomUUID()}`
      calls.push(toolCall(id, String(call.name ?? ''), call.args, nullableSchemas))
    }
    return calls
  },

  toMessages(batch) {
    const parts: Part[] = []
    for (const { call, result } of batch.results) {
      const images: FunctionResponsePart[] = []
      const text = joinText(result.content, (block) => {
        if (!isPortableImage(block)) return imagePlaceholder(block)
        images.push({ inlineData: { mimeType: block.mediaType, data: block.data } })
        return imagePlaceholder(block, `#${images.length}: attached to this response`)
      })
      const code = errorCode(result)
      const functionResponse: NonNullable<Part['functionResponse']> = {
        name: call.name,
        // Gemini's convention: "output" for a result, "error" for a failure.
        response: code === undefined ? { output: text } : { error: text, code },
      }
      if (!call.callId.startsWith(SYNTHETIC_ID_PREFIX)) functionResponse.id = call.callId
      if (images.length > 0) functionResponse.parts = images
      parts.push({ functionResponse })
    }
    const contents: Content[] = parts.length > 0 ? [{ role: 'user', parts }] : []
    for (const context of deferredMessages(batch.results))
      contents.push({ role: 'user', parts: geminiParts(context.content) })
    return contents
  },
}

function geminiParts(content: readonly ContentBlock[]): Part[] {
  const out: Part[] = []
  for (const block of modelBlocks(content)) {
    if (block.type === 'text') out.push({ text: block.text })
    else if (isPortableImage(block)) out.push({ inlineData: { mimeType: block.mediaType, data: block.data } })
    else out.push({ text: imagePlaceholder(block) })
  }
  return out.length > 0 ? out : [{ text: '(empty message)' }]
}
