// Issue 37, item 2: what `serve --http`'s metrics cost each call. execute() of a trivial tool on a
// runtime without metrics, with the gateway's metrics listening (tools/call, tools/result), and
// with `metrics.identityLabel`; and one scrape of the registry after calls of 100 tools.
import { Context } from 'cordis'
import type { createGatewayMetrics as CreateMetrics } from '../src/gateway/metrics.js'
import { format, interleavedMedians, isMain, loadBuilt, printTable, type Row, time } from './util.js'

const { defineTool, ToolRuntime } = await loadBuilt()
const { createGatewayMetrics } = (await import(new URL('../dist/gateway/metrics.js', import.meta.url).href)) as {
  createGatewayMetrics: typeof CreateMetrics
}

type MetricsGateway = Parameters<typeof CreateMetrics>[0]

function tool(name: string) {
  return defineTool({
    name,
    description: 'Return a constant.',
    parameters: { n: { type: 'integer' } },
    output: { schema: { type: 'integer' }, render: () => [{ type: 'text', text: 'ok' }] },
    execute: async () => 1,
  })
}

/** A runtime with `tools` tools; its root scope stands for the gateway's serving agent. */
async function runtime(tools = 1) {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  for (let i = 0; i < tools; i++) ctx.tools.register(tool(`tool_${i}`))
  const gateway = {
    agent: { ctx },
    identities: { identityOf: () => ({ subject: 'alice', groups: [], scopes: [] }) },
    upstreams: () => [{ name: 'github', status: 'connected', tools: [], skipped: [] }],
  } as unknown as MetricsGateway
  return { ctx, gateway }
}

export async function run(): Promise<Row[]> {
  const signal = new AbortController().signal
  const input = { callId: 'c', name: 'tool_0', arguments: { n: 1 }, signal }
  const plain = await runtime()
  const measured = await runtime()
  await createGatewayMetrics(measured.gateway)
  const labelled = await runtime()
  await createGatewayMetrics(labelled.gateway, { identityLabel: true })
  // The same two events with listeners that do nothing: what the event dispatch alone costs.
  const listening = await runtime()
  listening.ctx.on('tools/call', () => {})
  listening.ctx.on('tools/result', () => {})
  const [base, withMetrics, withIdentity, emptyListeners] = await interleavedMedians([
    () => plain.ctx.tools.execute(input),
    () => measured.ctx.tools.execute(input),
    () => labelled.ctx.tools.execute(input),
    () => listening.ctx.tools.execute(input),
  ])
  const extra = (value: number) => `+${format(value - base)} (${(value / base).toFixed(2)}×)`
  const rows: Row[] = [
    { name: 'execute(), no metrics', avgNs: base, ratio: '1×' },
    { name: 'execute(), gateway metrics', avgNs: withMetrics, ratio: extra(withMetrics) },
    { name: 'execute(), gateway metrics with identityLabel', avgNs: withIdentity, ratio: extra(withIdentity) },
    {
      name: 'execute(), two empty listeners (tools/call, tools/result)',
      avgNs: emptyListeners,
      ratio: extra(emptyListeners),
    },
  ]
  // A scrape after calls of 100 tools, each with two outcomes: ~200 call series, ~3,200 histogram lines.
  const many = await runtime(100)
  const metrics = await createGatewayMetrics(many.gateway)
  for (let i = 0; i < 100; i++) {
    await many.ctx.tools.execute({ ...input, name: `tool_${i}` })
    await many.ctx.tools.execute({ ...input, name: `tool_${i}`, arguments: { n: 'x' } })
  }
  const text = await metrics.registry.metrics()
  const scrape = await time(() => metrics.registry.metrics(), 1000)
  rows.push({ name: `one scrape, 100 tools (${Math.round(text.length / 1024)} KiB of text)`, avgNs: scrape })
  printTable('Metrics per call (serve --http)', rows)
  return rows
}

if (isMain(import.meta.url)) await run()
