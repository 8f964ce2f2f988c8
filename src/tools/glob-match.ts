import type picomatchFn from 'picomatch'
import { lazyRequire } from '../util/lazy-require.js'

const picomatch = lazyRequire<typeof picomatchFn>('picomatch')

/** Most alternatives one pattern's `{a,b}` groups may expand to. */
export const MAX_BRACE_EXPANSIONS = 1024

/** A compiled glob over workspace-relative POSIX paths. */
export interface GlobMatcher {
  /** Whether a file path (segments joined by `/`) matches. */
  matches(relPath: string): boolean
  /** Whether some path below this directory could still match (prunes the walk). */
  couldContain(dirRelPath: string): boolean
}

/**
 * Expand `{a,b}` groups (nested allowed, `\{` escapes) without recursion. A brace group without a
 * top-level comma stays literal. Fails when the expansion exceeds 1024 patterns (`MAX_BRACE_EXPANSIONS`).
 */
export function expandBraces(pattern: string): string[] {
  const done: string[] = []
  const work: Array<{ text: string; from: number }> = [{ text: pattern, from: 0 }]
  while (work.length > 0) {
    const { text, from } = work.pop()!
    let open = -1
    let close = -1
    let commas: number[] = []
    for (let i = from; i < text.length; i++) {
      const ch = text[i]
      if (ch === '\\') {
        i++
        continue
      }
      if (ch !== '{') continue
      // Find the matching close brace and the top-level commas of this group.
      let depth = 0
      const found: number[] = []
      let j = i
      for (; j < text.length; j++) {
        const c = text[j]
        if (c === '\\') {
          j++
          continue
        }
        if (c === '{') depth++
        else if (c === '}') {
          depth--
          if (depth === 0) break
        } else if (c === ',' && depth === 1) found.push(j)
      }
      if (j >= text.length) break // unbalanced: the rest is literal
      if (found.length === 0) continue // `{x}`: literal, keep scanning inside and after it
      open = i
      close = j
      commas = found
      break
    }
    if (open === -1) {
      done.push(text)
      continue
    }
    const prefix = text.slice(0, open)
    const suffix = text.slice(close + 1)
    const cuts = [open, ...commas, close]
    for (let k = cuts.length - 2; k >= 0; k--) {
      work.push({ text: prefix + text.slice(cuts[k] + 1, cuts[k + 1]) + suffix, from: prefix.length })
    }
    if (done.length + work.length > MAX_BRACE_EXPANSIONS) {
      throw new Error(`glob pattern expands to more than ${MAX_BRACE_EXPANSIONS} alternatives`)
    }
  }
  return done
}

/**
 * Compile a glob over workspace-relative POSIX paths with picomatch: `**` (any number of
 * directories), `*`, `?` (within one segment), character classes (`[a-z]`, `[[:digit:]]`), `{a,b}`
 * alternatives (may span `/`), extglobs (`+(a|b)`, `!(x)`, …), `\` escapes. Wildcards do not match a
 * leading `.` (dotfiles need an explicit `.` in the pattern). Absolute patterns and `..` are
 * refused so a glob can never look outside the workspace.
 */
export function compileGlob(pattern: string): GlobMatcher {
  if (typeof pattern !== 'string' || pattern === '') throw new Error('glob pattern must be a non-empty string')
  if (pattern.includes('\0')) throw new Error('glob pattern contains a NUL byte')
  const alternatives = expandBraces(pattern)
  for (const alt of alternatives) {
    if (alt.startsWith('/')) throw new Error(`glob pattern must be relative to the workspace: ${pattern}`)
    if (alt.split('/').includes('..')) throw new Error(`glob pattern must not contain '..': ${pattern}`)
  }
  const options = { dot: false }
  const isMatch = picomatch()(pattern, options)
  // Per-alternative segment matchers, for pruning: a directory can hold a match when each of its
  // segments matches the pattern's segment at that depth, or a `**` was reached.
  const segmented = alternatives.map((alt) =>
    alt
      .split('/')
      .filter((part, i) => part !== '' && !(part === '.' && i === 0))
      .map((part) => (part === '**' ? '**' : picomatch()(part, options))),
  )
  const split = (p: string): string[] => (p === '' || p === '.' ? [] : p.split('/'))
  return {
    matches: (relPath) => isMatch(relPath),
    couldContain(dirRelPath) {
      const segments = split(dirRelPath)
      return segmented.some((pat) => {
        for (let i = 0; i < segments.length; i++) {
          const seg = pat[i]
          if (seg === '**') return true
          if (seg === undefined || i === pat.length - 1 || !seg(segments[i])) return false
        }
        return segments.length < pat.length
      })
    },
  }
}
