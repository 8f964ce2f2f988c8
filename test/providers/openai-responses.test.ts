// Wire test: the official `openai` client, Responses API, against a local fake (issue #12).
import OpenAI from 'openai'
import type {
  Response,
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
  ResponseOutputItem,
} from 'openai/resources/responses/responses'
import { describe, expect } from 'vitest'
import { openAIResponsesModel } from '../../src/providers/openai/index.js'
import { expectWire, startFakeServer } from './fake-server.js'
import { PNG, TURN_ONE } from './scenario.js'
import { type Turn, type WireHarness, wireSuite } from './wire-suite.js'

function response(turn: Turn, n: number): Response {
  const output: ResponseOutputItem[] =
    typeof turn === 'string'
      ? [
          {
            type: 'message',
            id: `msg_${n}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: turn, annotations: [] }],
          },
        ]
      : turn.map(([id, name, args]) => ({
          type: 'function_call',
          id: `fc_${id}`,
          call_id: id,
          name,
          arguments: args,
          status: 'completed',
        }))
  return {
    id: `resp_${n}`,
    object: 'response',
    created_at: 1,
    model: 'fake',
    status: 'completed',
    output,
    output_text: typeof turn === 'string' ? turn : '',
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    parallel_tool_calls: true,
    temperature: null,
    top_p: null,
    tool_choice: 'auto',
    tools: [],
  }
}

type Input = Exclude<ResponseCreateParamsNonStreaming['input'], string | undefined>

/**
 * What the real API validates: every function_call in the input has exactly one
 * function_call_output with its call_id, and no output answers a call that is not there.
 * Outputs are a string or input_text / input_image items.
 */
function validateInput(input: Input): void {
  const calls = new Set<string>()
  const answers = new Map<string, number>()
  input.forEach((item: ResponseInputItem, i) => {
    if (item.type === 'function_call') calls.add(item.call_id)
    if (item.type !== 'function_call_output') return
    expectWire(calls.has(item.call_id), `input[${i}]: no function_call found for call_id ${item.call_id}`)
    answers.set(item.call_id, (answers.get(item.call_id) ?? 0) + 1)
    if (typeof item.output !== 'string') {
      for (const part of item.output) {
        expectWire(part.type === 'input_text' || part.type === 'input_image', `input[${i}].output: bad part`)
        if (part.type === 'input_image')
          expectWire(part.image_url?.startsWith('data:image/') === true, `input[${i}]: image_url not a data URL`)
      }
    }
  })
  for (const id of calls) expectWire(answers.get(id) === 1, `call_id ${id} answered ${answers.get(id) ?? 0} times`)
}

const harness: WireHarness<'openai-responses'> = {
  userMessage: { role: 'user', content: 'go' },
  async start(script) {
    let next = 0
    const bodies: ResponseCreateParamsNonStreaming[] = []
    const server = await startFakeServer(
      (request) => {
        expectWire(request.method === 'POST' && request.path === '/v1/responses', `unexpected ${request.path}`)
        const body = request.body as ResponseCreateParamsNonStreaming
        bodies.push(body)
        expectWire(Array.isArray(body.input), 'input must be a list of items')
        validateInput(body.input as Input)
        const turn = script[next++]
        expectWire(turn !== undefined, 'more requests than scripted')
        return { body: response(turn, next) }
      },
      (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
    )
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key', maxRetries: 0 })
    return {
      server,
      bodies,
      model: openAIResponsesModel({ client, model: 'fake' }),
      replay: (input) => client.responses.create({ model: 'fake', input }),
    }
  },
  checkAnswers(raw) {
    const body = raw as ResponseCreateParamsNonStreaming
    expect(body.tools?.find((t) => t.type === 'function' && t.name === 'search')).toMatchObject({
      type: 'function',
      name: 'search',
      strict: true,
      parameters: { required: ['query', 'limit'], additionalProperties: false },
    })
    const input = body.input as Input
    // The user message, the eight function_call items, then one output per call in call order.
    expect(input).toHaveLength(1 + 8 + 8)
    const outputs = input.slice(9) as ResponseInputItem.FunctionCallOutput[]
    expect(outputs.map((o) => [o.type, o.call_id])).toEqual(TURN_ONE.map(([id]) => ['function_call_output', id]))
    const byId = Object.fromEntries(outputs.map((o) => [o.call_id, o.output]))
    expect(byId.c1).toBe('contents of a.txt')
    expect(byId.c5).toBe('Error (TOOL_ERROR): kaboom')
    expect(byId.c6).toMatch(/^Error \(TOOL_DENIED\): .*secrets are off-limits/)
    expect(byId.c7).toMatch(/^Error \(INVALID_ARGS\): /)
    // The image rides natively in the output list.
    expect(byId.c4).toEqual([
      { type: 'input_text', text: 'a screenshot' },
      { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
    ])
  },
}

describe('openai-responses through the official client (issue #12)', () => {
  wireSuite(harness)
})
