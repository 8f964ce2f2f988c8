// Issue 27 item 4: providers' native tool search. With toolSearch: 'native', the Anthropic and
// OpenAI Responses adapters send deferred tools marked defer_loading beside the provider's own
// search tool instead of search_tools; the provider (here the fake, server-side) searches them; a
// call of a discovered tool runs through toolgate's pipeline, policies included; toProviderTools
// reports which search each provider's request carries.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import {
  ConfigError,
  createAgent,
  createToolRuntime,
  defineTool,
  SuspendingApproval,
  type ToolRuntimeHandle,
} from '../../src/index.js'
import { anthropicModel } from '../../src/providers/anthropic/index.js'
import {
  deferredSchemas,
  type ProviderFormat,
  resumeModelLoop,
  runModelLoop,
  streamModelLoop,
  toProviderTools,
} from '../../src/providers/index.js'
import { openAIResponsesModel } from '../../src/providers/openai/index.js'
import { type FakeProvider, scriptedModel, startFakeProvider } from '../../src/testing/index.js'

const handles: ToolRuntimeHandle[] = []
const fakes: FakeProvider[] = []
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close()
  for (const handle of handles.splice(0)) await handle.dispose()
})

const textOutput = {
  schema: { type: 'string' },
  render: (_args: unknown, text: string) => [{ type: 'text' as const, text }],
} as const

/** A listed tool, a deferred one behind a policy, and a deferred one the agent may not see. */
async function runtime() {
  const handle = await createToolRuntime()
  handles.push(handle)
  const { ctx, tools } = handle
  tools.register(
    defineTool({
      name: 'list_files',
      description: 'List the files of a folder.',
      parameters: { path: { type: 'string', required: true } },
      output: textOutput,
      execute: async ({ path }) => `files of ${path}`,
    }),
  )
  tools.register(
    defineTool({
      name: 'get_weather',
      description: 'Get the weather forecast for a city.',
      parameters: { city: { type: 'string', required: true }, units: { type: 'string' } },
      output: textOutput,
      defer: true,
      execute: async ({ city, units }) => `sunny in ${city}${units === undefined ? '' : ` (${units})`}`,
    }),
  )
  tools.register(
    defineTool({
      name: 'weather_admin_reset',
      description: 'Reset the weather station (admin only).',
      parameters: {},
      output: textOutput,
      defer: true,
      execute: async () => 'reset',
    }),
  )
  const agent = createAgent(ctx, { id: 'agent-1' })
  agent.ctx.tools.restrict({ deny: ['weather_admin_reset'] })
  // The policy: a forecast for Mordor is refused; every call the pipeline sees is recorded.
  const seen: string[] = []
  ctx.on('tools/pre-execute', async (exec, next) => {
    seen.push(exec.name)
    const city = (exec.arguments as { city?: unknown } | null)?.city
    if (exec.name === 'get_weather' && city === 'Quito') return { kind: 'ask', reason: 'a person decides' }
    return exec.name === 'get_weather' && city === 'Mordor' ? { kind: 'deny', reason: 'no forecasts there' } : next()
  })
  return { tools, agent, seen }
}

const NATIVE = ['anthropic', 'openai-responses'] as const

function nativeModel(format: (typeof NATIVE)[number], url: string) {
  return format === 'anthropic'
    ? anthropicModel({
        client: new Anthropic({ apiKey: 'test', baseURL: url, maxRetries: 0 }),
        model: 'claude-test',
        toolSearch: 'native',
      })
    : openAIResponsesModel({
        client: new OpenAI({ apiKey: 'test', baseURL: url, maxRetries: 0 }),
        model: 'gpt-test',
        toolSearch: 'native',
      })
}

function user(format: ProviderFormat, text: string): never {
  return (
    format === 'openai-responses' ? { role: 'user', content: text, type: 'message' } : { role: 'user', content: text }
  ) as never
}

type Json = Record<string, unknown>
const toolsOf = (request: { body: unknown }) => (request.body as { tools?: Json[] }).tools ?? []

