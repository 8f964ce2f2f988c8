// Each provider's response to a scripted turn, whole and as its streaming events (real wire shapes).
import type { ProviderFormat } from '../providers/index.js'
import type { NativeSearchFound } from './native-search.js'
import { pieces, type Turn } from './script.js'

type Json = Record<string, unknown>

/** What a format's fake answers: the whole response, its stream events, and its error body. */
export interface WireFormat {
  /** `found`: the turn's native tool search, run by the fake over the request's deferred tools. */
  reply(turn: Turn, model: string, found?: NativeSearchFound): Json
  /** Server-sent events: `event` is the SSE event name (omitted where the API sends none). */
  events(turn: Turn, model: string, found?: NativeSearchFound): { event?: string; data: unknown }[]
  /** The stream's last line, when the API has one beyond its events (`data: [DONE]`). */
  readonly end?: string
  /** How many of the last events close the reply (a hanging turn never sends them). */
  readonly tail: number
  error(status: number, message: string): Json
}

const CREATED = 1_700_000_000

function callId(turn: Turn, k: number, prefix: string): string {
  return turn.calls[k].id ?? `${prefix}${turn.n}_${k}`
}

const openAIChat: WireFormat = {
  reply(turn, model) {
    const message: Json = { role: 'assistant', content: turn.text === '' ? null : turn.text, refusal: null }
    if (turn.calls.length > 0)
      message.tool_calls = turn.calls.map((call, k) => ({
        id: callId(turn, k, 'call_'),
        type: 'function',
        function: { name: call.name, arguments: call.args },
      }))
    return {
      id: `chatcmpl-${turn.n}`,
      object: 'chat.completion',
      created: CREATED,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: turn.calls.length > 0 ? 'tool_calls' : 'stop' }],
      usage: chatUsage(turn),
    }
  },
  events(turn, model) {
    const chunk = (delta: Json, finish: string | null = null) => ({
      data: {
        id: `chatcmpl-${turn.n}`,
        object: 'chat.completion.chunk',
        created: CREATED,
        model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      },
    })
    const out: { data: unknown }[] = [chunk({ role: 'assistant', content: '' })]
    // OpenAI-compatible servers that reason stream it as reasoning_content.
    for (const piece of pieces(turn.reasoning)) out.push(chunk({ reasoning_content: piece }))
    for (const piece of pieces(turn.text)) out.push(chunk({ content: piece }))
    turn.calls.forEach((call, k) => {
      out.push(
        chunk({
          tool_calls: [
            { index: k, id: callId(turn, k, 'call_'), type: 'function', function: { name: call.name, arguments: '' } },
          ],
        }),
      )
      for (const piece of pieces(call.args, 8))
        out.push(chunk({ tool_calls: [{ index: k, function: { arguments: piece } }] }))
    })
    out.push(chunk({}, turn.calls.length > 0 ? 'tool_calls' : 'stop'))
    // Sent because the adapter asks for it (stream_options.include_usage).
    out.push({
      data: {
        id: `chatcmpl-${turn.n}`,
        object: 'chat.completion.chunk',
        created: CREATED,
        model,
        choices: [],
        usage: chatUsage(turn),
      },
    })
    return out
  },
  end: 'data: [DONE]\n\n',
  tail: 2,
  error: (status, message) => ({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error' } }),
}

function chatUsage(turn: Turn): Json {
  const { inputTokens, outputTokens } = turn.usage
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: turn.usage.cachedInputTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: turn.usage.reasoningTokens ?? 0 },
  }
}

