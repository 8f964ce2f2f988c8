// Issue 41: the 'hybrid' ranker's costs. Encoder load, embedding 1,000 tools at start (cold: no
// cache file; warm: a restart over the cache file), and the median search at 1,000 tools, split
// into embedding the request (`prepare`, once per new request) and the fused search itself.
// Run: `npx tsx bench/tool-search-hybrid.bench.ts` (the optional peers must be installed).
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { ToolDefinition } from '../src/contract/tool-definition.js'
import { EmbeddingRanker, FusedSearchEngine, TextSearchEngine } from '../src/search/index.js'
import { loadUseLiteEncoder } from '../src/search/use-lite-encoder.js'
import { catalog, hardTuningSet, testSet, tuningSet } from './tool-search-eval.bench.js'
import { isMain } from './util.js'

const TOOLS = 1_000

/** 1,000 distinct tools: the real ones, then copies whose descriptions differ by a number. */
function tools(): ToolDefinition[] {
  return Array.from({ length: TOOLS }, (_, i) => {
    const base = catalog[i % catalog.length] as ToolDefinition
    const copy = Math.floor(i / catalog.length)
    return copy === 0
      ? base
      : { ...base, name: `${base.name}_${copy}`, description: `${base.description} (copy ${copy})` }
  })
}

/** Process CPU time in ms: on a shared machine it says more than the wall clock. */
const cpu = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

async function start(cache: string) {
  const began = performance.now()
  const cpuBegan = cpu()
  const embeddings = new EmbeddingRanker(loadUseLiteEncoder, cache)
  const engine = new FusedSearchEngine(new TextSearchEngine(), embeddings.rank, embeddings, 'score')
  for (const definition of tools()) engine.add(definition)
  await engine.prepare('warm up')
  return { engine, ms: performance.now() - began, cpu: cpu() - cpuBegan }
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-hybrid-bench-'))
  const cache = path.join(dir, 'tool-embeddings.json')
  try {
    const loadBegan = performance.now()
    const loadCpu = cpu()
    await loadUseLiteEncoder()
    const load = performance.now() - loadBegan
    const loadCpuMs = cpu() - loadCpu
    const cold = await start(cache)
    const warm = await start(cache)
    const queries = [...testSet(), ...tuningSet(), ...hardTuningSet()].map((r) => r.query)
    const prepare: number[] = []
    const search: number[] = []
    const prepareCpu: number[] = []
    const searchCpu: number[] = []
    for (const query of queries) {
      let t = performance.now()
      let c = cpu()
      await warm.engine.prepare(query)
      prepare.push(performance.now() - t)
      prepareCpu.push(cpu() - c)
      t = performance.now()
      c = cpu()
      warm.engine.search(query, () => true, 5)
      search.push(performance.now() - t)
      searchCpu.push(cpu() - c)
    }
    console.log(`\n## 'hybrid' ranker at ${TOOLS} tools (load average ${os.loadavg()[0]?.toFixed(1)})\n`)
    console.log('| case | wall | CPU |\n| --- | ---: | ---: |')
    console.log(`| encoder load (weights from the package) | ${load.toFixed(0)} ms | ${loadCpuMs.toFixed(0)} ms |`)
    console.log(
      `| start, no cache: load + embed ${TOOLS} tools | ${(cold.ms / 1000).toFixed(1)} s | ${(cold.cpu / 1000).toFixed(1)} s |`,
    )
    const size = (statSync(cache).size / 1e6).toFixed(1)
    console.log(
      `| restart over the cache file (${size} MB) | ${(warm.ms / 1000).toFixed(2)} s | ${(warm.cpu / 1000).toFixed(2)} s |`,
    )
    console.log(
      `| embed one new request (\`prepare\`), median of ${queries.length} | ${median(prepare).toFixed(1)} ms | ${median(prepareCpu).toFixed(1)} ms |`,
    )
    console.log(
      `| fused search of a prepared request, limit 5, median | ${median(search).toFixed(2)} ms | ${median(searchCpu).toFixed(2)} ms |`,
    )
    const both = prepare.map((p, i) => p + (search[i] as number))
    const bothCpu = prepareCpu.map((p, i) => p + (searchCpu[i] as number))
    console.log(`| both, median | ${median(both).toFixed(1)} ms | ${median(bothCpu).toFixed(1)} ms |`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
