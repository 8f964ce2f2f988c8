import { describe, expect, it } from 'vitest'
import { buildDiffResultView, DIFF_CONTEXT_LINES, diffCard, diffFile } from '../../src/presentation/index.js'

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('')

describe('R-VIEW diff card helpers (issue 7: diffCard / buildDiffResultView)', () => {
  it('a new file is one full-file diff with oldText null', () => {
    expect(diffCard('a.ts', null, 'x\ny\n')).toEqual({
      card: 'diff',
      title: 'Create a.ts',
      diffs: [{ path: 'a.ts', oldText: null, newText: 'x\ny\n' }],
    })
  })

  it('a change becomes context hunks, not whole files', () => {
    const before = numbered(40)
    const after = before.replace('line 20\n', 'LINE TWENTY\n')
    const view = diffCard('f.txt', before, after, 'Edited f.txt')
    expect(view.title).toBe('Edited f.txt')
    expect(view.diffs).toHaveLength(1)
    const [hunk] = view.diffs
    const ctx = DIFF_CONTEXT_LINES
    const oldLines = Array.from({ length: 2 * ctx + 1 }, (_, i) => `line ${20 - ctx + i}\n`).join('')
    expect(hunk).toEqual({ path: 'f.txt', oldText: oldLines, newText: oldLines.replace('line 20\n', 'LINE TWENTY\n') })
  })

  it('distant changes give separate hunks and line counts', () => {
    const before = numbered(60)
    const after = before.replace('line 5\n', 'five\n').replace('line 50\n', '')
    const summary = diffFile('f', before, after)
    expect(summary.diffs).toHaveLength(2)
    expect(summary.added).toBe(1)
    expect(summary.removed).toBe(2)
    expect(summary.diffs[1].oldText).toContain('line 50\n')
    expect(summary.diffs[1].newText).not.toContain('line 50')
  })

  it('keeps a missing final newline on the side that lacks it', () => {
    const summary = diffFile('f', 'a\nb\n', 'a\nb')
    expect(summary.diffs).toEqual([{ path: 'f', oldText: 'a\nb\n', newText: 'a\nb' }])
  })

  it('identical texts give no diffs', () => {
    expect(diffCard('f', 'same\n', 'same\n').diffs).toEqual([])
  })

  it('buildDiffResultView concatenates the hunks of several files in order', () => {
    const view = buildDiffResultView([
      { path: 'a', oldText: 'x\n', newText: 'y\n' },
      { path: 'b', oldText: null, newText: 'new\n' },
    ])
    expect(view).toEqual({
      card: 'diff',
      diffs: [
        { path: 'a', oldText: 'x\n', newText: 'y\n' },
        { path: 'b', oldText: null, newText: 'new\n' },
      ],
    })
  })
})
