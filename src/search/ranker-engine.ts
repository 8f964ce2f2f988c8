import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import type { PrepareOptions, RankedTool, TextScores, TextSearchEngine, ToolSearchEngine } from './engine.js'

/** What a pluggable ranker sees of one tool. */
export interface ToolSearchDocument {
  readonly name: string
  readonly description: string
  /** The tool's parameters as registered (a JSON Schema for MCP tools). */
  readonly parameters: unknown
}

/**
 * A pluggable ranker: one score per document, in the same order, higher is better (an embedding
 * model's cosine similarity, say). Synchronous: embed the documents ahead of time and cache them.
 */
export type ToolRanker = (query: string, docs: readonly ToolSearchDocument[]) => readonly number[]

/** What a ranker that keeps its own state about the documents (an embedding cache) is told. */
export interface RankerHooks {
  add?(doc: ToolSearchDocument): void
  remove?(doc: ToolSearchDocument): void
  /** Get ready to rank this query (embed it): awaited by `search_tools` before it searches. */
  prepare?(query: string, options?: PrepareOptions): Promise<void>
  /**
   * Whether the ranker can score this query over every document now. While false (documents still
   * being embedded, or the query not prepared), the search is the full text's alone, its matches
   * marked `partial`, rather than a fusion over part of the documents.
   */
  ready?(query: string): boolean
}

// Reciprocal rank fusion's constant: how much a list's top ranks outweigh its lower ones.
const RRF_K = 60
// How deep each list is read before fusing.
const FUSION_DEPTH = 50
// Score fusion: the ranker's share of a tool's score, the full text's the rest. Chosen on the two
// tuning sets (the best sum of their recall@5, then of their MRR, over 0.2–0.8).
const SCORE_FUSION_WEIGHT = 0.5

/**
 * How the two rankings are combined. `'rank'`: reciprocal rank fusion, a tool's score the sum of
 * 1 / (60 + rank) over the two lists, so neither needs scores on the other's scale (a user's
 * ranker). `'score'`: each side's scores scaled to 0–1 (the full text's by its best score, the
 * ranker's from its lowest to its highest positive score) and averaged, for a ranker whose scores
 * mean something across documents (the built-in encoder's cosine similarity).
 */
export type FusionMethod = 'rank' | 'score'

/**
 * The built-in full-text ranking and a pluggable ranker, fused by `fusion` (reciprocal rank fusion
 * by default). The ranker sees only the documents `accept` admits.
 */
export class FusedSearchEngine implements ToolSearchEngine {
  private readonly docs = new Map<ToolDefinition, ToolSearchDocument>()
  /** The full text's scores of the request being prepared, computed while the ranker embeds it. */
  private ahead: TextScores | undefined

  constructor(
    private readonly text: TextSearchEngine,
    private readonly ranker: ToolRanker,
    private readonly hooks: RankerHooks = {},
    private readonly fusion: FusionMethod = 'rank',
  ) {}

  add(definition: ToolDefinition): void {
    this.text.add(definition)
    if (this.docs.has(definition)) return
    const doc = { name: definition.name, description: definition.description, parameters: definition.parameters }
    this.docs.set(definition, doc)
    this.hooks.add?.(doc)
  }

  remove(definition: ToolDefinition): void {
    this.text.remove(definition)
    const doc = this.docs.get(definition)
    this.docs.delete(definition)
    if (doc !== undefined) this.hooks.remove?.(doc)
  }

  async prepare(query: string, options?: PrepareOptions): Promise<void> {
    const prepared = this.hooks.prepare?.(query, options)
    // The ranker's `prepare` hands the request to its encoder before it first awaits, so the full
    // text's half of the search, which needs no vector, runs while the encoder works; the search
    // after this uses it if nothing was added or removed meanwhile.
    if (prepared !== undefined && query.trim() !== '')
      try {
        this.ahead = this.text.scores(query)
      } catch {
        // The search computes them again and throws there, as it did without this.
      }
    await prepared
  }

  /** The full-text matches of `query`, from the scores computed ahead when they are still current. */
  private textual(query: string, accept: (definition: ToolDefinition) => boolean, limit: number): RankedTool[] {
    let scores = this.ahead
    if (scores?.query === query) this.ahead = undefined
    if (scores?.query !== query || scores.version !== this.text.version) scores = this.text.scores(query)
    return this.text.pick(scores, accept, limit)
  }

