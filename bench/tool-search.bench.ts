// Issue 27: tool search. Retrieval quality over real MCP servers' tool lists (recall@5, MRR), speed
// of search, index build and incremental update at 10,000 tools, and the first request's tool
// payload for 200 aggregated tools with and without deferral.
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { format, isMain, loadBuilt, printTable, type Row } from './util.js'

const { createAgent, ToolRuntime } = await loadBuilt()
const { TextSearchEngine } = (await import(
  new URL('../dist/search/index.js', import.meta.url).href
)) as typeof import('../src/search/index.js')
// Another build to compare with, in the same run: TOOLGATE_SEARCH_BASELINE=/path/to/dist/search/index.js
// (a checkout of an earlier commit, built with `npx tsc -p tsconfig.build.json`).
const baselineModule = process.env.TOOLGATE_SEARCH_BASELINE
const Baseline =
  baselineModule === undefined
    ? undefined
    : ((await import(pathToFileURL(baselineModule).href)) as typeof import('../src/search/index.js')).TextSearchEngine
type Definition = import('../src/index.js').ToolDefinition

interface Recorded {
  name: string
  description: string
  inputSchema: unknown
}
const servers = JSON.parse(readFileSync(new URL('./fixtures/mcp-tools.json', import.meta.url), 'utf8')) as Record<
  string,
  Recorded[]
>
const queries = JSON.parse(readFileSync(new URL('./fixtures/tool-search-queries.json', import.meta.url), 'utf8')) as {
  query: string
  tools: string[]
}[]

function definition(name: string, description: string, parameters: unknown, defer?: boolean): Definition {
  return {
    name,
    description,
    parameters: parameters as Definition['parameters'],
    output: { schema: {}, render: () => [] },
    execute: async () => null,
    ...(defer === undefined ? {} : { defer }),
  }
}

const real = Object.entries(servers).flatMap(([server, tools]) =>
  tools.map((tool) => ({ ...tool, name: `${server}__${tool.name}` })),
)

async function quality(): Promise<{ recall5: number; mrr: number; misses: string[] }> {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  const tools = ctx.tools
  for (const tool of real) tools.register(definition(tool.name, tool.description, tool.inputSchema, true))
  let hits = 0
  let reciprocal = 0
  const misses: string[] = []
  for (const { query, tools: wanted } of queries) {
    const ranked = tools.search(query, { limit: 50 }).map((match) => match.name)
    const rank = ranked.findIndex((name) => wanted.includes(name))
    if (rank >= 0 && rank < 5) hits++
    else misses.push(`${query} → ${ranked.slice(0, 3).join(', ')} (wanted ${wanted.join(' | ')})`)
    if (rank >= 0) reciprocal += 1 / (rank + 1)
  }
  await ctx.fiber.dispose()
  return { recall5: hits / queries.length, mrr: reciprocal / queries.length, misses }
}

