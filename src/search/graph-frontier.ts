// Which intermediate tensors of a model graph can be kept between runs: those that do not depend on
// the one input that changes from run to run. A sentence encoder's graph computes much from the
// token positions alone (shapes, masks, the timing signal: about 95 of USE lite's 250 kernels);
// for texts with the same positions those values are the same, so a run can be fed them and
// compute only what depends on the tokens themselves.

/** A node of a TensorFlow GraphDef, as a converted model's `model.json` lists it. */
export interface GraphNode {
  readonly name: string
  readonly op: string
  readonly input?: readonly string[]
}

// Their value is their input's shape, not its values.
const SHAPE_OPS = new Set(['Shape', 'ShapeN', 'Rank', 'Size'])

/** `name`, `name:1` or `^name` (a control input) → `name`, and the output's index. */
function reference(input: string): [string, number] {
  const bare = input.startsWith('^') ? input.slice(1) : input
  const colon = bare.lastIndexOf(':')
  if (colon > 0 && /^\d+$/.test(bare.slice(colon + 1))) return [bare.slice(0, colon), Number(bare.slice(colon + 1))]
  return [bare, 0]
}

/**
 * The nodes a run to `output` needs (walking back from it, stopping at the `fed` nodes) that do not
 * depend on `varying`'s values but feed a node that does: fed with these (and `varying`), a run
 * computes only what depends on `varying`. Shape ops count as not depending on their input's
 * values, so the caller must know that every shape in the run is fixed by what it keys the kept
 * tensors on. `undefined` when there are none, or when one is a node's second or later output
 * (TensorFlow.js takes a fed node's outputs as one list), or when the graph does not hold `output`.
 */
export function graphFrontier(
  nodes: readonly GraphNode[],
  output: string,
  fed: ReadonlySet<string>,
  varying: string,
): string[] | undefined {
  const byName = new Map(nodes.map((node) => [node.name, node]))
  if (!byName.has(output)) return undefined
  // The nodes needed, in an order where each comes after its inputs (iterative: graphs are deep).
  const needed: GraphNode[] = []
  const seen = new Set<string>()
  const stack: [GraphNode, boolean][] = [[byName.get(output) as GraphNode, false]]
  while (stack.length > 0) {
    const [node, expanded] = stack.pop() as [GraphNode, boolean]
    if (expanded) {
      needed.push(node)
      continue
    }
    if (seen.has(node.name)) continue
    seen.add(node.name)
    stack.push([node, true])
    if (fed.has(node.name)) continue
    for (const input of node.input ?? []) {
      const inputNode = byName.get(reference(input)[0])
      if (inputNode === undefined) return undefined
      if (!seen.has(inputNode.name)) stack.push([inputNode, false])
    }
  }
  const dependent = new Set<string>([varying])
  for (const node of needed) {
    if (fed.has(node.name) || SHAPE_OPS.has(node.op)) continue
    if ((node.input ?? []).some((input) => dependent.has(reference(input)[0]))) dependent.add(node.name)
  }
  const frontier = new Set<string>()
  for (const node of needed) {
    if (!dependent.has(node.name) || fed.has(node.name)) continue
    for (const input of node.input ?? []) {
      const [name, index] = reference(input)
      const source = byName.get(name) as GraphNode
      if (dependent.has(name) || source.op === 'Const') continue
      if (index > 0 || input.startsWith('^')) return undefined
      frontier.add(name)
    }
  }
  return frontier.size === 0 ? undefined : [...frontier]
}
