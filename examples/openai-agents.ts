/**
 * toolgate's tools in an OpenAI Agents JS (`@openai/agents`) run: the Agents SDK drives the
 * model, toolgate runs each call (policies, approval, journal). A call toolgate wants approved
 * stops the run with the Agents SDK's interruption; the run is serialized, approved later from
 * its string, and resumed: the call runs once. The model here is toolgate's fake OpenAI server,
 * so the example runs offline; point `OpenAIProvider` at the real API to use it for real.
 */
// #region tools
import { Agent, OpenAIProvider, Runner, RunState } from '@openai/agents'
import { createAgent, createToolRuntime, defineTool } from 'toolgate'
import { toAgentsTools } from 'toolgate/providers/openai-agents'
import { startFakeProvider } from 'toolgate/testing'

const { ctx, tools } = await createToolRuntime()
const scope = createAgent(ctx, { id: 'ops' })
const text = {
  schema: { type: 'string' },
  render: (_a: unknown, v: string) => [{ type: 'text' as const, text: v }],
} as const
tools.register(
  defineTool({
    name: 'disk_usage',
    description: 'How full the disk is.',
    parameters: {},
    output: text,
    execute: async () => '91% used',
  }),
)
tools.register(
  defineTool({
    name: 'clear_cache',
    description: 'Delete the build cache.',
    parameters: { dir: { type: 'string', required: true } },
    output: text,
    execute: async ({ dir }) => {
      console.log(`tool ran: clear_cache ${dir}`)
      return `cleared ${dir}`
    },
  }),
)
// A toolgate policy: deleting anything needs a human.
ctx.on('tools/pre-execute', async (exec, next) =>
  exec.name === 'clear_cache' ? { kind: 'ask', reason: 'deletes files' } : next(),
)
// #endregion tools

// #region run
await using fake = await startFakeProvider({
  format: 'openai-responses',
  turns: [
    { toolCalls: [{ name: 'disk_usage', arguments: {}, id: 'call_1' }] },
    { toolCalls: [{ name: 'clear_cache', arguments: { dir: '.cache' }, id: 'call_2' }] },
    'Cleared .cache: the disk had 91% used.',
  ],
})
const runner = new Runner({
  modelProvider: new OpenAIProvider({ apiKey: 'unused', baseURL: fake.url, useResponses: true }),
  tracingDisabled: true,
})
const agentFor = () =>
  new Agent({ name: 'ops', instructions: 'Keep the disk clean.', tools: toAgentsTools(tools, { agent: scope }) })

const first = await runner.run(agentFor(), 'The disk is full.')
for (const item of first.interruptions) console.log(`interrupted: ${item.name} ${item.arguments}`)
// Kept as a string (a database row, a queue message) until someone decides.
const saved = first.state.toString()

const agent = agentFor()
const state = await RunState.fromString(agent, saved)
for (const item of state.getInterruptions()) state.approve(item)
const resumed = await runner.run(agent, state)
console.log(`answer: ${resumed.finalOutput}`)
// #endregion run
