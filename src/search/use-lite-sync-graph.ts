// Universal Sentence Encoder lite through TensorFlow.js' synchronous graph executor. The graph has
// two `Where` nodes (the positions kept by the length clip, and the non-padding positions of the
// dense token matrix); `Where` is the only kind of node that makes the package use `executeAsync`.
// Both are exact integer functions of the tokens, so they are computed here and the graph is fed
// just below them (`execute` with named intermediate tensors, a public API): the same kernels on
// the same inputs, so the same vectors, for about a seventh less CPU per request (measured:
// docs/performance.md). The graph is still what computes the conditions (`Less`, `Greater`).
//
// A single text (a search request) goes further: everything the graph computes from the token
// positions alone (shapes, masks, the timing signal; src/search/graph-frontier.ts finds it) is the
// same for every text of that many tokens, so it is kept from the first such text, and the run is
// fed it with the tokens: one `execute` of the kernels that depend on the tokens themselves.

import { type GraphNode, graphFrontier } from './graph-frontier.js'

/** The slice of a TensorFlow.js tensor used here. */
interface Tensor {
  readonly shape: number[]
  dataSync(): ArrayLike<number>
  arraySync(): unknown
  dispose(): void
}
/** The slice of `@energetic-ai/core` (TensorFlow.js) used here. */
export interface TfCore {
  tensor1d(values: Int32Array, dtype: 'int32'): Tensor
  tensor2d(values: Int32Array, shape: [number, number], dtype: 'int32'): Tensor
}
/** The slice of `@energetic-ai/embeddings`' model used here. */
export interface UseLiteModel {
  tokenizer: { encode(text: string): number[] }
  model: {
    readonly outputs: { name: string }[]
    readonly weights: Record<string, Tensor[]>
    execute(inputs: Record<string, Tensor>, outputs: string | string[]): Tensor | Tensor[]
  }
  embed(texts: string[]): Promise<number[][]>
}

/** The synchronous encoder. */
export interface UseLiteSyncEncoder {
  embed(texts: readonly string[]): number[][]
  /** Whether a single text's run is fed what was kept from an earlier text of as many tokens. */
  readonly keepsPositions: boolean
}

const SCOPE = 'module_apply_default/Encoder_en/KonaTransformer/'
// The first `Where` takes `Less`; its only consumer flattens it (`Reshape`), which is fed instead.
const LESS = `${SCOPE}ClipToMaxLength/Less`
const KEPT = `${SCOPE}ClipToMaxLength/Reshape`
// The second takes `Greater`; its consumers are a cast to int32 and a column slice.
const GREATER = `${SCOPE}Encode/Greater`
const MASK = `${SCOPE}Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32`
const COLUMN = `${SCOPE}Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2`
// `Greater` compares each position of the dense token matrix with the padding value, -1: every
// token id (≥ 0) is above it, so the non-padding positions are the text's token positions, and
// `Where(Greater)` a function of the token count alone (what the kept tensors are keyed on).
const PADDING = `${SCOPE}Encode/SparseToDense/default_value`
const GRAPH_CONSTANTS: [string, number[]][] = [
  // The column slice's begin/end/strides: computed here as column 1, so [0,1]/[0,2]/[1,1].
  [
    `ConstantFolding/${SCOPE}Encode/TransformerStack/Layer_1/TransformerLayer/FFN/conv1/Tensordot/ListDiff-folded-0`,
    [0, 1],
  ],
  [`${COLUMN}/stack_1`, [0, 2]],
  [`${COLUMN}/stack_2`, [1, 1]],
  [PADDING, [-1]],
]
const PROBE = ['a probe text, to check the graph is the one expected', 'and a second']
// Two single texts with as many tokens and different tokens: the second runs on what the first
// left, so a kept tensor that depended on the tokens would show.
const SAME_LENGTH = ['open the red door', 'close the blue box']
// Token counts whose kept tensors are held (a few kB to a few hundred kB each); past this, the
// oldest is released.
const KEPT_COUNTS = 32

/** Row-major coordinates of the non-zero entries of a rank-2 condition, as `Where` gives them. */
function whereRank2(condition: Tensor): { coordinates: Int32Array; count: number; columns: Int32Array } {
  const data = condition.dataSync()
  const width = condition.shape[1] ?? 1
  let count = 0
  for (let i = 0; i < data.length; i++) if (data[i] !== 0) count++
  const coordinates = new Int32Array(count * 2)
  const columns = new Int32Array(count)
  for (let i = 0, k = 0; i < data.length; i++)
    if (data[i] !== 0) {
      coordinates[2 * k] = Math.floor(i / width)
      coordinates[2 * k + 1] = columns[k] = i % width
      k++
    }
  return { coordinates, count, columns }
}

/** Positions of the non-zero entries of a rank-1 condition (`Where`, then the graph's flattening). */
function whereRank1(condition: Tensor): Int32Array {
  const data = condition.dataSync()
  const out: number[] = []
  for (let i = 0; i < data.length; i++) if (data[i] !== 0) out.push(i)
  return Int32Array.from(out)
}

const asList = (result: Tensor | Tensor[]): Tensor[] => (Array.isArray(result) ? result : [result])

class SyncEncoder implements UseLiteSyncEncoder {
  private readonly output: string
  /** Per token count of a single text: the tensors its run is fed besides the tokens. */
  private readonly kept = new Map<number, Record<string, Tensor>>()

  constructor(
    private readonly core: TfCore,
    private readonly use: UseLiteModel,
    private readonly frontier: readonly string[] | undefined,
  ) {
    this.output = (use.model.outputs[0] as { name: string }).name
  }

  get keepsPositions(): boolean {
    return this.frontier !== undefined
  }

