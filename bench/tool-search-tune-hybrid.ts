// Issue 41: the 'hybrid' ranker's candidates judged on the two TUNING sets only (this script never
// loads the frozen test set): which tool texts the query is embedded against (the current text,
// the name alone, the description's first line, the parameters) and how their cosines combine, and
// how the full-text and cosine scores are scaled before they are averaged. Vectors are computed
// once with USE lite and kept in a file under the system's temporary directory.
// Run: `npx tsx bench/tool-search-tune-hybrid.ts` (the optional encoder peers installed).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { embeddingText } from '../src/search/embedding-ranker.js'
import { TextSearchEngine } from '../src/search/index.js'
import { loadUseLiteEncoder } from '../src/search/use-lite-encoder.js'
import { splitWords } from '../src/search/words.js'
import { catalog, hardTuningSet, indexed, type Request, tuningSet } from './tool-search-eval.bench.js'

const tuning = tuningSet()
const hard = hardTuningSet()
const queries = [...new Set([...tuning, ...hard].map((r) => r.query))]

type Texts = Record<string, (d: (typeof catalog)[number]) => string>
const firstLine = (d: (typeof catalog)[number]) => (d.description ?? '').split('\n')[0]
const nameWords = (d: (typeof catalog)[number]) => splitWords(d.name.replace(/^.*?(__|\.|\/)/, '')).join(' ')
const TEXTS: Texts = {
  current: (d) => embeddingText({ name: d.name, description: d.description, parameters: d.parameters }),
  name: nameWords,
  description: (d) => firstLine(d).slice(0, 300),
  'current + parameter names': (d) => {
    const props = (d.parameters as { properties?: Record<string, unknown> } | undefined)?.properties
    const names = props ? Object.keys(props).map((n) => splitWords(n).join(' ')) : []
    const base = embeddingText({ name: d.name, description: d.description, parameters: d.parameters })
    return names.length > 0 ? `${base} (${names.join(', ')})` : base
  },
  parameters: (d) => {
    const props = (d.parameters as { properties?: Record<string, { description?: unknown }> } | undefined)?.properties
    if (!props) return nameWords(d)
    const parts = Object.entries(props).map(([name, s]) =>
      typeof s?.description === 'string'
        ? `${splitWords(name).join(' ')}: ${s.description}`
        : splitWords(name).join(' '),
    )
    return `${nameWords(d)}. ${parts.join('; ')}`.slice(0, 300)
  },
}

const file = path.join(os.tmpdir(), 'toolgate-tune-hybrid-vectors.json')
type Store = { tools: Record<string, number[][]>; queries: Record<string, number[]> }
const store: Store = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Store) : { tools: {}, queries: {} }
const missingKinds = Object.keys(TEXTS).filter((kind) => store.tools[kind] === undefined)
if (missingKinds.length > 0 || queries.some((q) => store.queries[q] === undefined)) {
  const encoder = await loadUseLiteEncoder()
  const unit = (v: ArrayLike<number>) => {
    const a = Array.from(v)
    const n = Math.sqrt(a.reduce((s, x) => s + x * x, 0)) || 1
    return a.map((x) => x / n)
  }
  for (const kind of missingKinds) {
    store.tools[kind] = (await encoder.embed(catalog.map(TEXTS[kind]))).map(unit)
    console.error(`embedded ${kind}`)
  }
  const wanted = queries.filter((q) => store.queries[q] === undefined)
  const vectors = await encoder.embed(wanted)
  wanted.forEach((query, i) => {
    store.queries[query] = unit(vectors[i])
  })
  writeFileSync(file, JSON.stringify(store))
}

const dot = (a: readonly number[], b: readonly number[]) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i] * b[i]
  return s
}
const cosines = new Map<string, Record<string, number[]>>()
for (const query of queries) {
  const q = store.queries[query]
  const row: Record<string, number[]> = {}
  for (const kind of Object.keys(TEXTS)) row[kind] = store.tools[kind].map((v) => dot(q, v))
  cosines.set(query, row)
}

