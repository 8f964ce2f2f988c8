// Each provider's streaming events folded back into the response its non-streaming API returns,
// reporting text, reasoning and tool-call argument pieces on the way. Events are read as untrusted
// JSON: a field of the wrong type is ignored, never trusted.
import type { ModelDelta } from './model.js'

type Json = Record<string, unknown>
type OnDelta = (delta: ModelDelta) => void

function record(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function index(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** A streaming request that ended without the provider's own end marker (the loop wraps it). */
function incomplete(api: string, what: string): Error {
  return new Error(`${api}: the stream ended ${what}`)
}

interface ChatToolCall {
  id: string
  type: string
  function: { name: string; arguments: string }
}

/** Chat Completions chunks (`stream: true`) → a `ChatCompletion`-shaped object (first choice only). */
export async function accumulateOpenAIChat(chunks: AsyncIterable<unknown>, onDelta: OnDelta): Promise<Json> {
  let content: string | null = null
  let refusal: string | null = null
  let finish: string | null = null
  let usage: unknown
  let id: string | undefined
  let model: string | undefined
  // Keyed by the wire's index (a server may number calls with gaps); reported by order of appearance.
  const calls = new Map<number, ChatToolCall & { at: number }>()
  for await (const raw of chunks) {
    const chunk = record(raw)
    if (chunk === undefined) continue
    id ??= text(chunk.id)
    model ??= text(chunk.model)
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
    const choice = record((Array.isArray(chunk.choices) ? chunk.choices : []).find((c) => record(c)?.index === 0))
    if (choice === undefined) continue
    finish = text(choice.finish_reason) ?? finish
    const delta = record(choice.delta)
    if (delta === undefined) continue
    const piece = text(delta.content)
    if (piece !== undefined && piece !== '') {
      content = (content ?? '') + piece
      onDelta({ type: 'text-delta', text: piece })
    }
    // Chat Completions has no reasoning field; OpenAI-compatible servers that stream one use these names.
    const thought = text(delta.reasoning_content) ?? text(delta.reasoning)
    if (thought !== undefined && thought !== '') onDelta({ type: 'reasoning-delta', text: thought })
    const refused = text(delta.refusal)
    if (refused !== undefined) refusal = (refusal ?? '') + refused
    for (const entry of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const part = record(entry)
      if (part === undefined) continue
      // Some compatible servers omit the index: a new id opens a call (under a key no wire index
      // uses), anything else continues the last call.
      const id = text(part.id)
      const fresh = id !== undefined && ![...calls.values()].some((call) => call.id === id)
      const at = index(part.index) ?? (fresh || calls.size === 0 ? -(calls.size + 1) : [...calls.keys()].at(-1))
      if (at === undefined) continue
      const fn = record(part.function)
      let call = calls.get(at)
      if (call === undefined) {
        call = { at: calls.size, id: '', type: 'function', function: { name: '', arguments: '' } }
        calls.set(at, call)
      }
      const callId = text(part.id)
      const name = text(fn?.name)
      const args = text(fn?.arguments) ?? ''
      if (callId !== undefined && callId !== '') call.id = callId
      if (name !== undefined && name !== '') call.function.name = name
      call.function.arguments += args
      onDelta({
        type: 'tool-call-delta',
        index: call.at,
        ...(callId ? { callId } : {}),
        ...(name ? { name } : {}),
        argumentsDelta: args,
      })
    }
  }
  // The SDK ends an aborted stream quietly: without a finish reason the reply is cut short.
  if (finish === null) throw incomplete('openAIChatModel', 'before a finish_reason')
  const toolCalls = [...calls.values()].map(({ at: _, ...call }) => call)
  const message: Json = { role: 'assistant', content, refusal }
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  return { id, model, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }
}

/** Responses API events (`stream: true`) → the final `Response` (from `response.completed`). */
export async function accumulateOpenAIResponses(events: AsyncIterable<unknown>, onDelta: OnDelta): Promise<Json> {
  // Output items that are function or custom tool calls, numbered in order of appearance.
  const callAt = new Map<string, number>()
  for await (const raw of events) {
    const event = record(raw)
    if (event === undefined) continue
    switch (event.type) {
      case 'response.output_text.delta': {
        const piece = text(event.delta)
        if (piece) onDelta({ type: 'text-delta', text: piece })
        break
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const piece = text(event.delta)
        if (piece) onDelta({ type: 'reasoning-delta', text: piece })
        break
      }
      case 'response.output_item.added': {
        const item = record(event.item)
        const itemId = text(item?.id)
        if (item === undefined || itemId === undefined) break
        if (item.type !== 'function_call' && item.type !== 'custom_tool_call') break
        const at = callAt.size
        callAt.set(itemId, at)
        const callId = text(item.call_id)
        const name = text(item.name)
        onDelta({
          type: 'tool-call-delta',
          index: at,
          ...(callId ? { callId } : {}),
          ...(name ? { name } : {}),
          argumentsDelta: text(item.type === 'function_call' ? item.arguments : item.input) ?? '',
        })
        break
      }
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        const at = callAt.get(text(event.item_id) ?? '')
        const piece = text(event.delta)
        if (at !== undefined && piece) onDelta({ type: 'tool-call-delta', index: at, argumentsDelta: piece })
        break
      }
      case 'response.completed': {
        const response = record(event.response)
        if (response === undefined) throw incomplete('openAIResponsesModel', 'with a malformed response')
        return response
      }
      case 'response.incomplete':
      case 'response.failed': {
        const response = record(event.response)
        const reason =
          text(record(response?.error)?.message) ?? text(record(response?.incomplete_details)?.reason) ?? 'no reason'
        throw new Error(`openAIResponsesModel: ${String(event.type)} (${reason})`)
      }
      case 'error':
        throw new Error(`openAIResponsesModel: the stream reported an error: ${text(event.message) ?? 'no message'}`)
    }
  }
  throw incomplete('openAIResponsesModel', 'before response.completed')
}

/** Messages API events (`stream: true`) → the final `Message`; a tool_use input stays text until parsed. */
export async function accumulateAnthropic(events: AsyncIterable<unknown>, onDelta: OnDelta): Promise<Json> {
  let message: Json | undefined
  const blocks: Json[] = []
  // tool_use input arrives as JSON text; it is parsed by parseToolCalls like any raw argument text.
  const partial = new Map<number, string>()
  const callAt = new Map<number, number>()
  let stopped = false
  for await (const raw of events) {
    const event = record(raw)
    if (event === undefined) continue
    switch (event.type) {
      case 'message_start': {
        const start = record(event.message)
        message = { ...start, content: blocks }
        break
      }
      case 'content_block_start': {
        const at = index(event.index)
        const block = record(event.content_block)
        if (at === undefined || block === undefined) break
        blocks[at] = { ...block }
        if (block.type === 'tool_use' || block.type === 'server_tool_use') {
          partial.set(at, '')
          if (block.type === 'tool_use') {
            const call = callAt.size
            callAt.set(at, call)
            const callId = text(block.id)
            const name = text(block.name)
            onDelta({
              type: 'tool-call-delta',
              index: call,
              ...(callId ? { callId } : {}),
              ...(name ? { name } : {}),
              argumentsDelta: '',
            })
          }
        }
        break
      }
      case 'content_block_delta': {
        const at = index(event.index)
        const delta = record(event.delta)
        const block = at === undefined ? undefined : blocks[at]
        if (at === undefined || block === undefined || delta === undefined) break
        if (delta.type === 'text_delta') {
          const piece = text(delta.text) ?? ''
          block.text = (text(block.text) ?? '') + piece
          if (piece) onDelta({ type: 'text-delta', text: piece })
        } else if (delta.type === 'thinking_delta') {
          const piece = text(delta.thinking) ?? ''
          block.thinking = (text(block.thinking) ?? '') + piece
          if (piece) onDelta({ type: 'reasoning-delta', text: piece })
        } else if (delta.type === 'signature_delta') {
          block.signature = (text(block.signature) ?? '') + (text(delta.signature) ?? '')
        } else if (delta.type === 'input_json_delta') {
          const piece = text(delta.partial_json) ?? ''
          partial.set(at, (partial.get(at) ?? '') + piece)
          const call = callAt.get(at)
          if (call !== undefined && piece) onDelta({ type: 'tool-call-delta', index: call, argumentsDelta: piece })
        } else if (delta.type === 'citations_delta') {
          const citation = delta.citation
          block.citations = [...(Array.isArray(block.citations) ? block.citations : []), citation]
        }
        break
      }
      case 'content_block_stop': {
        const at = index(event.index)
        const block = at === undefined ? undefined : blocks[at]
        const json = at === undefined ? undefined : partial.get(at)
        if (block === undefined || json === undefined) break
        // Whole JSON becomes the object the API would have sent; malformed text stays for parseToolCalls.
        if (json.trim() === '') block.input = {}
        else {
          try {
            block.input = JSON.parse(json)
          } catch {
            block.input = json
          }
        }
        break
      }
      case 'message_delta': {
        if (message === undefined) break
        const delta = record(event.delta)
        if (delta !== undefined) {
          if ('stop_reason' in delta) message.stop_reason = delta.stop_reason
          if ('stop_sequence' in delta) message.stop_sequence = delta.stop_sequence
        }
        // The final counts replace the start's (output_tokens always; the others when sent).
        const counts = record(event.usage)
        if (counts !== undefined) message.usage = { ...record(message.usage), ...counts }
        break
      }
      case 'message_stop':
        stopped = true
        break
      case 'error':
        throw new Error(
          `anthropicModel: the stream reported an error: ${text(record(event.error)?.message) ?? 'no message'}`,
        )
    }
  }
  if (message === undefined || !stopped) throw incomplete('anthropicModel', 'before message_stop')
  message.content = blocks.filter((block) => block !== undefined)
  return message
}

/**
 * `generateContentStream` chunks → one `GenerateContentResponse`-shaped object: the first
 * candidate's parts in order, adjacent text pieces of the same kind joined, usage from the last
 * chunk that has it.
 */
export async function accumulateGemini(chunks: AsyncIterable<unknown>, onDelta: OnDelta): Promise<Json> {
  const parts: Json[] = []
  let role: string | undefined
  let finishReason: unknown
  let usageMetadata: unknown
  let calls = 0
  for await (const raw of chunks) {
    const chunk = record(raw)
    if (chunk === undefined) continue
    if (chunk.usageMetadata !== undefined) usageMetadata = chunk.usageMetadata
    const candidate = record(Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined)
    if (candidate === undefined) continue
    if (candidate.finishReason !== undefined) finishReason = candidate.finishReason
    const content = record(candidate.content)
    role = text(content?.role) ?? role
    for (const entry of Array.isArray(content?.parts) ? content.parts : []) {
      const part = record(entry)
      if (part === undefined) continue
      const piece = text(part.text)
      const call = record(part.functionCall)
      if (piece !== undefined) {
        onDelta(part.thought === true ? { type: 'reasoning-delta', text: piece } : { type: 'text-delta', text: piece })
        const last = parts.at(-1)
        // Join with the previous text part of the same kind, unless a signature closes that part.
        if (
          last !== undefined &&
          typeof last.text === 'string' &&
          (last.thought === true) === (part.thought === true) &&
          last.thoughtSignature === undefined
        ) {
          last.text += piece
          if (part.thoughtSignature !== undefined) last.thoughtSignature = part.thoughtSignature
          continue
        }
      } else if (call !== undefined) {
        const callId = text(call.id)
        const name = text(call.name)
        onDelta({
          type: 'tool-call-delta',
          index: calls++,
          ...(callId ? { callId } : {}),
          ...(name ? { name } : {}),
          argumentsDelta: JSON.stringify(call.args ?? {}),
        })
      }
      parts.push({ ...part })
    }
  }
  if (finishReason === undefined) throw incomplete('geminiModel', 'before a finishReason')
  return {
    candidates: [
      { content: { role: role ?? 'model', parts }, ...(finishReason !== undefined ? { finishReason } : {}) },
    ],
    ...(usageMetadata !== undefined ? { usageMetadata } : {}),
  }
}