  embed(texts: readonly string[]): number[][] {
    const encodings = texts.map((text) => this.use.tokenizer.encode(text))
    const tokens = encodings[0] as number[]
    if (this.frontier === undefined || encodings.length !== 1 || tokens.some((token) => !(token >= 0)))
      return this.run(encodings, undefined)
    const fed = this.kept.get(tokens.length)
    if (fed === undefined) return this.run(encodings, this.frontier)
    // Most recently used last.
    this.kept.delete(tokens.length)
    this.kept.set(tokens.length, fed)
    const values = this.core.tensor1d(Int32Array.from(tokens), 'int32')
    try {
      return this.vectors(this.use.model.execute({ ...fed, values }, this.output))
    } finally {
      values.dispose()
    }
  }

  /** Drop what was kept (a probe's, or to start over). */
  forget(): void {
    for (const fed of this.kept.values()) for (const tensor of Object.values(fed)) tensor.dispose()
    this.kept.clear()
  }

  private vectors(result: Tensor | Tensor[]): number[][] {
    const [tensor] = asList(result) as [Tensor]
    try {
      return tensor.arraySync() as number[][]
    } finally {
      tensor.dispose()
    }
  }

  /** The three passes; with `keep` (a single text), the named tensors are kept for its token count. */
  private run(encodings: readonly number[][], keep: readonly string[] | undefined): number[][] {
    const { core, use } = this
    const graph = use.model
    const total = encodings.reduce((sum, tokens) => sum + tokens.length, 0)
    const indexData = new Int32Array(total * 2)
    const valueData = new Int32Array(total)
    let at = 0
    encodings.forEach((tokens, row) => {
      tokens.forEach((token, column) => {
        indexData[2 * at] = row
        indexData[2 * at + 1] = column
        valueData[at++] = token
      })
    })
    const owned: Tensor[] = []
    const own = (tensor: Tensor) => {
      owned.push(tensor)
      return tensor
    }
    try {
      const inputs: Record<string, Tensor> = {
        indices: own(core.tensor2d(indexData, [total, 2], 'int32')),
        values: own(core.tensor1d(valueData, 'int32')),
      }
      inputs[KEPT] = own(core.tensor1d(whereRank1(own(asList(graph.execute(inputs, LESS))[0] as Tensor)), 'int32'))
      const nonPadding = whereRank2(own(asList(graph.execute(inputs, GREATER))[0] as Tensor))
      inputs[MASK] = own(core.tensor2d(nonPadding.coordinates, [nonPadding.count, 2], 'int32'))
      inputs[COLUMN] = own(core.tensor1d(nonPadding.columns, 'int32'))
      if (keep === undefined) return this.vectors(graph.execute(inputs, this.output))
      // The frontier names fed inputs (kept as they are) and nodes the run also returns.
      const computed = keep.filter((name) => inputs[name] === undefined)
      const [vectors, ...more] = asList(graph.execute(inputs, [this.output, ...computed]))
      const fed: Record<string, Tensor> = {}
      computed.forEach((name, i) => {
        fed[name] = more[i] as Tensor
      })
      for (const name of keep)
        if (inputs[name] !== undefined) {
          fed[name] = inputs[name]
          owned.splice(owned.indexOf(inputs[name]), 1)
        }
      this.kept.set(encodings[0]?.length ?? 0, fed)
      if (this.kept.size > KEPT_COUNTS) {
        const [oldest, tensors] = this.kept.entries().next().value as [number, Record<string, Tensor>]
        this.kept.delete(oldest)
        for (const tensor of Object.values(tensors)) tensor.dispose()
      }
      return this.vectors(vectors as Tensor)
    } finally {
      for (const tensor of owned) tensor.dispose()
    }
  }
}

const bitEqual = (a: number[][], b: number[][]) =>
  a.length === b.length && a.every((vector, i) => vector.every((value, j) => value === b[i]?.[j]))

/**
 * A synchronous encoder for the loaded model, or `undefined` when its graph is not the one this
 * was written for (another model version): it must name the nodes fed here, hold the expected
 * constants, and give a probe batch exactly the vectors of the package's own `embed`. Given the
 * graph's nodes (the model package's `model.json`), a single text's run is fed what an earlier text
 * of as many tokens left, once single probes of the same length give exactly the package's vectors
 * that way; otherwise every call runs the three passes.
 */
export async function useLiteSyncEmbed(
  core: TfCore,
  use: UseLiteModel,
  nodes?: readonly GraphNode[],
): Promise<UseLiteSyncEncoder | undefined> {
  const constantsMatch = GRAPH_CONSTANTS.every(([name, expected]) => {
    const tensor = use.model.weights[name]?.[0]
    return tensor !== undefined && Array.from(tensor.dataSync()).join() === expected.join()
  })
  if (!constantsMatch) return undefined
  const output = use.model.outputs[0]?.name
  const frontier =
    nodes === undefined || output === undefined
      ? undefined
      : graphFrontier(nodes, output, new Set(['indices', 'values', KEPT, MASK, COLUMN]), 'values')
  const plain = new SyncEncoder(core, use, undefined)
  try {
    if (!bitEqual(await use.embed(PROBE), plain.embed(PROBE))) return undefined
  } catch {
    return undefined
  }
  if (frontier === undefined) return plain
  const keeping = new SyncEncoder(core, use, frontier)
  try {
    const [first, second] = SAME_LENGTH.map((text) => use.tokenizer.encode(text).length)
    let same = first === second
    // The first text is computed and its tensors kept; the second, then each again, run on them.
    for (const text of [...SAME_LENGTH, ...SAME_LENGTH])
      same &&= bitEqual(await use.embed([text]), keeping.embed([text]))
    return same ? keeping : plain
  } catch {
    return plain
  } finally {
    keeping.forget()
  }
}
