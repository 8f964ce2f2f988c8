// R-PERF: get / schemas / executionMode as the registry grows from 10 to 10,000 tools.
import { Context } from 'cordis'
import { isMain, loadBuilt, printTable, type Row, time } from './util.js'

const { createAgent, defineTool, ToolRuntime } = await loadBuilt()

function tool(i: number) {
  return defineTool({
    name: `tool_${i}`,
    description: `Tool number ${i}.`,
    parameters: { path: { type: 'string', required: true }, limit: { type: 'integer' } },
    output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
    execute: async () => 'x',
    isConcurrencySafe: () => true,
  })
}

export async function run(): Promise<Row[]> {
  const rows: Row[] = []
  const signal = new AbortController().signal
  for (const count of [10, 100, 1000, 10000]) {
    const ctx = new Context()
    await ctx.plugin(ToolRuntime)
    const tools = ctx.tools
    for (let i = 0; i < count; i++) tools.register(tool(i))
    const agent = createAgent(ctx, { id: 'a' })
    agent.ctx.tools.restrict({ deny: ['tool_0'] })
    const input = { callId: 'c', name: `tool_${count - 1}`, arguments: { path: 'x' }, agent, signal }
    rows.push({
      name: `${count} tools: get(name, agent)`,
      avgNs: await time(() => tools.get(`tool_${count - 1}`, agent)),
    })
    rows.push({ name: `${count} tools: executionMode()`, avgNs: await time(() => tools.executionMode(input)) })
    rows.push({ name: `${count} tools: schemas(agent) (a deep clone)`, avgNs: await time(() => tools.schemas(agent)) })
    const json = JSON.stringify(tools.schemas(agent))
    rows.push({
      name: `${count} tools: reference JSON.parse of the same schemas`,
      avgNs: await time(() => JSON.parse(json)),
    })
  }
  printTable('Registry scaling', rows)
  return rows
}

if (isMain(import.meta.url)) await run()
