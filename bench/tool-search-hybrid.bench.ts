// Issue 41: the 'hybrid' ranker's costs. Encoder load, embedding 1,000 tools at start (cold: no
// cache file; warm: a restart over the cache file), and the median search at 1,000 tools, split
// into embedding the request (`prepare`, once per new request) and the fused search itself; for
// the encoder in the main thread and in the worker pool (the ranker's own), one after the other.
// Also the first answer during a cold start as `search_tools` gets it (`prepare` with
// `allowPartial`, then the search: the full text's ranking while the tools are being embedded).
// Run: `npx tsx bench/tool-search-hybrid.bench.ts` (the optional peers must be installed).
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { defaultPoolSize, EncoderPool } from '../src/search/encoder-pool.js'
import { EmbeddingRanker, FusedSearchEngine, type SentenceEncoder, TextSearchEngine } from '../src/search/index.js'
import { loadUseLiteEncoder, useLiteEncoderId } from '../src/search/use-lite-encoder.js'
import { copiedCatalog, hardTuningSet, testSet, tuningSet } from './tool-search-eval.bench.js'
import { isMain } from './util.js'

const TOOLS = 1_000

const tools = () => copiedCatalog(TOOLS)

/** Process CPU time in ms: on a shared machine it says more than the wall clock. */
const cpu = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

interface Started {
  engine: FusedSearchEngine
  embeddings: EmbeddingRanker
  ms: number
  cpu: number
  /** The longest the main thread's event loop was held while starting. */
  blockedMs: number
  /** From the start to the first request's answer, as `search_tools` gets it. */
  firstAnswerMs: number
  /** Whether that answer said its ranking was partial (the full text's alone). */
  firstPartial: boolean
}

// The first request of a start, as a model would send it.
const FIRST_REQUEST = 'send a message to the team channel'

async function start(cache: string, load: () => Promise<SentenceEncoder>): Promise<Started> {
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const began = performance.now()
  const cpuBegan = cpu()
  // As the runtime gives it: the id known up front, so a restart over the cache loads no model
  // until a request needs it.
  const embeddings = new EmbeddingRanker({ id: useLiteEncoderId(), load }, cache)
  const engine = new FusedSearchEngine(new TextSearchEngine(), embeddings.rank, embeddings, 'score')
  for (const definition of tools()) engine.add(definition)
  await engine.prepare(FIRST_REQUEST, { allowPartial: true })
  const first = engine.search(FIRST_REQUEST, () => true, 5)
  const firstAnswerMs = performance.now() - began
  await engine.prepare('warm up')
  const ms = performance.now() - began
  delay.disable()
  return {
    engine,
    embeddings,
    ms,
    cpu: cpu() - cpuBegan,
    blockedMs: delay.max / 1e6,
    firstAnswerMs,
    firstPartial: first[0]?.partial === true,
  }
}

/** Median wall and CPU of embedding each request (`prepare`) and then searching it. */
async function requests(engine: FusedSearchEngine, queries: readonly string[]) {
  const prepare: number[] = []
  const search: number[] = []
  const prepareCpu: number[] = []
  const searchCpu: number[] = []
  for (const query of queries) {
    let t = performance.now()
    let c = cpu()
    await engine.prepare(query)
    prepare.push(performance.now() - t)
    prepareCpu.push(cpu() - c)
    t = performance.now()
    c = cpu()
    engine.search(query, () => true, 5)
    search.push(performance.now() - t)
    searchCpu.push(cpu() - c)
  }
  return {
    prepare: median(prepare),
    prepareCpu: median(prepareCpu),
    search: median(search),
    searchCpu: median(searchCpu),
    both: median(prepare.map((p, i) => p + (search[i] as number))),
    bothCpu: median(prepareCpu.map((p, i) => p + (searchCpu[i] as number))),
  }
}

const ENCODERS: Record<string, () => Promise<SentenceEncoder>> = {
  'in the main thread': () => loadUseLiteEncoder(),
  [`worker pool (${defaultPoolSize()})`]: () => EncoderPool.start(),
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-hybrid-bench-'))
  const queries = [...testSet(), ...tuningSet(), ...hardTuningSet()].map((r) => r.query)
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
  const rows: string[] = []
  try {
    // HYBRID_BENCH_POOL_ONLY=1: the worker pool alone (the runtime's), for a shorter run.
    const encoders = Object.entries(ENCODERS).filter(
      ([label]) => !process.env.HYBRID_BENCH_POOL_ONLY || label.startsWith('worker'),
    )
    for (const [label, load] of encoders) {
      const cache = path.join(dir, `${label.replace(/\W+/g, '-')}.json`)
      const loadBegan = performance.now()
      const loadCpu = cpu()
      await (await load()).close?.()
      const loaded = { ms: performance.now() - loadBegan, cpu: cpu() - loadCpu }
      const cold = await start(cache, load)
      await cold.embeddings.close()
      const warm = await start(cache, load)
      const size = (statSync(cache).size / 1e6).toFixed(1)
      const timed = await requests(warm.engine, queries)
      await warm.embeddings.close()
      rows.push(
        `| ${label}: encoder load | ${s(loaded.ms)} | ${s(loaded.cpu)} | |`,
        `| ${label}: start, no cache: load + embed ${TOOLS} tools | ${s(cold.ms)} | ${s(cold.cpu)} | ${cold.blockedMs.toFixed(0)} ms |`,
        `| ${label}: start, no cache: first answer (\`search_tools\`' path)${cold.firstPartial ? ', partial' : ''} | ${cold.firstAnswerMs.toFixed(0)} ms | | |`,
        `| ${label}: restart over the cache file (${size} MB) | ${s(warm.ms)} | ${s(warm.cpu)} | ${warm.blockedMs.toFixed(0)} ms |`,
        `| ${label}: restart, first answer${warm.firstPartial ? ', partial' : ''} | ${warm.firstAnswerMs.toFixed(0)} ms | | |`,
        `| ${label}: embed one new request (\`prepare\`), median of ${queries.length} | ${timed.prepare.toFixed(1)} ms | ${timed.prepareCpu.toFixed(1)} ms | |`,
        `| ${label}: fused search of a prepared request, limit 5, median | ${timed.search.toFixed(2)} ms | ${timed.searchCpu.toFixed(2)} ms | |`,
        `| ${label}: both, median | ${timed.both.toFixed(1)} ms | ${timed.bothCpu.toFixed(1)} ms | |`,
      )
    }
    const label = process.env.HYBRID_BENCH_LABEL ? `${process.env.HYBRID_BENCH_LABEL}: ` : ''
    console.log(`\n## ${label}'hybrid' ranker at ${TOOLS} tools (load average ${os.loadavg()[0]?.toFixed(1)})\n`)
    console.log('| encoder: case | wall | CPU (all threads) | main thread held at most |\n| --- | ---: | ---: | ---: |')
    for (const row of rows) console.log(row)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
