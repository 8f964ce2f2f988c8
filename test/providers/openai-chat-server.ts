// A fake OpenAI Chat Completions server (127.0.0.1) that validates conversations like the real API.
import OpenAI from 'openai'
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import { expectWire, startFakeServer } from './fake-server.js'
import type { Turn } from './wire-suite.js'

function completion(turn: Turn): ChatCompletion {
  const message: ChatCompletion.Choice['message'] =
    typeof turn === 'string'
      ? { role: 'assistant', content: turn, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: turn.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: args } })),
        }
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'fake',
    choices: [{ index: 0, finish_reason: typeof turn === 'string' ? 'stop' : 'tool_calls', logprobs: null, message }],
  }
}

/**
 * What the real API validates about a conversation: each assistant message with tool_calls is
 * followed by exactly one tool message per call id (in any order) before any other message;
 * tool messages carry text only.
 */
function validateConversation(messages: ChatCompletionMessageParam[]): void {
  messages.forEach((message, i) => {
    if (message.role === 'tool')
      expectWire(
        messages[i - 1]?.role === 'tool' || messages[i - 1]?.role === 'assistant',
        `messages[${i}]: stray tool message`,
      )
    if (message.role !== 'assistant' || !message.tool_calls) return
    expectWire(message.tool_calls.length > 0, `messages[${i}].tool_calls: empty array`)
    const answered: string[] = []
    for (let j = i + 1; j < messages.length && messages[j].role === 'tool'; j++) {
      const tool = messages[j] as ChatCompletionToolMessageParam
      const ok = typeof tool.content === 'string' || tool.content.every((p) => p.type === 'text')
      expectWire(ok, `messages[${j}].content: tool messages take text only`)
      answered.push(tool.tool_call_id)
    }
    for (const call of message.tool_calls) {
      const count = answered.filter((a) => a === call.id).length
      expectWire(count === 1, `tool_call_id ${call.id} answered ${count} times`)
    }
    expectWire(answered.length === message.tool_calls.length, `messages[${i}]: answers for calls never made`)
  })
}

export async function chatServer(script: Turn[]) {
  let next = 0
  const bodies: ChatCompletionCreateParamsNonStreaming[] = []
  const server = await startFakeServer(
    (request) => {
      expectWire(request.method === 'POST' && request.path === '/v1/chat/completions', `unexpected ${request.path}`)
      expectWire(request.headers.authorization === 'Bearer test-key', 'missing bearer token')
      const body = request.body as ChatCompletionCreateParamsNonStreaming
      bodies.push(body)
      validateConversation(body.messages)
      const turn = script[next++]
      expectWire(turn !== undefined, 'more requests than scripted')
      return { body: completion(turn) }
    },
    (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
  )
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key', maxRetries: 0 })
  return { server, client, bodies }
}
