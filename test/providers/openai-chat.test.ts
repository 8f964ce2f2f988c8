// Wire test: the official `openai` client, Chat Completions, against a local fake (issue #12).
import OpenAI from 'openai'
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions'
import { afterEach, describe, expect, it } from 'vitest'
import { openAIChatModel, runModelLoop } from '../../src/providers/index.js'
import { expectWire, type FakeServer, startFakeServer } from './fake-server.js'
import { checkAbortTurn, checkMainTurn, PNG, scenario, TURN_ABORT, TURN_ONE, TURN_TWO } from './scenario.js'

type Turn = readonly (readonly [string, string, string])[]

function completion(turn: Turn | string): ChatCompletion {
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
 * followed by exactly one tool message per call id (in any order) before any other message.
 */
function validateConversation(messages: ChatCompletionMessageParam[]): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]
    if (message.role !== 'assistant' || !message.tool_calls) continue
    expectWire(message.tool_calls.length > 0, `messages[${i}].tool_calls: empty array`)
    const expected = message.tool_calls.map((c) => c.id)
    const answered: string[] = []
    let j = i + 1
    for (; j < messages.length && messages[j].role === 'tool'; j++) {
      const tool = messages[j] as Extract<ChatCompletionMessageParam, { role: 'tool' }>
      expectWire(typeof tool.content === 'string' || Array.isArray(tool.content), `messages[${j}].content: invalid`)
      if (Array.isArray(tool.content))
        expectWire(
          tool.content.every((p) => p.type === 'text'),
          `messages[${j}].content: tool messages take text parts only`,
        )
      answered.push(tool.tool_call_id)
    }
    for (const id of expected)
      expectWire(
        answered.filter((a) => a === id).length === 1,
        `tool_call_id ${id} answered ${answered.filter((a) => a === id).length} times`,
      )
    expectWire(
      answered.length === expected.length,
      `messages[${i}]: ${answered.length} tool messages for ${expected.length} calls`,
    )
  }
}

async function chatServer(script: (Turn | string)[]) {
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

let open: FakeServer | undefined
afterEach(async () => {
  await open?.close()
  open = undefined
})

describe('openai-chat through the official client (issue #12)', () => {
  it('runs a multi-step turn: parallel, exclusive, image, throw, denial, malformed JSON, strict null', async () => {
    const { tools, agent, log, seenArgs } = await scenario()
    const { server, client, bodies } = await chatServer([TURN_ONE, TURN_TWO, 'All done.'])
    open = server
    const events: string[] = []
    const run = await runModelLoop({
      tools,
      agent,
      model: openAIChatModel({ client, model: 'fake' }),
      messages: [{ role: 'user', content: 'go' }],
      onEvent: (e) => events.push(e.type === 'tool-result' ? `${e.type}:${e.call.callId}` : e.type),
    })
    expect(server.violations).toEqual([])
    checkMainTurn(run, log, seenArgs)
    expect(bodies).toHaveLength(3)

    // Tools went out strict; the optional `limit` is required-but-nullable.
    const search = bodies[0].tools?.find((t) => t.type === 'function' && t.function.name === 'search')
    expect(search).toEqual({
      type: 'function',
      function: {
        name: 'search',
        description: 'Search, optionally limited.',
        strict: true,
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string' },
            limit: { type: ['integer', 'null'], description: 'at most this many hits' },
          },
          required: ['query', 'limit'],
          additionalProperties: false,
        },
      },
    })

    // The second request: assistant turn, eight tool messages in call order, then the image as a user message.
    const second = bodies[1].messages
    expect(second.slice(0, 2).map((m) => m.role)).toEqual(['user', 'assistant'])
    const toolMessages = second.slice(2, 10) as Extract<ChatCompletionMessageParam, { role: 'tool' }>[]
    expect(toolMessages.map((m) => [m.role, m.tool_call_id])).toEqual(TURN_ONE.map(([id]) => ['tool', id]))
    const text = Object.fromEntries(toolMessages.map((m) => [m.tool_call_id, m.content as string]))
    expect(text.c1).toBe('contents of a.txt')
    expect(text.c5).toBe('Error (TOOL_ERROR): kaboom')
    expect(text.c6).toMatch(/^Error \(TOOL_DENIED\): .*secrets are off-limits/)
    expect(text.c7).toMatch(/^Error \(INVALID_ARGS\): Invalid arguments for read: arguments are not valid JSON/)
    expect(text.c4).toMatch(/^a screenshot\n\[image \(image\/png\) #1: attached in the next user message\]$/)
    expect(second[10]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Images returned by tool call "c4" (snapshot):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      ],
    })
    expect(second).toHaveLength(11)
    expect(bodies[2].messages).toHaveLength(13)
    expect(run.messages.at(-1)).toEqual({ role: 'assistant', content: 'All done.' })
    expect(events.filter((e) => e === 'model-request')).toHaveLength(3)
    expect(events.filter((e) => e.startsWith('tool-result:')).sort()).toEqual(
      [...TURN_ONE, ...TURN_TWO].map(([id]) => `tool-result:${id}`).sort(),
    )
  })

  it('an abort mid-batch still answers every emitted call, and the conversation stays valid', async () => {
    const { tools, agent, slowStarted } = await scenario()
    const { server, client, bodies } = await chatServer([TURN_ABORT, 'unused', 'validated'])
    open = server
    const controller = new AbortController()
    slowStarted.then(() => controller.abort(new Error('user pressed stop')))
    const run = await runModelLoop({
      tools,
      agent,
      model: openAIChatModel({ client, model: 'fake' }),
      messages: [{ role: 'user', content: 'go' }],
      signal: controller.signal,
    })
    checkAbortTurn(run)
    expect(bodies).toHaveLength(1)
    expect(run.messages.slice(2).map((m) => m.role === 'tool' && m.tool_call_id)).toEqual(['s1', 's2'])
    // The next request, made with the aborted conversation, is one the API accepts.
    await client.chat.completions.create({ model: 'fake', messages: run.messages })
    expect(server.violations).toEqual([])
  })

  it('sends a tool non-strict and lists why when strict mode cannot express it', async () => {
    const { tools, agent } = await scenario()
    tools.register({
      name: 'free',
      description: 'Takes anything.',
      parameters: { type: 'object', properties: { blob: {} } },
      output: { schema: {}, render: () => [{ type: 'text', text: 'ok' }] },
      execute: async () => null,
    })
    const { server, client, bodies } = await chatServer(['nothing to do'])
    open = server
    const run = await runModelLoop({
      tools,
      agent,
      model: openAIChatModel({ client, model: 'fake' }),
      messages: [{ role: 'user', content: 'go' }],
    })
    expect(run.stopReason).toBe('done')
    const free = bodies[0].tools?.find((t) => t.type === 'function' && t.function.name === 'free')
    expect(free).toEqual({
      type: 'function',
      function: {
        name: 'free',
        description: 'Takes anything.',
        strict: false,
        parameters: { type: 'object', properties: { blob: {} } },
      },
    })
  })
})