describe.each(NATIVE)('%s native tool search, official SDK against the fake provider', (format) => {
  it('sends deferred tools only as defer_loading, the provider searches, and the call runs through the pipeline', async () => {
    const { tools, agent, seen } = await runtime()
    const fake = await startFakeProvider({
      format,
      turns: [
        { toolSearch: 'weather forecast', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
        { toolCalls: [{ name: 'get_weather', arguments: { city: 'Mordor' } }] },
        'Sunny in Paris; no forecast for Mordor.',
      ],
    })
    fakes.push(fake)
    const run = await runModelLoop({
      tools,
      agent,
      model: nativeModel(format, fake.url),
      messages: [user(format, 'Weather in Paris and Mordor?')],
    })
    expect(run.stopReason).toBe('done')

    const first = toolsOf(fake.requests[0])
    const byName = new Map(first.map((tool) => [String(tool.name ?? tool.type), tool]))
    // Listed in full; deferred only as defer_loading; toolgate's finder replaced by the provider's search.
    expect(byName.get('list_files')?.defer_loading).toBeUndefined()
    expect(byName.get('get_weather')?.defer_loading).toBe(true)
    expect(byName.has('search_tools')).toBe(false)
    // A tool the agent may not see is not even searchable.
    expect(byName.has('weather_admin_reset')).toBe(false)
    expect(JSON.stringify(first)).not.toContain('weather_admin_reset')
    if (format === 'anthropic') expect(byName.get('tool_search_tool_bm25')?.type).toBe('tool_search_tool_bm25_20251119')
    else expect(byName.get('tool_search')).toEqual({ type: 'tool_search' })

    // The search happened server-side and its blocks went back with the conversation.
    const second = JSON.stringify(fake.requests[1].body)
    if (format === 'anthropic') {
      expect(second).toContain('"type":"server_tool_use"')
      expect(second).toContain('"tool_references":[{"type":"tool_reference","tool_name":"get_weather"}]')
    } else {
      expect(second).toContain('"type":"tool_search_call"')
      expect(second).toContain('"type":"tool_search_output"')
    }
    // Still deferred on later requests (a reference must keep resolving), never loaded in full.
    expect(toolsOf(fake.requests[1]).find((tool) => tool.name === 'get_weather')?.defer_loading).toBe(true)

    // Both calls went through toolgate's pipeline: the policy let Paris through and refused Mordor.
    expect(seen).toEqual(['get_weather', 'get_weather'])
    const [paris] = run.steps[0].results
    const [mordor] = run.steps[1].results
    expect(paris.result.isError).toBe(false)
    expect(JSON.stringify(paris.result.content)).toContain('sunny in Paris')
    expect(mordor.result.isError).toBe(true)
    expect(JSON.stringify(mordor.result.content)).toContain('no forecasts there')
    // The native search loads nothing into toolgate's view: the provider keeps what it found.
    expect(tools.deferred(agent)).toEqual(['get_weather'])
  })

  it('streams the same: the search blocks are kept, the discovered tool is called', async () => {
    const { tools, agent, seen } = await runtime()
    const fake = await startFakeProvider({
      format,
      turns: [{ toolSearch: 'weather', toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, 'Done.'],
    })
    fakes.push(fake)
    let done: { stopReason?: string } | undefined
    for await (const event of streamModelLoop({
      tools,
      agent,
      model: nativeModel(format, fake.url),
      messages: [user(format, 'Weather in Oslo?')],
    }))
      if (event.type === 'done') done = event
    expect(done?.stopReason).toBe('done')
    expect(seen).toEqual(['get_weather'])
    expect(fake.requests[0].stream).toBe(true)
    expect(JSON.stringify(fake.requests[1].body)).toContain(
      format === 'anthropic' ? '"tool_name":"get_weather"' : '"type":"tool_search_output"',
    )
  })

  it("toolSearch 'toolgate' (the default) sends search_tools and leaves deferred tools out", async () => {
    const { tools, agent } = await runtime()
    const model = scriptedModel({ format, turns: ['Nothing to do.'] })
    await runModelLoop({ tools, agent, model, messages: [user(format, 'Hi')] })
    const sent = JSON.stringify((model.requests[0] as Json).tools)
    expect(sent).toContain('search_tools')
    expect(sent).not.toContain('get_weather')
    expect(sent).not.toContain('defer_loading')
  })
})

describe('a turn the Anthropic API pauses (pause_turn)', () => {
  it.each([false, true])('is sent back as it stands and completed, one reply (streamed: %s)', async (streamed) => {
    const { tools, agent, seen } = await runtime()
    const fake = await startFakeProvider({
      format: 'anthropic',
      turns: [
        { toolSearch: 'weather', text: 'Searching.', pause: true, usage: { inputTokens: 7, outputTokens: 1 } },
        {
          toolCalls: [{ name: 'get_weather', arguments: { city: 'Lima' } }],
          usage: { inputTokens: 9, outputTokens: 2 },
        },
        'Sunny in Lima.',
      ],
    })
    fakes.push(fake)
    const options = {
      tools,
      agent,
      model: nativeModel('anthropic', fake.url),
      messages: [user('anthropic', 'Weather in Lima?')],
    }
    let run: { stopReason: string; steps: { reply: readonly unknown[]; usage?: { inputTokens: number } }[] }
    if (!streamed) run = await runModelLoop(options)
    else {
      let done: typeof run | undefined
      for await (const event of streamModelLoop(options)) if (event.type === 'done') done = event
      run = done as typeof run
    }
    expect(run.stopReason).toBe('done')
    // The paused part and its continuation make one step whose call ran through the pipeline.
    expect(run.steps).toHaveLength(2)
    expect(run.steps[0].reply).toHaveLength(2)
    expect(run.steps[0].usage?.inputTokens).toBe(16)
    expect(seen).toEqual(['get_weather'])
    // The continuation carried the paused turn back, search blocks included, as its last message.
    const resent = (fake.requests[1].body as { messages: { role: string; content: unknown }[] }).messages
    expect(resent.at(-1)?.role).toBe('assistant')
    expect(JSON.stringify(resent.at(-1)?.content)).toContain('tool_search_tool_result')
  })
})

describe('the fake refuses what the real API would', () => {
  it('a scripted native search without a search tool in the request is a 400', async () => {
    const { tools, agent } = await runtime()
    const model = scriptedModel({ format: 'anthropic', turns: [{ toolSearch: 'weather' }] })
    await expect(runModelLoop({ tools, agent, model, messages: [user('anthropic', 'Hi')] })).rejects.toThrow(
      /declares no tool search tool/,
    )
  })

  it('a tool_reference to a tool the request no longer declares is a 400', async () => {
    const { tools, agent } = await runtime()
    const model = scriptedModel({ format: 'anthropic', toolSearch: 'native', turns: ['Hi.'] })
    const history = [
      user('anthropic', 'Weather?'),
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'tool_search_tool_bm25', input: { query: 'x' } },
          {
            type: 'tool_search_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: {
              type: 'tool_search_tool_search_result',
              tool_references: [{ type: 'tool_reference', tool_name: 'gone_tool' }],
            },
          },
        ],
      } as never,
      user('anthropic', 'And now?'),
    ]
    await expect(runModelLoop({ tools, agent, model, messages: history })).rejects.toThrow(/tool_reference_unresolved/)
  })
})

