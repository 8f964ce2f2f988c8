// toAgentsTools inside the real @openai/agents runner, against the testing kit's fake OpenAI server (issue 42, item 3).
import { Agent, OpenAIProvider, Runner, RunState } from '@openai/agents'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/preset/create.js'
import { toAgentsTools } from '../../src/providers/openai-agents/index.js'
import { createAgent } from '../../src/runtime/agent.js'
import { CallbackApproval } from '../../src/scheduling/approval.js'
import { defineTool } from '../../src/schema/define-tool.js'
import { startFakeProvider } from '../../src/testing/index.js'

const text = {
  schema: { type: 'string' },
  render: (_a: unknown, v: string) => [{ type: 'text' as const, text: v }],
} as const

async function setup() {
  const { ctx, tools } = await createToolRuntime()
  const scope = createAgent(ctx, { id: 'agents' })
  // toolgate's own approval service must never be asked: the Agents SDK's interruption answers.
  let serviceAsked = 0
  ctx.plugin(CallbackApproval, {
    decide: () => {
      serviceAsked++
      return { kind: 'denied', reason: 'the service was asked' }
    },
  })
  ctx.on('tools/pre-execute', async (exec, next) =>
    exec.name === 'delete_all' ? { kind: 'ask', reason: 'destructive' } : next(),
  )
  const runs = { delete_all: 0, slow: 0, overlap: 0, active: 0 }
  tools.register(
    defineTool({
      name: 'delete_all',
      description: 'Delete everything.',
      parameters: {},
      output: text,
      execute: async () => {
        runs.delete_all++
        return 'deleted'
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'slow',
      description: 'A write that must run alone.',
      parameters: { n: { type: 'number', required: true } },
      output: text,
      execute: async ({ n }) => {
        runs.slow++
        runs.active++
        if (runs.active > 1) runs.overlap++
        await new Promise((resolve) => setImmediate(resolve))
        runs.active--
        return `slow ${n}`
      },
    }),
  )
  const agentFor = () =>
    new Agent({
      name: 'toolgate',
      instructions: 'Use the tools.',
      model: 'gpt-test',
      tools: toAgentsTools(tools, { agent: scope }),
    })
  return { agentFor, runs, asked: () => serviceAsked }
}

function runnerFor(url: string) {
  return new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'test', baseURL: url, useResponses: true }),
    tracingDisabled: true,
  })
}

/** The function_call_output items the model read in one request. */
function outputs(body: unknown): Record<string, string> {
  const input = (body as { input?: Array<{ type?: string; call_id?: string; output?: unknown }> }).input ?? []
  return Object.fromEntries(
    input
      .filter((item) => item.type === 'function_call_output')
      .map((item) => [item.call_id, JSON.stringify(item.output)]),
  )
}

describe('toAgentsTools with the OpenAI Agents runner (issue 42)', () => {
  it('runs calls through toolgate; exclusive calls do not overlap', async () => {
    const { agentFor, runs } = await setup()
    await using fake = await startFakeProvider({
      format: 'openai-responses',
      turns: [
        {
          toolCalls: [
            { name: 'slow', arguments: { n: 1 }, id: 'c1' },
            { name: 'slow', arguments: { n: 2 }, id: 'c2' },
          ],
        },
        'done',
      ],
    })
    const result = await runnerFor(fake.url).run(agentFor(), 'go')
    expect(result.finalOutput).toBe('done')
    expect(runs.slow).toBe(2)
    expect(runs.overlap).toBe(0)
    const seen = outputs(fake.requests[1].body)
    expect(seen.c1).toContain('slow 1')
    expect(seen.c2).toContain('slow 2')
  })

  it('an approval toolgate asks for is an interruption; resumed from a serialized RunState it runs once', async () => {
    const { agentFor, runs, asked } = await setup()
    await using fake = await startFakeProvider({
      format: 'openai-responses',
      turns: [{ toolCalls: [{ name: 'delete_all', arguments: {}, id: 'c1' }] }, 'done'],
    })
    const first = await runnerFor(fake.url).run(agentFor(), 'go')
    expect(first.interruptions.map((item) => item.name)).toEqual(['delete_all'])
    expect(runs.delete_all).toBe(0)
    const serialized = first.state.toString()

    // A new process: a new Agent with new tools, the state restored from its string.
    const agent = agentFor()
    const state = await RunState.fromString(agent, serialized)
    for (const item of state.getInterruptions()) state.approve(item)
    const resumed = await runnerFor(fake.url).run(agent, state)
    expect(resumed.finalOutput).toBe('done')
    expect(runs.delete_all).toBe(1)
    expect(asked()).toBe(0)
    expect(outputs(fake.requests[1].body).c1).toContain('deleted')
  })

  it('a call rejected in the Agents run is denied in toolgate and never runs', async () => {
    const { agentFor, runs, asked } = await setup()
    await using fake = await startFakeProvider({
      format: 'openai-responses',
      turns: [{ toolCalls: [{ name: 'delete_all', arguments: {}, id: 'c1' }] }, 'fine'],
    })
    const first = await runnerFor(fake.url).run(agentFor(), 'go')
    const agent = agentFor()
    const state = await RunState.fromString(agent, first.state.toString())
    for (const item of state.getInterruptions()) state.reject(item)
    const resumed = await runnerFor(fake.url).run(agent, state)
    expect(resumed.finalOutput).toBe('fine')
    expect(runs.delete_all).toBe(0)
    expect(asked()).toBe(0)
    expect(outputs(fake.requests[1].body).c1).toBeDefined()
  })
})
