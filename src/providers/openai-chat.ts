// Format 'openai-chat': OpenAI Chat Completions (and every OpenAI-compatible server).
import type OpenAI from 'openai'
import type { ContentBlock } from '../contract/content.js'
import type { FormatModule } from './format-module.js'
import { openAITools } from './openai-tools.js'
import {
  dataUrl,
  deferredMessages,
  errorPrefix,
  imagePlaceholder,
  isPortableImage,
  joinText,
  modelBlocks,
} from './result-content.js'
import { asArray, customCall, record, toolCall, wireArguments, wireInput } from './tool-calls.js'
import type { ProviderToolCall } from './types.js'

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam
type UserPart = OpenAI.Chat.Completions.ChatCompletionContentPart
type WireToolCall = OpenAI.Chat.Completions.ChatCompletionMessageToolCall

export const openAIChatFormat: FormatModule<'openai-chat'> = {
  hasStrictMode: true,

  toTools(schemas, strict) {
    return openAITools(schemas, strict, ({ name, description, parameters, strict }) => ({
      type: 'function' as const,
      function: { name, description, parameters, strict },
    }))
  },

  parseToolCalls(response, nullAbsent) {
    const message = record(record(asArray(record(response)?.choices)[0])?.message)
    const calls: ProviderToolCall[] = []
    for (const entry of asArray(message?.tool_calls)) {
      const raw = record(entry)
      if (raw === undefined) continue
      const id = String(raw.id ?? '')
      const fn = record(raw.function)
      if (fn !== undefined) calls.push(toolCall(id, String(fn.name ?? ''), fn.arguments, nullAbsent))
      // A non-function (custom) call still needs its answer, or the next request is rejected.
      else calls.push(customCall(id, String(record(raw.custom)?.name ?? raw.type ?? ''), raw.type))
    }
    return calls
  },

  toMessages(batch) {
    const messages: ChatMessage[] = []
    const images: UserPart[] = []
    for (const { call, result } of batch.results) {
      let shown = 0
      const text = joinText(result.content, (block) => {
        if (!isPortableImage(block)) return imagePlaceholder(block)
        if (shown === 0)
          images.push({
            type: 'text',
            text: `Images returned by tool call ${JSON.stringify(call.callId)} (${call.name}):`,
          })
        shown++
        images.push({ type: 'image_url', image_url: { url: dataUrl(block) } })
        return imagePlaceholder(block, `#${shown}: attached in the next user message`)
      })
      messages.push({ role: 'tool', tool_call_id: call.callId, content: `${errorPrefix(result)}${text}` })
    }
    // Chat tool messages carry text only, so images follow as one user message after all results.
    if (images.length > 0) messages.push({ role: 'user', content: images })
    for (const context of deferredMessages(batch.results))
      messages.push({ role: 'user', content: userParts(context.content) })
    return messages
  },
}

function userParts(content: readonly ContentBlock[]): UserPart[] {
  const parts: UserPart[] = []
  for (const block of modelBlocks(content)) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text })
    else if (isPortableImage(block)) parts.push({ type: 'image_url', image_url: { url: dataUrl(block) } })
    else parts.push({ type: 'text', text: imagePlaceholder(block) })
  }
  if (parts.length === 0) parts.push({ type: 'text', text: '(empty message)' })
  return parts
}

/**
 * The tool calls of a completion's message as the next request must carry them: exactly the calls
 * `parseToolCalls` reads (same ids and names, in order), with the arguments as a string of JSON
 * whatever type the server sent them in.
 */
export function replyToolCalls(message: unknown): WireToolCall[] {
  const out: WireToolCall[] = []
  for (const entry of asArray(record(message)?.tool_calls)) {
    const raw = record(entry)
    if (raw === undefined) continue
    const id = String(raw.id ?? '')
    const fn = record(raw.function)
    if (fn !== undefined) {
      out.push({
        id,
        type: 'function',
        function: { name: String(fn.name ?? ''), arguments: wireArguments(fn.arguments) },
      })
    } else {
      const custom = record(raw.custom)
      const name = String(custom?.name ?? raw.type ?? '')
      out.push({ id, type: 'custom', custom: { name, input: wireInput(custom?.input) } })
    }
  }
  return out
}