function responsesOutput(turn: Turn, found?: NativeSearchFound): Json[] {
  const output: Json[] = []
  if (turn.reasoning !== '')
    output.push({ type: 'reasoning', id: `rs_${turn.n}`, summary: [{ type: 'summary_text', text: turn.reasoning }] })
  if (found !== undefined) {
    // The hosted search: its call, then the loaded definitions (as the request declared them).
    const at = { call_id: null, execution: 'server', status: 'completed' }
    output.push({ type: 'tool_search_call', id: `tsc_${turn.n}`, ...at, arguments: { query: found.query } })
    output.push({ type: 'tool_search_output', id: `tso_${turn.n}`, ...at, tools: found.matches })
  }
  if (turn.text !== '')
    output.push({
      type: 'message',
      id: `msg_${turn.n}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    })
  turn.calls.forEach((call, k) => {
    output.push({
      type: 'function_call',
      id: `fc_${turn.n}_${k}`,
      call_id: callId(turn, k, 'call_'),
      name: call.name,
      arguments: call.args,
      status: 'completed',
    })
  })
  return output
}

function responsesBody(turn: Turn, model: string, status: string, output: Json[], usage: Json | null): Json {
  return {
    id: `resp_${turn.n}`,
    object: 'response',
    created_at: CREATED,
    status,
    model,
    output,
    error: null,
    incomplete_details: null,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage,
  }
}

function responsesUsage(turn: Turn): Json {
  const { inputTokens, outputTokens } = turn.usage
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    input_tokens_details: { cached_tokens: turn.usage.cachedInputTokens ?? 0 },
    output_tokens_details: { reasoning_tokens: turn.usage.reasoningTokens ?? 0 },
  }
}

const openAIResponses: WireFormat = {
  reply: (turn, model, found) =>
    responsesBody(turn, model, 'completed', responsesOutput(turn, found), responsesUsage(turn)),
  events(turn, model, found) {
    let sequence = 0
    const out: { event: string; data: unknown }[] = []
    const send = (type: string, fields: Json) =>
      out.push({ event: type, data: { type, sequence_number: sequence++, ...fields } })
    send('response.created', { response: responsesBody(turn, model, 'in_progress', [], null) })
    responsesOutput(turn, found).forEach((item, outputIndex) => {
      const itemId = String(item.id)
      if (item.type === 'tool_search_call' || item.type === 'tool_search_output') {
        send('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress' } })
      } else if (item.type === 'reasoning') {
        send('response.output_item.added', { output_index: outputIndex, item: { ...item, summary: [] } })
        const part = { type: 'summary_text', text: '' }
        send('response.reasoning_summary_part.added', {
          item_id: itemId,
          output_index: outputIndex,
          summary_index: 0,
          part,
        })
        for (const delta of pieces(turn.reasoning))
          send('response.reasoning_summary_text.delta', {
            item_id: itemId,
            output_index: outputIndex,
            summary_index: 0,
            delta,
          })
        send('response.reasoning_summary_text.done', {
          item_id: itemId,
          output_index: outputIndex,
          summary_index: 0,
          text: turn.reasoning,
        })
      } else if (item.type === 'message') {
        send('response.output_item.added', {
          output_index: outputIndex,
          item: { ...item, status: 'in_progress', content: [] },
        })
        const at = { item_id: itemId, output_index: outputIndex, content_index: 0 }
        send('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } })
        for (const delta of pieces(turn.text)) send('response.output_text.delta', { ...at, delta, logprobs: [] })
        send('response.output_text.done', { ...at, text: turn.text, logprobs: [] })
        send('response.content_part.done', { ...at, part: { type: 'output_text', text: turn.text, annotations: [] } })
      } else {
        send('response.output_item.added', {
          output_index: outputIndex,
          item: { ...item, arguments: '', status: 'in_progress' },
        })
        const args = String(item.arguments)
        for (const delta of pieces(args, 8))
          send('response.function_call_arguments.delta', { item_id: itemId, output_index: outputIndex, delta })
        send('response.function_call_arguments.done', { item_id: itemId, output_index: outputIndex, arguments: args })
      }
      send('response.output_item.done', { output_index: outputIndex, item })
    })
    send('response.completed', { response: openAIResponses.reply(turn, model, found) })
    return out
  },
  tail: 1,
  error: (status, message) => ({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error' } }),
}

/** The server tool's call and its result block, as the API puts them in the assistant's content. */
function anthropicSearch(turn: Turn, found: NativeSearchFound): [Json, Json] {
  const id = `srvtoolu_${turn.n}`
  return [
    { type: 'server_tool_use', id, name: found.tool, input: { query: found.query }, caller: { type: 'direct' } },
    {
      type: 'tool_search_tool_result',
      tool_use_id: id,
      content: {
        type: 'tool_search_tool_search_result',
        tool_references: found.matches.map((tool) => ({ type: 'tool_reference', tool_name: String(tool.name) })),
      },
    },
  ]
}

function anthropicContent(turn: Turn, found?: NativeSearchFound): Json[] {
  const content: Json[] = []
  if (turn.reasoning !== '') content.push({ type: 'thinking', thinking: turn.reasoning, signature: `sig_${turn.n}` })
  if (found !== undefined) content.push(...anthropicSearch(turn, found))
  if (turn.text !== '') content.push({ type: 'text', text: turn.text })
  turn.calls.forEach((call, k) => {
    let input: unknown
    try {
      input = JSON.parse(call.args)
    } catch {
      // The non-streaming API always sends an object; malformed text can only be streamed.
      input = {}
    }
    content.push({ type: 'tool_use', id: callId(turn, k, 'toolu_'), name: call.name, input })
  })
  return content
}

function anthropicStop(turn: Turn): string {
  return turn.pause ? 'pause_turn' : turn.calls.length > 0 ? 'tool_use' : 'end_turn'
}

function anthropicMessage(turn: Turn, model: string, content: Json[], outputTokens: number, stop: string | null): Json {
  return {
    id: `msg_${turn.n}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: turn.usage.inputTokens, output_tokens: outputTokens },
  }
}

