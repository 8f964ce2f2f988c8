// Issue 22, "Valid conversations": whatever type an OpenAI-compatible server sends a call's arguments
// in, and whatever kind of call it is, the next request the loop sends is one OpenAI accepts.
import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/preset/create.js'
import { runModelLoop } from '../../src/providers/index.js'
import { openAIChatModel, openAIResponsesModel } from '../../src/providers/openai/index.js'
import { defineTool } from '../../src/schema/define-tool.js'
import { expectWire, type FakeServer, startFakeServer } from './fake-server.js'

type Json = Record<string, unknown>

let open: FakeServer | undefined
afterEach(async () => {
  await open?.close()
  open = undefined
})

async function echoTools() {
  const { tools } = await createToolRuntime()
  const seen: unknown[] = []
  tools.register(
    defineTool({
      name: 'echo',
      description: 'Echo.',
      parameters: { text: { type: 'string' } },
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async (args) => {
        seen.push(args)
        return String(args.text ?? '(nothing)')
      },
    }),
  )
  return { tools, seen }
}

/** A fake server answering `replies` in order; every request is validated like the real API. */
async function fakeOpenAI(path: string, replies: unknown[], validate: (body: Json) => void) {
  const bodies: Json[] = []
  let next = 0
  const server = await startFakeServer(
    (request) => {
      expectWire(request.method === 'POST' && request.path === path, `unexpected ${request.path}`)
      const body = request.body as Json
      bodies.push(body)
      validate(body)
      const reply = replies[next++]
      expectWire(reply !== undefined, 'more requests than scripted')
      return { body: reply }
    },
    (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
  )
  open = server
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key', maxRetries: 0 })
  return { server, client, bodies }
}

/** Chat Completions: tool_calls arguments and custom inputs must be strings; every call answered once. */
function validateChat(body: Json): void {
  const messages = body.messages as Json[]
  messages.forEach((message, i) => {
    if (message.role !== 'assistant' || !Array.isArray(message.tool_calls)) return
    const answered = new Map<string, number>()
    for (let j = i + 1; j < messages.length && messages[j].role === 'tool'; j++) {
      const id = String(messages[j].tool_call_id)
      answered.set(id, (answered.get(id) ?? 0) + 1)
    }
    for (const call of message.tool_calls as Json[]) {
      expectWire(typeof call.id === 'string', `messages[${i}].tool_calls: id must be a string`)
      if (call.type === 'function') {
        const fn = call.function as Json
        expectWire(
          typeof fn.arguments === 'string',
          `messages[${i}].tool_calls[].function.arguments: expected a string`,
        )
      } else {
        expectWire(call.type === 'custom', `messages[${i}].tool_calls[].type: unknown`)
        expectWire(typeof (call.custom as Json).input === 'string', `messages[${i}]: custom.input: expected a string`)
      }
      expectWire(answered.get(call.id as string) === 1, `tool_call_id ${String(call.id)} not answered once`)
    }
  })
}

/** Responses: function_call arguments / custom input are strings; each call has its own output type. */
function validateResponses(body: Json): void {
  const input = body.input as Json[]
  const calls = new Map<string, string>()
  const answers = new Map<string, number>()
  input.forEach((item, i) => {
    if (item.type === 'function_call') {
      expectWire(typeof item.arguments === 'string', `input[${i}].arguments: expected a string`)
      calls.set(String(item.call_id), 'function_call_output')
    }
    if (item.type === 'custom_tool_call') {
      expectWire(typeof item.input === 'string', `input[${i}].input: expected a string`)
      calls.set(String(item.call_id), 'custom_tool_call_output')
    }
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      const id = String(item.call_id)
      expectWire(calls.get(id) === item.type, `input[${i}]: no matching call for ${item.type} ${id}`)
      answers.set(id, (answers.get(id) ?? 0) + 1)
    }
  })
  for (const id of calls.keys())
    expectWire(answers.get(id) === 1, `call_id ${id} answered ${answers.get(id) ?? 0} times`)
}

const chatReply = (message: Json) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'fake',
  choices: [{ index: 0, finish_reason: message.tool_calls ? 'tool_calls' : 'stop', logprobs: null, message }],
})

const responsesReply = (output: Json[], n: number) => ({
  id: `resp_${n}`,
  object: 'response',
  created_at: 1,
  model: 'fake',
  status: 'completed',
  output,
  error: null,
  incomplete_details: null,
  instructions: null,
  metadata: null,
  parallel_tool_calls: true,
  temperature: null,
  top_p: null,
  tool_choice: 'auto',
  tools: [],
})

