// runModelLoop's stop reasons and contracts, and toProviderMessages' per-format shapes, with an
// in-memory model (the wire tests cover the SDKs) (issue #12).
import { describe, expect, it } from 'vitest'
import type { ToolExecutionResult } from '../../src/contract/execution.js'
import type { ToolSchema } from '../../src/contract/tool-definition.js'
import { createToolRuntime } from '../../src/preset/create.js'
import {
  ModelLoopError,
  type ModelLoopEvent,
  type ProviderBatch,
  type ProviderModel,
  runModelLoop,
  toProviderMessages,
  toProviderTools,
} from '../../src/providers/index.js'
import { createAgent } from '../../src/runtime/agent.js'
import { defineTool } from '../../src/schema/define-tool.js'

type Call = [id: string, name: string, args: string]

/** A model that answers from a script, recording each request's message count. */
function scripted(script: (Call[] | string | Error)[], seen: number[] = []): ProviderModel<'openai-chat'> {
  let step = 0
  return {
    format: 'openai-chat',
    async generate({ messages, signal }) {
      seen.push(messages.length)
      const turn = script[step++]
      if (turn instanceof Error) throw turn
      if (signal?.aborted) throw signal.reason
      if (turn === undefined || typeof turn === 'string')
        return { messages: [{ role: 'assistant', content: turn ?? '' }], calls: [] }
      return {
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: turn.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: args } })),
          },
        ],
        calls: turn.map(([callId, name, args]) => ({ callId, name, arguments: JSON.parse(args) })),
      }
    },
  }
}

async function setup() {
  const { ctx, tools } = await createToolRuntime()
  const agent = createAgent(ctx, { id: 'a' })
  tools.register(
    defineTool({
      name: 'echo',
      description: 'Echo.',
      parameters: { text: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async ({ text }) => text,
      isConcurrencySafe: () => true,
    }),
  )
  tools.register(
    defineTool({
      name: 'finish',
      description: 'Ends the turn, with a note for the next request.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async (_args, exec) => {
        exec.deferContext({ role: 'user', content: [{ type: 'text', text: 'remember: finished' }] })
        exec.concludeTurn()
        return 'finished'
      },
    }),
  )
  return { tools, agent }
}

describe('runModelLoop (issue #12)', () => {
  it("stops with 'concluded' after committing the batch, deferred context after the results", async () => {
    const { tools, agent } = await setup()
    const run = await runModelLoop({
      tools,
      agent,
      model: scripted([
        [
          ['e', 'echo', '{"text":"hi"}'],
          ['f', 'finish', '{}'],
        ],
        'never asked',
      ]),
      messages: [{ role: 'user', content: 'go' }],
    })
    expect(run.stopReason).toBe('concluded')
    expect(run.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'e', content: 'hi' },
      { role: 'tool', tool_call_id: 'f', content: 'finished' },
      { role: 'user', content: [{ type: 'text', text: 'remember: finished' }] },
    ])
  })

  it("stops with 'max-steps', still answering the last request's calls, and never mutates the input", async () => {
    const { tools, agent } = await setup()
    const input = [{ role: 'user' as const, content: 'go' }]
    const seen: number[] = []
    const loop = [['1', 'echo', '{"text":"a"}']] as Call[]
    const run = await runModelLoop({
      tools,
      agent,
      model: scripted([loop, [['2', 'echo', '{"text":"b"}']], loop], seen),
      messages: input,
      maxSteps: 2,
    })
    expect(run.stopReason).toBe('max-steps')
    expect(run.steps).toHaveLength(2)
    expect(seen).toEqual([1, 3])
    expect(run.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: '2', content: 'b' })
    expect(input).toEqual([{ role: 'user', content: 'go' }])
  })

  it("an abort during the model request stops with 'aborted' and appends nothing", async () => {
    const { tools, agent } = await setup()
    const controller = new AbortController()
    const model: ProviderModel<'openai-chat'> = {
      format: 'openai-chat',
      generate: ({ signal }) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(new Error('request aborted')))
          controller.abort()
        }),
    }
    const run = await runModelLoop({
      tools,
      agent,
      model,
      messages: [{ role: 'user', content: 'go' }],
      signal: controller.signal,
    })
    expect(run).toEqual({
      stopReason: 'aborted',
      steps: [],
      messages: [{ role: 'user', content: 'go' }],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    })
  })

  it('a failing model request rejects with ModelLoopError carrying the valid conversation so far', async () => {
    const { tools, agent } = await setup()
    const failure = runModelLoop({
      tools,
      agent,
      model: scripted([[['1', 'echo', '{"text":"a"}']], new Error('503 overloaded')]),
      messages: [{ role: 'user', content: 'go' }],
    })
    await expect(failure).rejects.toThrow(ModelLoopError)
    const error = (await failure.catch((e: unknown) => e)) as ModelLoopError
    expect(error.message).toBe('runModelLoop: the model request of step 1 failed: 503 overloaded')
    expect((error.cause as Error).message).toBe('503 overloaded')
    expect(error.messages).toHaveLength(3)
    expect(error.steps).toHaveLength(1)
  })

  it('reports events in order, and a throwing listener changes nothing', async () => {
    const { tools, agent } = await setup()
    const events: ModelLoopEvent[] = []
    const run = await runModelLoop({
      tools,
      agent,
      model: scripted([[['1', 'echo', '{"text":"a"}']], 'ok']),
      messages: [{ role: 'user', content: 'go' }],
      onEvent: (event) => {
        events.push(event)
        throw new Error('listener bug')
      },
    })
    expect(run.stopReason).toBe('done')
    expect(events.map((e) => `${e.type}@${e.step}`)).toEqual([
      'model-request@0',
      'model-response@0',
      'tool-start@0',
      'tool-result@0',
      'step-end@0',
      'model-request@1',
      'model-response@1',
      'step-end@1',
    ])
  })

  it('rejects bad options with path-qualified errors', async () => {
    const { tools } = await setup()
    const model = scripted([])
    const messages = [{ role: 'user' as const, content: 'go' }]
    expect(() => runModelLoop({ tools, model, messages, maxSteps: 0 })).toThrow(
      'runModelLoop(options).maxSteps: expected a positive integer, got 0',
    )
    expect(() => runModelLoop({ tools, model: { ...model, format: 'nope' as 'openai-chat' }, messages })).toThrow(
      /runModelLoop\(options\)\.model\.format: expected one of 'openai-chat', 'openai-responses', 'anthropic', 'gemini'; got "nope"/,
    )
    expect(() => runModelLoop({ tools: {} as typeof tools, model, messages })).toThrow(/options\)\.tools/)
  })
})