/** 10,000 tools: the real ones renamed per copy, so the vocabulary is real and the index large. */
function synthetic(count: number): Definition[] {
  const out: Definition[] = []
  for (let i = 0; out.length < count; i++) {
    const tool = real[i % real.length]
    out.push(definition(`s${Math.floor(i / real.length)}_${tool.name}`, tool.description, tool.inputSchema))
  }
  return out
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

type Engine = import('../src/search/index.js').TextSearchEngine
const collect = (globalThis as { gc?: () => void }).gc
interface EngineKind {
  label: string
  create: () => Engine
}

/**
 * Build, search, add and remove at 10,000 tools for each engine, the engines interleaved step by
 * step (so a change in the shared machine's load falls on all of them alike), medians kept.
 */
function speed(kinds: EngineKind[]): Row[] {
  const defs = synthetic(10_000)
  const accept = () => true
  // Load each engine's code once (and its library, if any) so the build time is the index's.
  for (const kind of kinds) {
    const warm = kind.create()
    warm.add(defs[0])
    warm.search('x', accept, 5)
  }
  const builds = kinds.map(() => [] as number[])
  // CPU time of the process during the build: less sensitive than wall time to waiting for a core on
  // a busy machine (it still counts GC helper threads).
  const buildCpu = kinds.map(() => [] as number[])
  const engines = kinds.map((kind) => kind.create())
  for (let round = 0; round < 5; round++)
    kinds.forEach((kind, k) => {
      const engine = kind.create()
      for (const d of defs) engine.add(d)
      // With --expose-gc, collect the previous engine's garbage first, so one build does not pay for another's.
      collect?.()
      const cpu = process.cpuUsage()
      const start = performance.now()
      engine.build()
      builds[k].push((performance.now() - start) * 1e6)
      const used = process.cpuUsage(cpu)
      buildCpu[k].push((used.user + used.system) * 1e3)
      engines[k] = engine
    })
  const searches = kinds.map(() => [] as number[])
  for (let round = 0; round < 3; round++)
    for (const [q, { query }] of queries.entries())
      for (let j = 0; j < kinds.length; j++) {
        const k = (j + q) % kinds.length
        const start = performance.now()
        engines[k].search(query, accept, 5)
        searches[k].push((performance.now() - start) * 1e6)
      }
  const extra = synthetic(10_500).slice(10_000)
  const updates = kinds.map(() => [] as number[])
  const removals = kinds.map(() => [] as number[])
  for (const d of extra)
    engines.forEach((engine, k) => {
      const start = performance.now()
      engine.add(d)
      updates[k].push((performance.now() - start) * 1e6)
    })
  for (const d of extra)
    engines.forEach((engine, k) => {
      const start = performance.now()
      engine.remove(d)
      removals[k].push((performance.now() - start) * 1e6)
    })
  const rows: Row[] = []
  const cases: Array<[string, number[][]]> = [
    ['index build, 10,000 tools (median of 5)', builds],
    ['index build CPU time, 10,000 tools (median of 5)', buildCpu],
    [`search at 10,000 tools, limit 5 (median of ${searches[0].length})`, searches],
    ['incremental add of one tool (median of 500)', updates],
    ['incremental remove of one tool (median of 500)', removals],
  ]
  for (const [name, samples] of cases)
    kinds.forEach((kind, k) => {
      const ratio = k === 0 ? undefined : `${(median(samples[0]) / median(samples[k])).toFixed(1)}× (baseline ÷ this)`
      rows.push({
        name: kinds.length === 1 ? name : `${name}, ${kind.label}`,
        avgNs: median(samples[k]),
        ...(ratio === undefined ? {} : { ratio }),
      })
    })
  return rows
}

/** recall@5 and MRR of an engine by itself, every tool accepted (what `quality()` measures through the runtime). */
function engineQuality(create: () => Engine): { recall5: number; mrr: number } {
  const engine = create()
  for (const tool of real) engine.add(definition(tool.name, tool.description, tool.inputSchema))
  let hits = 0
  let reciprocal = 0
  for (const { query, tools: wanted } of queries) {
    const ranked = engine.search(query, () => true, 50).map((match) => match.definition.name)
    const rank = ranked.findIndex((name) => wanted.includes(name))
    if (rank >= 0 && rank < 5) hits++
    if (rank >= 0) reciprocal += 1 / (rank + 1)
  }
  return { recall5: hits / queries.length, mrr: reciprocal / queries.length }
}

async function payload(): Promise<{ without: number; withDeferral: number; loaded5: number }> {
  const defs = Array.from({ length: 200 }, (_, i) => {
    const tool = real[i % real.length]
    return { ...tool, name: i < real.length ? tool.name : `m${Math.floor(i / real.length)}_${tool.name}` }
  })
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  const tools = ctx.tools
  for (const tool of defs) tools.register(definition(tool.name, tool.description, tool.inputSchema))
  const without = JSON.stringify(tools.schemas()).length
  const agent = createAgent(ctx, { id: 'a' })
  tools.defer(['*'], agent)
  const withDeferral = JSON.stringify(tools.schemas(agent)).length
  tools.load(
    tools.search('create a pull request', { agent, limit: 5 }).map((m) => m.name),
    agent,
  )
  const loaded5 = JSON.stringify(tools.schemas(agent)).length
  await ctx.fiber.dispose()
  return { without, withDeferral, loaded5 }
}

export async function run(): Promise<void> {
  const q = await quality()
  console.log(`\n## Tool search quality (${real.length} real tools, ${queries.length} requests)\n`)
  console.log(`recall@5: ${q.recall5.toFixed(3)}, MRR: ${q.mrr.toFixed(3)}`)
  for (const miss of q.misses) console.log(`- miss: ${miss}`)
  if (Baseline !== undefined) {
    const base = engineQuality(() => new Baseline())
    console.log(`baseline (${baselineModule}): recall@5: ${base.recall5.toFixed(3)}, MRR: ${base.mrr.toFixed(3)}`)
  }
  const kinds: EngineKind[] = [
    ...(Baseline === undefined ? [] : [{ label: 'baseline', create: () => new Baseline() }]),
    { label: 'this build', create: () => new TextSearchEngine() },
  ]
  printTable('Tool search speed', speed(kinds))
  const p = await payload()
  const tokens = (chars: number) => `${chars} chars ≈ ${Math.round(chars / 4)} tokens`
  console.log('\n## First request tool payload, 200 aggregated tools\n')
  console.log(`- without deferral: ${tokens(p.without)}`)
  console.log(`- with deferral (search_tools only): ${tokens(p.withDeferral)}`)
  console.log(`- after one search loaded 5: ${tokens(p.loaded5)}`)
  void format
}

if (isMain(import.meta.url)) await run()
