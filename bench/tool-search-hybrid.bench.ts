// Issue 41: the 'hybrid' ranker's costs. Encoder load, embedding 1,000 tools at start (cold: no
// cache file; warm: a restart over the cache file), and the median search at 1,000 tools, split
// into embedding the request (`prepare`, once per new request) and the fused search itself; for
// the encoder in the main thread and in the worker pool (the ranker's own), one after the other.
// Also the first answer during a cold start as `search_tools` gets it (`prepare` with
// `allowPartial`, then the search: the full text's ranking while the tools are being embedded).
// Run: `npx tsx bench/tool-search-hybrid.bench.ts` (the optional peers must be installed).
// HYBRID_BENCH_POOL_ONLY=1: the worker pool alone. HYBRID_BENCH_INTERLEAVE=1: instead of the
// table, a new request through both encoders in one process, per request one after the other (the
// order alternating), with each thread's CPU (Linux: /proc/self/task) read around the windows: the
// main thread, the pool's worker and the other threads (V8's and libuv's helpers) apart.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
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

/** CPU ms so far of each thread of this process (Linux; empty elsewhere). */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>()
  let tids: string[] = []
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return out
  }
  for (const tid of tids) {
    try {
      out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6)
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out
}

/**
 * Each request embedded and searched by the main thread's encoder and by the pool, one after the
 * other in one process (the order alternating): process CPU per window as in the table, and each
 * thread's share, so the pool's cost per request shows against the same requests in the thread.
 */
async function interleaved(dir: string, queries: readonly string[]): Promise<void> {
  const cache = path.join(dir, 'interleaved.json')
  // The tools' vectors once (the cache file), then both sides restart over it.
  await (await start(cache, () => loadUseLiteEncoder())).embeddings.close()
  const before = new Set(threadCpu().keys())
  const pooled = await start(cache, () => EncoderPool.start())
  const poolThreads = new Set([...threadCpu().keys()].filter((tid) => !before.has(tid)))
  const inThread = await start(cache, () => loadUseLiteEncoder())
  const sides = { 'main thread': inThread.engine, 'worker pool': pooled.engine }
  type Window = { cpu: number; wall: number; main: number; worker: number; other: number }
  const windows = new Map<string, Window[]>(Object.keys(sides).map((side) => [side, []]))
  const main = String(process.pid)
  let differing = 0
  for (const [i, query] of queries.entries()) {
    const order = Object.entries(sides)
    if (i % 2 === 1) order.reverse()
    const found: string[] = []
    for (const [side, engine] of order) {
      const threads = threadCpu()
      const began = performance.now()
      const cpuBegan = cpu()
      await engine.prepare(query)
      found.push(JSON.stringify(engine.search(query, () => true, 5).map((hit) => [hit.definition.name, hit.score])))
      const window = { cpu: cpu() - cpuBegan, wall: performance.now() - began, main: 0, worker: 0, other: 0 }
      for (const [tid, ms] of threadCpu()) {
        const used = ms - (threads.get(tid) ?? 0)
        if (poolThreads.has(tid)) window.worker += used
        else if (tid !== main) window.other += used
      }
      // A thread's own schedstat lags by what it ran since its last tick (up to 4 ms here), and the
      // process figure is exact for the calling thread: the main thread's share is the rest.
      window.main = window.cpu - window.worker - window.other
      windows.get(side)?.push(window)
    }
    if (found[0] !== found[1]) differing++
  }
  await Promise.all([pooled.embeddings.close(), inThread.embeddings.close()])
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length
  const cell = (values: number[]) => `${median(values).toFixed(2)} / ${mean(values).toFixed(2)} ms`
  console.log(
    `\n## 'hybrid': a new request through each encoder, interleaved, ${TOOLS} tools, ${queries.length} requests (load average ${os.loadavg()[0]?.toFixed(1)})\n`,
  )
  console.log(
    'Median / mean per request. The worker and the other threads: CPU from: /proc/self/task/*/schedstat read before and after each window (they sleep then); the main thread: the process figure less theirs.\n',
  )
  console.log(
    '| encoder | wall | CPU (all threads) | main thread | pool worker | other threads |\n| --- | ---: | ---: | ---: | ---: | ---: |',
  )
  for (const [side, rows] of windows) {
    const of = (key: keyof Window) => cell(rows.map((row) => row[key]))
    console.log(`| ${side} | ${of('wall')} | ${of('cpu')} | ${of('main')} | ${of('worker')} | ${of('other')} |`)
  }
  console.log(`\nTop 5 (names and scores) differing between the two: ${differing} of ${queries.length} requests.`)
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
    if (process.env.HYBRID_BENCH_INTERLEAVE) return await interleaved(dir, queries)
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