const engine = indexed(() => new TextSearchEngine())
const textScores = new Map<string, number[]>()
const index = new Map(catalog.map((d, i) => [d, i]))
for (const query of queries) {
  const scores = new Array<number>(catalog.length).fill(0)
  for (const m of engine.search(query, () => true, catalog.length)) scores[index.get(m.definition) as number] = m.score
  textScores.set(query, scores)
}

type Semantic = (row: Record<string, number[]>) => number[]
const SEMANTIC: Record<string, Semantic> = {
  current: (r) => r.current,
  name: (r) => r.name,
  description: (r) => r.description,
  parameters: (r) => r.parameters,
  'max(current, name, description)': (r) => r.current.map((c, i) => Math.max(c, r.name[i], r.description[i])),
  'mean(current, name, description)': (r) => r.current.map((c, i) => (c + r.name[i] + r.description[i]) / 3),
  'mean(current, description)': (r) => r.current.map((c, i) => (c + r.description[i]) / 2),
  'mean(current, parameters)': (r) => r.current.map((c, i) => (c + r.parameters[i]) / 2),
  'current + 0.5 max(name, description, parameters)': (r) =>
    r.current.map((c, i) => c + 0.5 * Math.max(r.name[i], r.description[i], r.parameters[i])),
  'mean(description, parameters)': (r) => r.description.map((c, i) => (c + r.parameters[i]) / 2),
  'mean of all four': (r) => r.current.map((c, i) => (c + r.name[i] + r.description[i] + r.parameters[i]) / 4),
  'current + parameter names (one text)': (r) => r['current + parameter names'],
}

type Scale = (scores: readonly number[]) => number[]
const minmax: Scale = (s) => {
  const lo = Math.min(...s)
  const hi = Math.max(...s)
  return s.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 0))
}
const overBest: Scale = (s) => {
  const hi = Math.max(...s)
  return s.map((x) => (hi > 0 ? x / hi : 0))
}
const zscore: Scale = (s) => {
  const mean = s.reduce((a, b) => a + b, 0) / s.length
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / s.length) || 1
  return s.map((x) => (x - mean) / sd)
}
/** Scaled from the k-th best to the best (the head of the list decides), clipped at 0. */
const headScale =
  (k: number): Scale =>
  (s) => {
    const sorted = [...s].sort((a, b) => b - a)
    const hi = sorted[0]
    const lo = sorted[Math.min(k, sorted.length - 1)]
    return s.map((x) => (hi > lo ? Math.max(0, (x - lo) / (hi - lo)) : 0))
  }
const SCALES: Record<string, [Scale, Scale]> = {
  'text / best, cosine min–max (now)': [overBest, minmax],
  'z-scores both': [zscore, zscore],
  'text / best, cosine z-score / 3': [overBest, (s) => zscore(s).map((x) => x / 3)],
  'text / best, cosine from 10th best': [overBest, headScale(10)],
  'text / best, cosine from 20th best': [overBest, headScale(20)],
  'both from 20th best': [headScale(20), headScale(20)],
  'text min–max, cosine min–max': [minmax, minmax],
}

function fig(requests: readonly Request[], ranking: (query: string) => number[]) {
  let r1 = 0
  let r5 = 0
  let mrr = 0
  for (const request of requests) {
    const s = ranking(request.query)
    const order = s
      .map((x, i) => [x, i] as const)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, 50)
    const at = order.findIndex(([, i]) => request.tools.includes(catalog[i].name))
    if (at === 0) r1++
    if (at >= 0 && at < 5) r5++
    if (at >= 0) mrr += 1 / (at + 1)
  }
  const n = requests.length
  return { r1: r1 / n, r5: r5 / n, mrr: mrr / n }
}
const show = (f: ReturnType<typeof fig>) => `${f.r1.toFixed(3)} / ${f.r5.toFixed(3)} / ${f.mrr.toFixed(3)}`

function fused(semantic: Semantic, [scaleText, scaleCos]: [Scale, Scale], a: number) {
  return (query: string) => {
    const t = scaleText(textScores.get(query) as number[])
    const c = scaleCos(semantic(cosines.get(query) as Record<string, number[]>))
    return t.map((x, i) => (1 - a) * x + a * c[i])
  }
}

