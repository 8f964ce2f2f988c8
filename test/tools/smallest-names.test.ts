// list_dir keeps the first `limit` names of a streamed directory in a bounded heap (issue 16):
// the result must equal sorting everything and taking the head, for any arrival order.
import { describe, expect, it } from 'vitest'
import { SmallestNames } from '../../src/tools/smallest-names.js'

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

describe('SmallestNames', () => {
  it('equals sort-then-slice for random, ascending, descending and duplicate-heavy inputs', () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed
    }
    const inputs: string[][] = [
      Array.from({ length: 5000 }, () => `f${random() % 100000}`),
      Array.from({ length: 3000 }, (_, i) => `n${String(i).padStart(5, '0')}`),
      Array.from({ length: 3000 }, (_, i) => `n${String(3000 - i).padStart(5, '0')}`),
      Array.from({ length: 2000 }, () => ['a', 'B', 'é', '.hidden', 'Z', '10', '9'][random() % 7]),
      [],
    ]
    for (const names of inputs) {
      for (const limit of [0, 1, 7, 1000, 10_000]) {
        const heap = new SmallestNames<{ name: string; i: number }>(limit)
        names.forEach((name, i) => {
          heap.offer({ name, i })
        })
        const expected = names
          .map((name, i) => ({ name, i }))
          .sort(byName)
          .slice(0, limit)
          .map((x) => x.name)
        expect(heap.sorted().map((x) => x.name)).toEqual(expected)
      }
    }
  })
})
