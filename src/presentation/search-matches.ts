import type { SearchFileMatches } from '../contract/views.js'

/** One line match, as a search tool finds it. */
export interface SearchMatch {
  path: string
  /** 1-based line number. */
  line: number
  text: string
}

/** Per-file grouped matches with truncation accounting for a `search` card of shape `matches`. */
export interface GroupedSearchMatches {
  files: SearchFileMatches[]
  /** Matches found, including those not shown (never less than the matches given). */
  total: number
  /** Whether fewer matches are shown than were found. */
  truncated: boolean
}

export interface GroupSearchOptions {
  /** Matches the producer found in total when it stopped keeping them early (defaults to `matches.length`). */
  total?: number
  /** Force `truncated` (e.g. the producer stopped scanning at a file budget). */
  truncated?: boolean
}

/**
 * Group matches by file in order of first appearance, keeping at most `cap` matches overall.
 * `total` counts every match found, `truncated` says whether the shown set is partial, so a UI never
 * presents a capped result as complete.
 */
export function groupSearchMatches(
  matches: readonly SearchMatch[],
  cap: number,
  options: GroupSearchOptions = {},
): GroupedSearchMatches {
  const limit = Number.isInteger(cap) && cap >= 0 ? cap : matches.length
  const files: SearchFileMatches[] = []
  const byPath = new Map<string, SearchFileMatches>()
  let shown = 0
  for (const match of matches) {
    if (shown >= limit) break
    let group = byPath.get(match.path)
    if (group === undefined) {
      group = { path: match.path, matches: [] }
      byPath.set(match.path, group)
      files.push(group)
    }
    group.matches.push({ line: match.line, text: match.text })
    shown++
  }
  const total = Math.max(options.total ?? matches.length, matches.length)
  return { files, total, truncated: options.truncated === true || shown < total }
}
