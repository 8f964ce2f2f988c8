// Issue 27: tool search. Retrieval quality over real MCP servers' tool lists (recall@5, MRR), speed
// of search, index build and incremental update at 10,000 tools, and the first request's tool
// payload for 200 aggregated tools with and without deferral.
import { readFileSync } from 'node:fs'
import { Context } from 'cordis'
import { format, isMain, loadBuilt, printTable, type Row } from './util.js'

const { createAgent, ToolRuntime } = await loadBuilt()
const { TextSearchEngine } = (await import(
  new URL('../dist/search/index.js', import.meta.url).href
)) as typeof import('../src/search/index.js')
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

function speed(): Row[] {
  const defs = synthetic(10_000)
  const accept = () => true
  // Load minisearch once so the build time is the index's, not the module's.
  const warm = new TextSearchEngine()
  warm.add(defs[0])
  warm.search('x', accept, 5)
  const builds: number[] = []
  let engine = new TextSearchEngine()
  for (let round = 0; round < 5; round++) {
    engine = new TextSearchEngine()
    for (const d of defs) engine.add(d)
    const start = performance.now()
    engine.build()
    builds.push((performance.now() - start) * 1e6)
  }
  const searches: number[] = []
  for (let round = 0; round < 3; round++)
    for (const { query } of queries) {
      const start = performance.now()
      engine.search(query, accept, 5)
      searches.push((performance.now() - start) * 1e6)
    }
  const updates: number[] = []
  const extra = synthetic(10_500).slice(10_000)
  for (const d of extra) {
    const start = performance.now()
    engine.add(d)
    updates.push((performance.now() - start) * 1e6)
  }
  const removals: number[] = []
  for (const d of extra) {
    const start = performance.now()
    engine.remove(d)
    removals.push((performance.now() - start) * 1e6)
  }
  return [
    { name: 'index build, 10,000 tools (median of 5)', avgNs: median(builds) },
    { name: `search at 10,000 tools, limit 5 (median of ${searches.length})`, avgNs: median(searches) },
    { name: 'incremental add of one tool (median of 500)', avgNs: median(updates) },
    { name: 'incremental remove of one tool (median of 500)', avgNs: median(removals) },
  ]
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
  printTable('Tool search speed', speed())
  const p = await payload()
  const tokens = (chars: number) => `${chars} chars ≈ ${Math.round(chars / 4)} tokens`
  console.log('\n## First request tool payload, 200 aggregated tools\n')
  console.log(`- without deferral: ${tokens(p.without)}`)
  console.log(`- with deferral (search_tools only): ${tokens(p.withDeferral)}`)
  console.log(`- after one search loaded 5: ${tokens(p.loaded5)}`)
  void format
}

if (isMain(import.meta.url)) await run()