  search(query: string, accept: (definition: ToolDefinition) => boolean, limit: number): RankedTool[] {
    const definitions: ToolDefinition[] = []
    const docs: ToolSearchDocument[] = []
    for (const [definition, doc] of this.docs)
      if (accept(definition)) {
        definitions.push(definition)
        docs.push(doc)
      }
    if (definitions.length === 0 || limit < 1) return []
    if (this.hooks.ready?.(query) === false)
      return this.textual(query, accept, limit).map((match) => ({ ...match, partial: true }))
    const scores: unknown = this.ranker(query, docs)
    if (!Array.isArray(scores) || scores.length !== docs.length)
      throw new ConfigError('search.ranker', `expected ${docs.length} numbers, one per document`)
    const textual = this.textual(query, accept, FUSION_DEPTH)
    if (this.fusion === 'score') return fuseScores(definitions, scores, textual, limit)
    const fused = new Map<ToolDefinition, { score: number; why?: RankedTool['why'] }>()
    textual.forEach((match, rank) => {
      fused.set(match.definition, { score: 1 / (RRF_K + rank + 1), why: match.why })
    })
    topIndices(scores, FUSION_DEPTH).forEach((i, rank) => {
      const definition = definitions[i] as ToolDefinition
      const entry = fused.get(definition)
      const score = 1 / (RRF_K + rank + 1)
      if (entry === undefined) fused.set(definition, { score })
      else entry.score += score
    })
    return [...fused]
      .map(([definition, { score, why }]) => ({ definition, score, ...(why === undefined ? {} : { why }) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
  }
}

/**
 * The indices of the `depth` highest positive finite scores, best first (the earlier index first
 * among equals), kept by insertion into a short sorted list: no object per document and no sort of
 * them all, which at 1,000 tools was most of a fused search's time. Throws on a score that is not
 * a number, naming the ranker option.
 */
function topIndices(scores: readonly unknown[], depth: number): number[] {
  const best: number[] = []
  const values: number[] = []
  for (let i = 0; i < scores.length; i++) {
    const score = scores[i]
    if (typeof score !== 'number')
      throw new ConfigError('search.ranker', `expected ${scores.length} numbers, one per document`)
    if (!(score > 0) || score === Number.POSITIVE_INFINITY) continue
    if (best.length === depth && score <= (values[depth - 1] as number)) continue
    let at = best.length === depth ? depth - 1 : best.length
    while (at > 0 && (values[at - 1] as number) < score) {
      best[at] = best[at - 1] as number
      values[at] = values[at - 1] as number
      at--
    }
    best[at] = i
    values[at] = score
  }
  return best
}

/**
 * Score fusion: SCORE_FUSION_WEIGHT × the ranker's score scaled from its lowest to its highest
 * positive finite score, plus the rest × the full-text score over the best full-text score. A
 * document the ranker gave no positive score (not embedded yet, or no query vector) has no
 * ranker share, so with no ranker scores at all the order is the full text's.
 */
function fuseScores(
  definitions: readonly ToolDefinition[],
  scores: readonly unknown[],
  textual: readonly RankedTool[],
  limit: number,
): RankedTool[] {
  let low = Number.POSITIVE_INFINITY
  let high = 0
  for (let i = 0; i < scores.length; i++) {
    const score = scores[i]
    if (typeof score !== 'number')
      throw new ConfigError('search.ranker', `expected ${scores.length} numbers, one per document`)
    if (!(score > 0) || score === Number.POSITIVE_INFINITY) continue
    if (score < low) low = score
    if (score > high) high = score
  }
  const span = high - low
  const best = textual[0]?.score ?? 0
  const fromText = new Map<ToolDefinition, RankedTool>()
  for (const match of textual) fromText.set(match.definition, match)
  const totals = definitions.map((definition, i) => {
    const score = scores[i] as number
    const ranked = score > 0 && score !== Number.POSITIVE_INFINITY
    const share = ranked ? SCORE_FUSION_WEIGHT * (span > 0 ? (score - low) / span : 1) : 0
    const match = fromText.get(definition)
    return match === undefined || best <= 0 ? share : share + ((1 - SCORE_FUSION_WEIGHT) * match.score) / best
  })
  return topIndices(totals, limit).map((i) => {
    const definition = definitions[i] as ToolDefinition
    const why = fromText.get(definition)?.why
    return { definition, score: totals[i] as number, ...(why === undefined ? {} : { why }) }
  })
}
