/** Most alternatives one pattern's `{a,b}` groups may expand to. */
export const MAX_BRACE_EXPANSIONS = 1024

/** A compiled glob over workspace-relative POSIX paths. */
export interface GlobMatcher {
  /** Whether a file path (segments joined by `/`) matches. */
  matches(relPath: string): boolean
  /** Whether some path below this directory could still match (prunes the walk). */
  couldContain(dirRelPath: string): boolean
}

const GLOBSTAR = Symbol('**')
type Segment = RegExp | typeof GLOBSTAR

/**
 * Expand `{a,b}` groups (nested allowed, `\{` escapes) without recursion. A brace group without a
 * top-level comma stays literal. Fails when the expansion exceeds {@link MAX_BRACE_EXPANSIONS}.
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

const REGEX_SPECIAL = /[.+^${}()|[\]\\*?]/

function compileSegment(segment: string): RegExp {
  let source = ''
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i]
    if (ch === '\\' && i + 1 < segment.length) {
      const next = segment[++i]
      source += REGEX_SPECIAL.test(next) ? `\\${next}` : next
    } else if (ch === '*') {
      while (segment[i + 1] === '*') i++
      source += '[^/]*'
    } else if (ch === '?') {
      source += '[^/]'
    } else {
      source += REGEX_SPECIAL.test(ch) ? `\\${ch}` : ch
    }
  }
  // Wildcards never match a leading dot unless the segment spells it out.
  const guard = segment.startsWith('.') ? '' : '(?!\\.)'
  return new RegExp(`^${guard}${source}$`)
}

function splitPattern(pattern: string): Segment[] {
  const parts = pattern.split('/').filter((part, i) => part !== '' && !(part === '.' && i === 0))
  const out: Segment[] = []
  for (const part of parts) {
    if (part === '**') {
      if (out[out.length - 1] !== GLOBSTAR) out.push(GLOBSTAR)
    } else out.push(compileSegment(part))
  }
  return out
}

/** Add the states reachable without consuming a segment (a `**` may match zero segments). */
function closure(pattern: readonly Segment[], states: Set<number>): Set<number> {
  const work = [...states]
  while (work.length > 0) {
    const i = work.pop()!
    if (pattern[i] === GLOBSTAR && !states.has(i + 1)) {
      states.add(i + 1)
      work.push(i + 1)
    }
  }
  return states
}

/** Run the segment automaton over path segments; returns the live states. */
function run(pattern: readonly Segment[], segments: readonly string[]): Set<number> {
  let states = closure(pattern, new Set([0]))
  for (const segment of segments) {
    const next = new Set<number>()
    for (const i of states) {
      const seg = pattern[i]
      if (seg === undefined) continue
      if (seg === GLOBSTAR) {
        if (!segment.startsWith('.')) next.add(i)
      } else if (seg.test(segment)) next.add(i + 1)
    }
    if (next.size === 0) return next
    states = closure(pattern, next)
  }
  return states
}

/**
 * Compile a glob over workspace-relative POSIX paths: `**` (any number of directories), `*`, `?`
 * (within one segment), `{a,b}` alternatives (may span `/`), `\` escapes. Wildcards do not match a
 * leading `.` (dotfiles need an explicit `.` in the pattern). Absolute patterns and `..` are
 * refused so a glob can never look outside the workspace.
 */
export function compileGlob(pattern: string): GlobMatcher {
  if (typeof pattern !== 'string' || pattern === '') throw new Error('glob pattern must be a non-empty string')
  if (pattern.includes('\0')) throw new Error('glob pattern contains a NUL byte')
  const alternatives = expandBraces(pattern)
  const compiled: Segment[][] = []
  for (const alt of alternatives) {
    if (alt.startsWith('/')) throw new Error(`glob pattern must be relative to the workspace: ${pattern}`)
    if (alt.split('/').includes('..')) throw new Error(`glob pattern must not contain '..': ${pattern}`)
    compiled.push(splitPattern(alt))
  }
  const split = (p: string): string[] => (p === '' || p === '.' ? [] : p.split('/'))
  return {
    matches(relPath) {
      const segments = split(relPath)
      return compiled.some((pat) => run(pat, segments).has(pat.length))
    },
    couldContain(dirRelPath) {
      const segments = split(dirRelPath)
      return compiled.some((pat) => {
        for (const state of run(pat, segments)) if (state < pat.length) return true
        return false
      })
    },
  }
}