const anthropic: WireFormat = {
  reply: (turn, model, found) =>
    anthropicMessage(turn, model, anthropicContent(turn, found), turn.usage.outputTokens, anthropicStop(turn)),
  events(turn, model, found) {
    const out: { event: string; data: unknown }[] = []
    const send = (type: string, fields: Json) => out.push({ event: type, data: { type, ...fields } })
    send('message_start', { message: anthropicMessage(turn, model, [], 1, null) })
    let index = 0
    const block = (start: Json, deltas: Json[]) => {
      send('content_block_start', { index, content_block: start })
      for (const delta of deltas) send('content_block_delta', { index, delta })
      send('content_block_stop', { index })
      index++
    }
    if (turn.reasoning !== '')
      block({ type: 'thinking', thinking: '', signature: '' }, [
        ...pieces(turn.reasoning).map((thinking) => ({ type: 'thinking_delta', thinking })),
        { type: 'signature_delta', signature: `sig_${turn.n}` },
      ])
    if (found !== undefined) {
      const [use, result] = anthropicSearch(turn, found)
      block({ ...use, input: {} }, [{ type: 'input_json_delta', partial_json: JSON.stringify(use.input) }])
      block(result, [])
    }
    if (turn.text !== '')
      block(
        { type: 'text', text: '' },
        pieces(turn.text).map((text) => ({ type: 'text_delta', text })),
      )
    turn.calls.forEach((call, k) => {
      block(
        { type: 'tool_use', id: callId(turn, k, 'toolu_'), name: call.name, input: {} },
        pieces(call.args, 8).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
      )
    })
    send('message_delta', {
      delta: { stop_reason: anthropicStop(turn), stop_sequence: null },
      usage: { output_tokens: turn.usage.outputTokens },
    })
    send('message_stop', {})
    return out
  },
  tail: 2,
  error: (status, message) => ({
    type: 'error',
    error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message },
  }),
}

function geminiParts(turn: Turn): Json[] {
  const parts: Json[] = []
  if (turn.reasoning !== '') parts.push({ text: turn.reasoning, thought: true })
  if (turn.text !== '') parts.push({ text: turn.text })
  for (const call of turn.calls) {
    let args: unknown
    try {
      args = JSON.parse(call.args)
    } catch {
      // Gemini sends arguments as an object: text that is not JSON goes as a bare string.
      args = call.args
    }
    parts.push({ functionCall: { ...(call.id !== undefined ? { id: call.id } : {}), name: call.name, args } })
  }
  return parts
}

function geminiUsage(turn: Turn): Json {
  const { inputTokens, outputTokens } = turn.usage
  const thoughts = turn.usage.reasoningTokens ?? 0
  return {
    promptTokenCount: inputTokens,
    candidatesTokenCount: outputTokens - thoughts,
    totalTokenCount: inputTokens + outputTokens,
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    ...(turn.usage.cachedInputTokens !== undefined ? { cachedContentTokenCount: turn.usage.cachedInputTokens } : {}),
  }
}

const gemini: WireFormat = {
  reply: (turn, model) => ({
    candidates: [{ content: { role: 'model', parts: geminiParts(turn) }, finishReason: 'STOP', index: 0 }],
    usageMetadata: geminiUsage(turn),
    modelVersion: model,
    responseId: `resp_${turn.n}`,
  }),
  events(turn, model) {
    const chunk = (parts: Json[], last: boolean) => ({
      data: {
        candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
        ...(last ? { usageMetadata: geminiUsage(turn) } : {}),
        modelVersion: model,
        responseId: `resp_${turn.n}`,
      },
    })
    const out: { data: unknown }[] = []
    for (const text of pieces(turn.reasoning)) out.push(chunk([{ text, thought: true }], false))
    for (const text of pieces(turn.text)) out.push(chunk([{ text }], false))
    // Gemini sends each function call whole, in one chunk.
    const calls = geminiParts(turn).filter((part) => part.functionCall !== undefined)
    out.push(chunk(calls, true))
    return out
  },
  tail: 1,
  error: (status, message) => ({
    error: { code: status, message, status: status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT' },
  }),
}

export const WIRE: { readonly [F in ProviderFormat]: WireFormat } = {
  'openai-chat': openAIChat,
  'openai-responses': openAIResponses,
  anthropic,
  gemini,
}