describe('OpenAI adapters send back a valid conversation (issue 22)', () => {
  it('Chat: arguments sent as an object, a number or null go back as JSON text; a custom call is answered', async () => {
    const { tools, seen } = await echoTools()
    const { server, client, bodies } = await fakeOpenAI(
      '/v1/chat/completions',
      [
        chatReply({
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'o1', type: 'function', function: { name: 'echo', arguments: { text: 'object' } } },
            { id: 'n1', type: 'function', function: { name: 'echo', arguments: 5 } },
            { id: 'z1', type: 'function', function: { name: 'echo', arguments: null } },
            { id: 'k1', type: 'custom', custom: { name: 'grammar', input: { not: 'text' } } },
            ['not', 'a', 'call'], // skipped by the parser, so it must not go back either
          ],
        }),
        chatReply({ role: 'assistant', content: 'done', refusal: null }),
      ],
      validateChat,
    )
    const run = await runModelLoop({
      tools,
      model: openAIChatModel({ client, model: 'fake' }),
      messages: [{ role: 'user', content: 'go' }],
    })
    expect(server.violations).toEqual([])
    expect(run.stopReason).toBe('done')
    expect(bodies).toHaveLength(2)
    const messages = bodies[1].messages as Json[]
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'o1', type: 'function', function: { name: 'echo', arguments: '{"text":"object"}' } },
        { id: 'n1', type: 'function', function: { name: 'echo', arguments: '5' } },
        { id: 'z1', type: 'function', function: { name: 'echo', arguments: '{}' } },
        { id: 'k1', type: 'custom', custom: { name: 'grammar', input: '{"not":"text"}' } },
      ],
    })
    const answers = new Map(messages.slice(2).map((m) => [m.tool_call_id, String(m.content)]))
    expect(answers.get('o1')).toBe('object')
    expect(answers.get('n1')).toMatch(/^Error \(INVALID_ARGS\)/)
    expect(answers.get('z1')).toBe('(nothing)')
    expect(answers.get('k1')).toMatch(/^Error \(INVALID_ARGS\).*"custom" are not supported/)
    expect(seen).toEqual([{ text: 'object' }, {}])
  })

  it('Responses: function_call arguments of any type go back as JSON text; a custom_tool_call gets its custom_tool_call_output', async () => {
    const { tools, seen } = await echoTools()
    const call = (id: string, args: unknown) => ({
      type: 'function_call',
      id: `fc_${id}`,
      call_id: id,
      name: 'echo',
      arguments: args,
      status: 'completed',
    })
    const { server, client, bodies } = await fakeOpenAI(
      '/v1/responses',
      [
        responsesReply(
          [
            call('o1', { text: 'object' }),
            call('n1', 5),
            call('z1', null),
            { type: 'custom_tool_call', id: 'ct_k1', call_id: 'k1', name: 'grammar', input: 'SELECT 1' },
          ],
          1,
        ),
        responsesReply(
          [
            {
              type: 'message',
              id: 'msg_2',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: 'done', annotations: [] }],
            },
          ],
          2,
        ),
      ],
      validateResponses,
    )
    const run = await runModelLoop({
      tools,
      model: openAIResponsesModel({ client, model: 'fake' }),
      messages: [{ role: 'user', content: 'go' }],
    })
    expect(server.violations).toEqual([])
    expect(run.stopReason).toBe('done')
    expect(bodies).toHaveLength(2)
    const input = bodies[1].input as Json[]
    expect(input.slice(1, 5)).toEqual([
      call('o1', '{"text":"object"}'),
      call('n1', '5'),
      call('z1', '{}'),
      { type: 'custom_tool_call', id: 'ct_k1', call_id: 'k1', name: 'grammar', input: 'SELECT 1' },
    ])
    const outputs = input.slice(5)
    expect(outputs.map((o) => [o.type, o.call_id])).toEqual([
      ['function_call_output', 'o1'],
      ['function_call_output', 'n1'],
      ['function_call_output', 'z1'],
      ['custom_tool_call_output', 'k1'],
    ])
    expect(outputs[0].output).toBe('object')
    expect(outputs[1].output).toMatch(/^Error \(INVALID_ARGS\)/)
    expect(outputs[3].output).toMatch(/^Error \(INVALID_ARGS\).*"custom_tool_call" are not supported/)
    expect(seen).toEqual([{ text: 'object' }, {}])
  })
})
