import type * as Diff from 'diff'
import type { FileDiff, ToolResultView } from '../contract/views.js'
import { lazyRequire } from '../util/lazy-require.js'

/** `diff`, loaded on the first diff rendered (see `lazyRequire`). */
export const diff = lazyRequire<typeof Diff>('diff')

/** Lines of unchanged context kept around each change. */
export const DIFF_CONTEXT_LINES = 3
/** Beyond this edit distance the line diff gives up and the whole before/after texts are shown. */
export const DIFF_MAX_EDIT_LENGTH = 20_000

/** One file's change before it is cut into hunks. */
export interface FileChange {
  path: string
  /** `null` when the file is new. */
  oldText: string | null
  newText: string
}

/** A file's change as display hunks plus line counts. */
export interface FileDiffSummary {
  /** One `FileDiff` per hunk (same `path`); empty when nothing changed. */
  diffs: FileDiff[]
  added: number
  removed: number
}

interface SideLine {
  text: string
  eol: boolean
}

function joinSide(lines: readonly SideLine[]): string {
  let out = ''
  for (const line of lines) out += line.eol ? `${line.text}\n` : line.text
  return out
}

function countLines(text: string): number {
  if (text === '') return 0
  let n = 0
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++
  return text.endsWith('\n') ? n : n + 1
}

/**
 * Cut one file change into display hunks: each `FileDiff` holds the hunk's old and new text
 * including {@link DIFF_CONTEXT_LINES} context lines, so a UI shows only what changed with a little
 * surrounding code. A new file (`oldText: null`) is one full-file diff. Pathologically different
 * texts (edit distance over {@link DIFF_MAX_EDIT_LENGTH}) fall back to one whole-file diff.
 */
export function diffFile(path: string, oldText: string | null, newText: string): FileDiffSummary {
  if (oldText === null) return { diffs: [{ path, oldText: null, newText }], added: countLines(newText), removed: 0 }
  if (oldText === newText) return { diffs: [], added: 0, removed: 0 }
  const patch = diff().structuredPatch(path, path, oldText, newText, undefined, undefined, {
    context: DIFF_CONTEXT_LINES,
    maxEditLength: DIFF_MAX_EDIT_LENGTH,
  })
  if (patch === undefined) {
    return { diffs: [{ path, oldText, newText }], added: countLines(newText), removed: countLines(oldText) }
  }
  const diffs: FileDiff[] = []
  let added = 0
  let removed = 0
  for (const hunk of patch.hunks) {
    const before: SideLine[] = []
    const after: SideLine[] = []
    let last = ' '
    for (const line of hunk.lines) {
      const tag = line[0]
      const text = line.slice(1)
      if (tag === '\\') {
        // "\ No newline at end of file" applies to the side(s) of the line just before it.
        if (last !== '+' && before.length > 0) before[before.length - 1].eol = false
        if (last !== '-' && after.length > 0) after[after.length - 1].eol = false
        continue
      }
      if (tag === '-') {
        before.push({ text, eol: true })
        removed++
      } else if (tag === '+') {
        after.push({ text, eol: true })
        added++
      } else {
        before.push({ text, eol: true })
        after.push({ text, eol: true })
      }
      last = tag
    }
    diffs.push({ path, oldText: joinSide(before), newText: joinSide(after) })
  }
  return { diffs, added, removed }
}

/** A completed `diff` card for one file change (see {@link diffFile} for the hunk policy). */
export function diffCard(
  path: string,
  oldText: string | null,
  newText: string,
  title?: string,
): ToolResultView & { card: 'diff' } {
  return buildDiffResultView([{ path, oldText, newText }], title ?? `${oldText === null ? 'Create' : 'Edit'} ${path}`)
}

/** A completed `diff` card for several file changes, hunks in the order given. */
export function buildDiffResultView(changes: readonly FileChange[], title?: string): ToolResultView & { card: 'diff' } {
  const diffs: FileDiff[] = []
  for (const change of changes) diffs.push(...diffFile(change.path, change.oldText, change.newText).diffs)
  const view: ToolResultView & { card: 'diff' } = { card: 'diff', diffs }
  if (title !== undefined) view.title = title
  return view
}
