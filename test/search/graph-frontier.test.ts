// Issue 41 (Targets, hybrid speed): the tensors of a model graph that do not depend on the varying
// input, and that a run fed them besides that input needs (src/search/graph-frontier.ts).
import { describe, expect, it } from 'vitest'
import { type GraphNode, graphFrontier } from '../../src/search/graph-frontier.js'

// tokens (varying) and positions (fixed per key) → a mask from the positions, a shape of the
// embedded tokens, and an output combining them.
const graph: GraphNode[] = [
  { name: 'tokens', op: 'Placeholder' },
  { name: 'positions', op: 'Placeholder' },
  { name: 'one', op: 'Const' },
  { name: 'table', op: 'Const' },
  { name: 'embedded', op: 'GatherV2', input: ['table', 'tokens'] },
  { name: 'size', op: 'Shape', input: ['embedded'] },
  { name: 'target', op: 'Pack', input: ['size', 'one'] },
  { name: 'mask', op: 'Greater', input: ['positions', 'one'] },
  { name: 'masked', op: 'Mul', input: ['embedded', 'mask'] },
  { name: 'out', op: 'Reshape', input: ['masked', 'target'] },
]

describe('graphFrontier', () => {
  it('names the position-only tensors that token-dependent nodes consume (a shape counts as position-only)', () => {
    expect(graphFrontier(graph, 'out', new Set(['tokens', 'positions']), 'tokens')?.sort()).toEqual(['mask', 'target'])
  })

  it('names a fed node that a token-dependent node consumes', () => {
    const fed = new Set(['tokens', 'positions', 'mask'])
    expect(graphFrontier(graph, 'out', fed, 'tokens')?.sort()).toEqual(['mask', 'target'])
  })

  it('gives nothing when everything depends on the tokens, or the output is not in the graph', () => {
    const chain: GraphNode[] = [
      { name: 'tokens', op: 'Placeholder' },
      { name: 'table', op: 'Const' },
      { name: 'out', op: 'GatherV2', input: ['table', 'tokens'] },
    ]
    expect(graphFrontier(chain, 'out', new Set(['tokens']), 'tokens')).toBeUndefined()
    expect(graphFrontier(graph, 'nowhere', new Set(['tokens']), 'tokens')).toBeUndefined()
    const dangling = [...graph, { name: 'broken', op: 'Add', input: ['masked', 'missing'] }]
    expect(graphFrontier(dangling, 'broken', new Set(['tokens', 'positions']), 'tokens')).toBeUndefined()
  })

  it("gives nothing when a tensor to feed is a node's second output or a control input", () => {
    const split: GraphNode[] = [
      ...graph.filter((node) => node.name !== 'masked'),
      { name: 'halves', op: 'Split', input: ['one', 'positions'] },
      { name: 'masked', op: 'Mul', input: ['embedded', 'halves:1'] },
    ]
    expect(graphFrontier(split, 'out', new Set(['tokens', 'positions']), 'tokens')).toBeUndefined()
    const control: GraphNode[] = [
      ...graph.filter((node) => node.name !== 'masked'),
      { name: 'masked', op: 'Mul', input: ['embedded', 'mask', '^positions'] },
    ]
    expect(graphFrontier(control, 'out', new Set(['tokens', 'positions']), 'tokens')).toBeUndefined()
  })
})
