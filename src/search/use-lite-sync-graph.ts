// Universal Sentence Encoder lite through TensorFlow.js' synchronous graph executor. The graph has
// two `Where` nodes (the positions kept by the length clip, and the non-padding positions of the
// dense token matrix); `Where` is the only kind of node that makes the package use `executeAsync`.
// Both are exact integer functions of the tokens, so they are computed here and the graph is fed
// just below them (`execute` with named intermediate tensors, a public API): the same kernels on
// the same inputs, so the same vectors, for about a seventh less CPU per request (measured:
// docs/performance.md). The graph is still what computes the conditions (`Less`, `Greater`).

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
    execute(inputs: Record<string, Tensor>, outputs: string): Tensor
  }
  embed(texts: string[]): Promise<number[][]>
}

const SCOPE = 'module_apply_default/Encoder_en/KonaTransformer/'
// The first `Where` takes `Less`; its only consumer flattens it (`Reshape`), which is fed instead.
const LESS = `${SCOPE}ClipToMaxLength/Less`
const KEPT = `${SCOPE}ClipToMaxLength/Reshape`
// The second takes `Greater`; its consumers are a cast to int32 and a column slice.
const GREATER = `${SCOPE}Encode/Greater`
const MASK = `${SCOPE}Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32`
const COLUMN = `${SCOPE}Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2`
// That slice's begin/end/strides: computed here as column 1, so the graph must say [0,1]/[0,2]/[1,1].
const COLUMN_CONSTANTS: [string, number[]][] = [
  [
    `ConstantFolding/${SCOPE}Encode/TransformerStack/Layer_1/TransformerLayer/FFN/conv1/Tensordot/ListDiff-folded-0`,
    [0, 1],
  ],
  [`${COLUMN}/stack_1`, [0, 2]],
  [`${COLUMN}/stack_2`, [1, 1]],
]
const PROBE = ['a probe text, to check the graph is the one expected', 'and a second']

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

function embedSync(core: TfCore, use: UseLiteModel, texts: readonly string[]): number[][] {
  const graph = use.model
  const encodings = texts.map((text) => use.tokenizer.encode(text))
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
  const own = (tensor: Tensor) => (owned.push(tensor), tensor)
  try {
    const inputs: Record<string, Tensor> = {
      indices: own(core.tensor2d(indexData, [total, 2], 'int32')),
      values: own(core.tensor1d(valueData, 'int32')),
    }
    inputs[KEPT] = own(core.tensor1d(whereRank1(own(graph.execute(inputs, LESS))), 'int32'))
    const nonPadding = whereRank2(own(graph.execute(inputs, GREATER)))
    inputs[MASK] = own(core.tensor2d(nonPadding.coordinates, [nonPadding.count, 2], 'int32'))
    inputs[COLUMN] = own(core.tensor1d(nonPadding.columns, 'int32'))
    return own(graph.execute(inputs, (graph.outputs[0] as { name: string }).name)).arraySync() as number[][]
  } finally {
    for (const tensor of owned) tensor.dispose()
  }
}

/**
 * A synchronous `embed` for the loaded model, or `undefined` when its graph is not the one this
 * was written for (another model version): it must name the nodes fed here, hold the expected
 * slice constants, and give a probe batch exactly the vectors of the package's own `embed`.
 */
export async function useLiteSyncEmbed(
  core: TfCore,
  use: UseLiteModel,
): Promise<((texts: readonly string[]) => number[][]) | undefined> {
  const constantsMatch = COLUMN_CONSTANTS.every(([name, expected]) => {
    const tensor = use.model.weights[name]?.[0]
    return tensor !== undefined && Array.from(tensor.dataSync()).join() === expected.join()
  })
  if (!constantsMatch) return undefined
  try {
    const mine = embedSync(core, use, PROBE)
    const theirs = await use.embed(PROBE)
    const same = theirs.every((vector, i) => vector.every((value, j) => value === mine[i]?.[j]))
    return same ? (texts) => embedSync(core, use, texts) : undefined
  } catch {
    return undefined
  }
}
