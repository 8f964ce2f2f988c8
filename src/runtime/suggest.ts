/**
 * The names closest to a mistyped one, for `UNKNOWN_TOOL`. Runs only on that error path, over the
 * names the caller's scope can see (never over hidden tools). Close means: the same after case and
 * separators are ignored, the same words in another order, one name containing the other, or a
 * small edit distance (transpositions count once) relative to the names' length.
 */
export function nearestNames(wanted: string, candidates: Iterable<string>, limit = 3): string[] {
  const target = normalize(wanted)
  const targetWords = words(target)
  const scored: Array<{ name: string; score: number }> = []
  for (const name of candidates) {
    if (name === wanted) continue
    const score = closeness(target, targetWords, normalize(name))
    if (score !== undefined) scored.push({ name, score })
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return scored.slice(0, limit).map((entry) => entry.name)
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/[-.\s]/g, '_')
}

function words(name: string): string {
  return name.split('_').filter(Boolean).sort().join('_')
}

/** Lower is closer; `undefined` when not close at all. */
function closeness(target: string, targetWords: string, candidate: string): number | undefined {
  if (candidate === target) return 0
  if (words(candidate) === targetWords) return 0.5
  const shorter = Math.min(target.length, candidate.length)
  const budget = Math.max(1, Math.floor(shorter / 3))
  const contains = shorter >= 3 && (candidate.includes(target) || target.includes(candidate))
  if (!contains && Math.abs(target.length - candidate.length) > budget) return undefined
  const distance = editDistance(target, candidate)
  if (distance <= budget) return distance
  return contains ? budget + 1 : undefined
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
function editDistance(a: string, b: string): number {
  let before = new Array<number>(b.length + 1).fill(0)
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  let current = new Array<number>(b.length + 1).fill(0)
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2] + 1)
      current[j] = best
    }
    ;[before, previous, current] = [previous, current, before]
  }
  return previous[b.length]
}