describe('toProviderTools with toolSearch', () => {
  it('says per provider which search the request carries', async () => {
    const { tools, agent } = await runtime()
    const schemas = tools.schemas(agent)
    const deferred = deferredSchemas(tools, agent)
    expect(deferred.map((schema) => schema.name)).toEqual(['get_weather'])
    const ran: Record<string, unknown> = {}
    for (const format of ['anthropic', 'openai-responses', 'openai-chat', 'gemini'] as const) {
      const out = toProviderTools(format, schemas, { toolSearch: 'native', deferred })
      ran[format] = {
        toolSearch: out.toolSearch,
        report: out.downgrades.filter((line) => line.startsWith('tool search')),
      }
    }
    expect(ran).toEqual({
      anthropic: {
        toolSearch: 'native',
        report: ['tool search: native (anthropic), 1 deferred tool(s) sent to load on demand instead of search_tools'],
      },
      'openai-responses': {
        toolSearch: 'native',
        report: [
          'tool search: native (openai-responses), 1 deferred tool(s) sent to load on demand instead of search_tools',
        ],
      },
      'openai-chat': {
        toolSearch: 'toolgate',
        report: ["tool search: toolgate's search_tools (openai-chat has no native tool search)"],
      },
      gemini: {
        toolSearch: 'toolgate',
        report: ["tool search: toolgate's search_tools (gemini has no native tool search)"],
      },
    })
    const plain = toProviderTools('anthropic', schemas)
    expect(plain.toolSearch).toBe('toolgate')
    expect(plain.downgrades).toEqual(["tool search: toolgate's search_tools"])
    expect(JSON.stringify(plain.tools)).not.toContain('defer_loading')
  })

  it('the Responses adapter sends deferred tools strict and undoes the nulls a strict model sends', async () => {
    const { tools, agent } = await runtime()
    const fake = await startFakeProvider({
      format: 'openai-responses',
      turns: [
        { toolSearch: 'weather', toolCalls: [{ name: 'get_weather', arguments: { city: 'Rome', units: null } }] },
        'Done.',
      ],
    })
    fakes.push(fake)
    const run = await runModelLoop({
      tools,
      agent,
      model: nativeModel('openai-responses', fake.url),
      messages: [user('openai-responses', 'Weather in Rome?')],
    })
    const weather = toolsOf(fake.requests[0]).find((tool) => tool.name === 'get_weather')
    expect(weather).toMatchObject({ strict: true, defer_loading: true })
    const [rome] = run.steps[0].results
    expect(rome.result.isError).toBe(false)
    expect(JSON.stringify(rome.result.content)).toContain('sunny in Rome"')
  })

  it('a discovered tool that asks for approval suspends, and resumes with its strict nulls undone', async () => {
    const { tools, agent } = await runtime()
    await handles[handles.length - 1].ctx.plugin(SuspendingApproval)
    const fake = await startFakeProvider({
      format: 'openai-responses',
      turns: [
        { toolSearch: 'weather', toolCalls: [{ name: 'get_weather', arguments: { city: 'Quito', units: null } }] },
        'Done.',
      ],
    })
    fakes.push(fake)
    const options = {
      tools,
      agent,
      model: nativeModel('openai-responses', fake.url),
      messages: [user('openai-responses', 'Weather in Quito?')],
    }
    const suspended = await runModelLoop(options)
    expect(suspended.stopReason).toBe('approval-required')
    const callId = suspended.pending?.[0]?.callId as string
    const resumed = await resumeModelLoop({
      ...options,
      state: JSON.parse(JSON.stringify(suspended.state)),
      decisions: { [callId]: { kind: 'allowed-once' } },
    })
    expect(resumed.stopReason).toBe('done')
    expect(JSON.stringify(resumed.steps[0].results[0].result.content)).toContain('sunny in Quito"')
  })

  it('projects deferred tools as strict OpenAI functions to load on demand', async () => {
    const out = toProviderTools('openai-responses', [], {
      strict: true,
      toolSearch: 'native',
      deferred: [
        {
          name: 'find',
          description: 'Find.',
          parameters: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
        },
      ],
    })
    expect(out.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'find', strict: true, defer_loading: true }),
      { type: 'tool_search' },
    ])
  })

  it('rejects a bad toolSearch with a path-qualified ConfigError', () => {
    expect(() => toProviderTools('anthropic', [], { toolSearch: 'server' as never })).toThrow(ConfigError)
    expect(() => toProviderTools('anthropic', [], { toolSearch: 'server' as never })).toThrow(
      /toProviderTools\(format, schemas, options\)\.toolSearch/,
    )
    expect(() => anthropicModel({ client: {} as never, model: 'm', toolSearch: 'yes' as never })).toThrow(
      /anthropicModel\(options\)\.toolSearch/,
    )
  })
})