describe('toProviderMessages (issue #12)', () => {
  const ok = (text: string, extra: Partial<ToolExecutionResult> = {}): ToolExecutionResult =>
    ({ isError: false, value: text, content: [{ type: 'text', text }], ...extra }) as ToolExecutionResult
  const batch: ProviderBatch = {
    results: [
      {
        call: { callId: 'a', name: 't' },
        result: ok('first', {
          additionalContexts: [{ role: 'user', content: [{ type: 'text', text: 'ctx-a' }] }],
        } as Partial<ToolExecutionResult>),
      },
      {
        call: { callId: 'b', name: 't' },
        result: {
          isError: false,
          value: null,
          content: [{ type: 'image', mediaType: 'image/tiff', data: 'AAAA' }],
        },
      },
      {
        call: { callId: 'c', name: 't' },
        result: { isError: true, error: { message: 'no' }, content: [] },
      },
    ],
  }

  it('answers each call once, in order, in every format; unsupported images become text', () => {
    expect(toProviderMessages('openai-chat', batch)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'first' },
      {
        role: 'tool',
        tool_call_id: 'b',
        content: '[image (image/tiff) omitted: this provider does not accept that image type]',
      },
      { role: 'tool', tool_call_id: 'c', content: 'Error (TOOL_ERROR): (no output)' },
      { role: 'user', content: [{ type: 'text', text: 'ctx-a' }] },
    ])
    const anthropic = toProviderMessages('anthropic', batch)
    expect(anthropic).toHaveLength(1)
    expect(anthropic[0].content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'first' }] },
      {
        type: 'tool_result',
        tool_use_id: 'b',
        content: [
          { type: 'text', text: '[image (image/tiff) omitted: this provider does not accept that image type]' },
        ],
      },
      { type: 'tool_result', tool_use_id: 'c', is_error: true, content: [{ type: 'text', text: '(no output)' }] },
      { type: 'text', text: 'ctx-a' },
    ])
    const responses = toProviderMessages('openai-responses', batch)
    expect(responses.map((item) => ('call_id' in item ? item.call_id : item.type))).toEqual(['a', 'b', 'c', 'message'])
    const gemini = toProviderMessages('gemini', batch)
    expect(gemini.map((c) => c.parts?.length)).toEqual([3, 1])
    expect(gemini[0].parts?.[2]).toEqual({
      functionResponse: { id: 'c', name: 't', response: { error: '(no output)', code: 'TOOL_ERROR' } },
    })
  })

  it('rejects a malformed batch with a path-qualified error', () => {
    expect(() =>
      toProviderMessages('gemini', { results: [{ call: { callId: 1 } }] } as unknown as ProviderBatch),
    ).toThrow('toProviderMessages(format, batch).results[0].call: expected a string callId and name')
  })
})

describe('toProviderTools for Anthropic and Gemini (issue #12)', () => {
  const schema: ToolSchema = {
    name: 'pick',
    description: 'Pick.',
    parameters: {
      type: 'object',
      properties: {
        flag: { const: true },
        kind: { oneOf: [{ type: 'string', const: 'a' }, { type: 'integer' }] },
        note: { type: 'string', default: 'x' },
      },
    },
  }

  it('Anthropic takes the schema as input_schema', () => {
    expect(toProviderTools('anthropic', [schema])).toEqual({
      tools: [{ name: 'pick', description: 'Pick.', input_schema: schema.parameters }],
      downgrades: [],
    })
  })

  it('Gemini gets parametersJsonSchema in its subset, and the losses listed', () => {
    expect(toProviderTools('gemini', [schema])).toEqual({
      tools: [
        {
          functionDeclarations: [
            {
              name: 'pick',
              description: 'Pick.',
              parametersJsonSchema: {
                type: 'object',
                properties: {
                  flag: {},
                  kind: { anyOf: [{ type: 'string', enum: ['a'] }, { type: 'integer' }] },
                  note: { type: 'string' },
                },
              },
            },
          ],
        },
      ],
      downgrades: [
        'pick.parameters.properties.flag.const: Gemini enums take strings and numbers only; sent without it',
      ],
    })
  })
})
