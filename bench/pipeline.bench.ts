// R-PERF: execute() of a trivial defineTool tool against a bare `await fn(args)`,
// with 0/1/10/100 pass-through listeners per waterfall and 1 KB / 1 MB / 10 MB arguments.
import { Context } from 'cordis'
import { format, interleavedMedians, isMain, loadBuilt, printTable, type Row, time } from './util.js'

const { createAgent, createToolRuntime, defineTool, ToolRuntime } = await loadBuilt()

function trivialTool() {
  return defineTool({
    name: 'echo',
    description: 'Return a constant.',
    parameters: { data: { type: 'json' } },
    output: { schema: { type: 'integer' }, render: () => [{ type: 'text', text: 'ok' }] },
    execute: async () => 1,
  })
}

function argsOfSize(bytes: number) {
  const items: Array<{ id: number; name: string; tags: string[] }> = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const item = { id: i, name: `item-${i}-${'x'.repeat(20)}`, tags: ['a', 'b', 'c'] }
    size += JSON.stringify(item).length + 1
    items.push(item)
  }
  return { data: items }
}

async function runtimeWith(listeners: number) {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  const tools = ctx.tools
  tools.register(trivialTool())
  for (let i = 0; i < listeners; i++) {
    ctx.on('tools/pre-execute', (_exec, next) => next())
    ctx.on('tools/execute', (_exec, next) => next())
    ctx.on('tools/post-execute', (_exec, _result, next) => next())
  }
  return tools
}

export async function run(): Promise<Row[]> {
  const signal = new AbortController().signal
  const small = { data: { a: 1 } }
  const fn = async (_args: unknown) => 1
  const bare = await time(async () => {
    await fn(small)
  })
  const rows: Row[] = [{ name: 'bare `await fn(args)`', avgNs: bare, ratio: '1×' }]
  let base = 0
  for (const listeners of [0, 1, 10, 100]) {
    const tools = await runtimeWith(listeners)
    const input = { callId: 'c', name: 'echo', arguments: small, signal }
    const ns = await time(() => tools.execute(input))
    if (listeners === 0) base = ns
    const perListener = listeners ? ` (+${format((ns - base) / (listeners * 3))} per listener)` : ''
    rows.push({
      name: `execute(), ${listeners} pass-through listener(s) per waterfall${perListener}`,
      avgNs: ns,
      ratio: `${(ns / bare).toFixed(1)}×`,
    })
  }
  const tools = await runtimeWith(0)
  for (const [label, bytes] of [
    ['1 KB', 1024],
    ['1 MB', 1024 * 1024],
    ['10 MB', 10 * 1024 * 1024],
  ] as const) {
    const args = argsOfSize(bytes)
    const input = { callId: 'c', name: 'echo', arguments: args, signal }
    const parse = await time(() => JSON.parse(JSON.stringify(args)), bytes > 1e6 ? 2000 : 300)
    const ns = await time(() => tools.execute(input), bytes > 1e6 ? 2000 : 300)
    rows.push({
      name: `execute(), ${label} arguments`,
      avgNs: ns,
      ratio: `${(ns / parse).toFixed(2)}× a JSON round trip`,
    })
  }
  printTable('Pipeline overhead (execute vs bare call)', rows)
  const access = await serviceAccess(small, signal)
  printTable('Reaching the service: `ctx.tools.execute(...)` vs a cached `tools` handle', access)
  return [...rows, ...access]
}

/**
 * The idiomatic `ctx.tools.execute(...)` reads the service through Cordis's context proxy on every
 * call; a handle read once (`const tools = ctx.tools`) does not. Root context and agent context.
 * The cases are interleaved over seven rounds in rotating order and the median kept, so machine
 * load and leftover garbage fall on every case alike.
 */
async function serviceAccess(small: { data: { a: number } }, signal: AbortSignal): Promise<Row[]> {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  ctx.tools.register(trivialTool())
  const agent = createAgent(ctx, { id: 'bench' })
  const input = { callId: 'c', name: 'echo', arguments: small, signal }
  const agentInput = { ...input, agent }
  const cached = ctx.tools
  const agentCached = agent.ctx.tools
  // createToolRuntime() also loads the timeout policy (a tools/execute listener, no deadline here).
  const created = await createToolRuntime()
  created.tools.register(trivialTool())
  const cases: Array<[string, () => unknown]> = [
    ['`ctx.tools` alone (root context)', () => ctx.tools],
    ['`agent.ctx.tools` alone', () => agent.ctx.tools],
    ['`new Error()` alone (what Cordis builds per read)', () => new Error('cannot get property "tools"')],
    ['cached `tools.execute(input)`', () => cached.execute(input)],
    ['`ctx.tools.execute(input)`', () => ctx.tools.execute(input)],
    ['cached agent `tools.execute({ ...input, agent })`', () => agentCached.execute(agentInput)],
    ['`agent.ctx.tools.execute({ ...input, agent })`', () => agent.ctx.tools.execute(agentInput)],
    ['cached handle from `createToolRuntime()` (timeout policy loaded)', () => created.tools.execute(input)],
  ]
  const ns = await interleavedMedians(cases.map(([, fn]) => fn))
  const extra = (value: number, base: number) => `+${format(value - base)} (${(value / base).toFixed(2)}×)`
  return cases.map(([name], i) => {
    const row: Row = { name, avgNs: ns[i] }
    if (i === 3 || i === 5) row.ratio = '1×'
    if (i === 4 || i === 6) row.ratio = extra(ns[i], ns[i - 1])
    if (i === 7) row.ratio = extra(ns[i], ns[3])
    return row
  })
}

if (isMain(import.meta.url)) await run()