const objective = (rs: readonly Request[], ranking: (q: string) => number[]) => {
  const a = fig(
    rs.filter((r) => r.kind === 'tuning'),
    ranking,
  )
  const h = fig(
    rs.filter((r) => r.kind !== 'tuning'),
    ranking,
  )
  return a.r5 + h.r5 + 0.5 * (a.mrr + h.mrr)
}

console.log('| semantic side | scaling | a | tuning r@1 / r@5 / MRR | hard tuning r@1 / r@5 / MRR |')
console.log('| --- | --- | ---: | --- | --- |')
const WEIGHTS = [0.3, 0.4, 0.5, 0.6, 0.7]
const results: Array<{ label: string; score: number }> = []
for (const [sLabel, semantic] of Object.entries(SEMANTIC)) {
  for (const [cLabel, scales] of Object.entries(SCALES)) {
    if (sLabel !== 'current' && cLabel !== 'text / best, cosine min–max (now)' && !process.argv.includes('--all'))
      continue
    for (const a of WEIGHTS) {
      const ranking = fused(semantic, scales, a)
      const score = objective([...tuning, ...hard], ranking)
      results.push({ label: `${sLabel} | ${cLabel} | ${a}`, score })
      console.log(`| ${sLabel} | ${cLabel} | ${a} | ${show(fig(tuning, ranking))} | ${show(fig(hard, ranking))} |`)
    }
  }
}
results.sort((x, y) => y.score - x.score)
console.log('\nbest by objective (sum of recall@5 + half the MRRs):')
for (const r of results.slice(0, 8)) console.log(`${r.score.toFixed(3)}  ${r.label}`)

// Cross-validation of the weight a for a given (semantic, scaling): fit a on 4 folds, score the fifth.
function cv(semantic: Semantic, scales: [Scale, Scale]) {
  const all = [...tuning, ...hard]
  const parts: Request[][] = [[], [], [], [], []]
  for (const kind of ['tuning', 'tuning-hard']) {
    const rows = all.filter((r) => r.kind === kind)
    for (let i = 0; i < rows.length; i++) parts[i % 5].push(rows[i])
  }
  let total = 0
  const chosen: number[] = []
  const heldOut = new Map<Request, (q: string) => number[]>()
  for (let i = 0; i < 5; i++) {
    const train = parts.filter((_, j) => j !== i).flat()
    let best = WEIGHTS[0]
    let bestScore = -1
    for (const a of WEIGHTS) {
      const s = objective(train, fused(semantic, scales, a))
      if (s > bestScore) {
        bestScore = s
        best = a
      }
    }
    total += objective(parts[i], fused(semantic, scales, best)) * parts[i].length
    chosen.push(best)
    const ranking = fused(semantic, scales, best)
    for (const r of parts[i]) heldOut.set(r, ranking)
  }
  // Per set, each request ranked by the weight fitted without it.
  const per = (rs: readonly Request[]) => {
    let r5 = 0
    let mrr = 0
    for (const r of rs) {
      const f = fig([r], heldOut.get(r) as (q: string) => number[])
      r5 += f.r5
      mrr += f.mrr
    }
    return `${(r5 / rs.length).toFixed(3)} / ${(mrr / rs.length).toFixed(3)}`
  }
  return `${(total / all.length).toFixed(3)} (tuning r@5 / MRR ${per(tuning)}, hard ${per(hard)}; a per fold ${chosen.join(', ')})`
}
if (process.argv.includes('--cv')) {
  console.log('\nheld-out objective, a fitted per fold:')
  for (const [sLabel, semantic] of Object.entries(SEMANTIC))
    for (const [cLabel, scales] of Object.entries(SCALES)) {
      if (sLabel !== 'current' && cLabel !== 'text / best, cosine min–max (now)' && !process.argv.includes('--all'))
        continue
      console.log(`${cv(semantic, scales)}  ${sLabel} | ${cLabel}`)
    }
}
