// Issue 41 (Targets, hybrid speed): a new 'hybrid' request through the worker pool (the runtime's
// path) and in the main thread, this tree's sources against another checkout's ("before"),
// interleaved in one process: per request, both sides embed it (`prepare`) and search it at 1,000
// tools, the order alternating. Medians of wall time and of process CPU (all threads).
//   HYBRID_BEFORE=/path/to/other/checkout npx tsx bench/tool-search-hybrid-ab.bench.ts
// HYBRID_AB_THREAD=1 compares the in-thread encoders instead of the pools.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type * as here from '../src/search/index.js'
import type { FusedSearchEngine, SentenceEncoder } from '../src/search/index.js'
import { copiedCatalog, hardTuningSet, testSet, tuningSet } from './tool-search-eval.bench.js'

const TOOLS = 1_000
const before = process.env.HYBRID_BEFORE
if (before === undefined) throw new Error('set HYBRID_BEFORE to the checkout to compare with')
const inThread = process.env.HYBRID_AB_THREAD === '1'

type SearchModule = typeof here
interface Side {
  search: SearchModule
  load: () => Promise<SentenceEncoder>
  id: string
}
async function side(root: string): Promise<Side> {
  const url = (file: string) => pathToFileURL(path.join(root, 'src/search', file)).href
  const search = (await import(url('index.ts'))) as SearchModule
  const pool = (await import(url('encoder-pool.ts'))) as typeof import('../src/search/encoder-pool.js')
  const encoder = (await import(url('use-lite-encoder.ts'))) as typeof import('../src/search/use-lite-encoder.js')
  return {
    search,
    load: inThread ? () => encoder.loadUseLiteEncoder() : () => pool.EncoderPool.start(),
    id: encoder.useLiteEncoderId(),
  }
}

const tools = () => copiedCatalog(TOOLS)

async function engine({ search, load, id }: Side, cache: string) {
  const embeddings = new search.EmbeddingRanker({ id, load }, cache)
  const engine = new search.FusedSearchEngine(new search.TextSearchEngine(), embeddings.rank, embeddings, 'score')
  for (const definition of tools()) engine.add(definition)
  await engine.prepare('warm up')
  for (const warm of ['send a message', 'list the open issues of the repository', 'what changed'])
    await engine.prepare(warm)
  return { engine: engine as FusedSearchEngine, embeddings }
}

const cpu = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number

const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-hybrid-ab-'))
try {
  const sides = { before: await side(before), after: await side(path.resolve(import.meta.dirname, '..')) }
  // The tools' vectors once per side (the cache files), then the engines timed.
  const engines = {
    before: await engine(sides.before, path.join(dir, 'before.json')),
    after: await engine(sides.after, path.join(dir, 'after.json')),
  }
  const queries = [...testSet(), ...tuningSet(), ...hardTuningSet()].map((r) => r.query)
  const load = [os.loadavg()[0] as number]
  const times = {
    before: {
      prepare: [] as number[],
      prepareCpu: [] as number[],
      search: [] as number[],
      both: [] as number[],
      bothCpu: [] as number[],
    },
    after: {
      prepare: [] as number[],
      prepareCpu: [] as number[],
      search: [] as number[],
      both: [] as number[],
      bothCpu: [] as number[],
    },
  }
  let differ = 0
  for (const [i, query] of queries.entries()) {
    const names: (keyof typeof engines)[] = i % 2 === 0 ? ['before', 'after'] : ['after', 'before']
    const found: Record<string, string> = {}
    for (const name of names) {
      const { engine } = engines[name]
      const t = performance.now()
      const c = cpu()
      await engine.prepare(query)
      const prepared = performance.now()
      const preparedCpu = cpu()
      const hits = engine.search(query, () => true, 5)
      const done = performance.now()
      const doneCpu = cpu()
      found[name] = hits.map((hit) => `${hit.definition.name}:${hit.score}`).join()
      const row = times[name]
      row.prepare.push(prepared - t)
      row.prepareCpu.push(preparedCpu - c)
      row.search.push(done - prepared)
      row.both.push(done - t)
      row.bothCpu.push(doneCpu - c)
    }
    if (found.before !== found.after) differ++
  }
  load.push(os.loadavg()[0] as number)
  console.log(
    `\n${inThread ? 'in the main thread' : 'worker pool'}, ${queries.length} new requests each, interleaved; load average ${load.map((x) => x.toFixed(1)).join(' → ')}\n`,
  )
  console.log('| side | embed: wall / CPU | fused search | both: wall / CPU |\n| --- | ---: | ---: | ---: |')
  for (const [name, row] of Object.entries(times))
    console.log(
      `| ${name} | ${median(row.prepare).toFixed(2)} / ${median(row.prepareCpu).toFixed(2)} ms | ${median(row.search).toFixed(2)} ms | ${median(row.both).toFixed(2)} / ${median(row.bothCpu).toFixed(2)} ms |`,
    )
  console.log(`\nrequests whose top 5 (names and scores) differ between the sides: ${differ}`)
  await engines.before.embeddings.close()
  await engines.after.embeddings.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
