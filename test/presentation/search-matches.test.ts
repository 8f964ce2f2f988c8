import { describe, expect, it } from 'vitest'
import { groupSearchMatches } from '../../src/presentation/index.js'

const m = (path: string, line: number) => ({ path, line, text: `${path}#${line}` })

describe('R-VIEW search grouping (issue 7: groupSearchMatches)', () => {
  it('groups by file in order of first appearance', () => {
    const grouped = groupSearchMatches([m('a', 1), m('b', 2), m('a', 3)], 10)
    expect(grouped).toEqual({
      files: [
        {
          path: 'a',
          matches: [
            { line: 1, text: 'a#1' },
            { line: 3, text: 'a#3' },
          ],
        },
        { path: 'b', matches: [{ line: 2, text: 'b#2' }] },
      ],
      total: 3,
      truncated: false,
    })
  })

  it('caps the shown matches and says so', () => {
    const grouped = groupSearchMatches([m('a', 1), m('a', 2), m('b', 1)], 2)
    expect(grouped.files).toEqual([
      {
        path: 'a',
        matches: [
          { line: 1, text: 'a#1' },
          { line: 2, text: 'a#2' },
        ],
      },
    ])
    expect(grouped.total).toBe(3)
    expect(grouped.truncated).toBe(true)
  })

  it('accounts for matches the producer counted but did not keep, and forced truncation', () => {
    expect(groupSearchMatches([m('a', 1)], 5, { total: 40 })).toMatchObject({ total: 40, truncated: true })
    expect(groupSearchMatches([m('a', 1)], 5, { truncated: true })).toMatchObject({ total: 1, truncated: true })
    // A total below what is shown is corrected upward, never under-reported.
    expect(groupSearchMatches([m('a', 1), m('a', 2)], 5, { total: 1 })).toMatchObject({ total: 2, truncated: false })
  })

  it('an empty result is complete', () => {
    expect(groupSearchMatches([], 10)).toEqual({ files: [], total: 0, truncated: false })
  })
})
