import type { ToolDefinition } from '../contract/tool-definition.js'
import { isRecord } from '../util/is-record.js'
import { type QueryTerm, queryTerms, scanWords, termOf } from './words.js'

export { splitWords, stem } from './words.js'

/** The indexed parts of a tool a search matches in. */
export type ToolSearchField = 'name' | 'description' | 'parameters' | 'server'

/** One reason a tool matched: a term of the request met in one of the tool's fields. */
export interface MatchReason {
  /** Where the term was found. */
  readonly field: ToolSearchField
  /** The index term met there: a stem (`repositori` stands for repository, repositories). */
  readonly term: string
  /** The request's word (lower-cased) the term came from. */
  readonly word: string
  /**
   * How the word led to the term: as written (stemmed), as the beginning of a longer term, through
   * the built-in everyday-word table, or through the thesaurus.
   */
  readonly how: 'word' | 'prefix' | 'synonym' | 'thesaurus'
}

/** One ranked match of an engine: the registered definition and its relevance (higher is better). */
export interface RankedTool {
  readonly definition: ToolDefinition
  readonly score: number
  /** What matched, field by field (an engine may leave it out). */
  readonly why?: readonly MatchReason[]
  /**
   * True when the engine ranked without part of what it ranks on: the `'hybrid'` ranker while the
   * tools are still being embedded (or for a request not prepared) ranks on the full text alone.
   * The same search later may rank otherwise.
   */
  readonly partial?: boolean
}

/** Options of `ToolSearchEngine.prepare`. */
export interface PrepareOptions {
  /**
   * Do not wait for documents still being indexed (the `'hybrid'` ranker's tools being embedded at
   * a cold start): resolve without what they would add, and let the search rank on the rest and
   * mark its matches `partial`. Default: wait, so the search ranks on everything.
   */
  readonly allowPartial?: boolean
}

/**
 * What ranks tools for a query. The default is a full-text index; an embedding ranker implements
 * the same three methods (compute a vector in `add`, forget it in `remove`, rank by similarity in
 * `search`). `search` must consider only definitions `accept` admits (the caller's view), so a
 * hidden or denied tool can never be ranked, and is synchronous so ranking costs no turn.
 */
export interface ToolSearchEngine {
  add(definition: ToolDefinition): void
  remove(definition: ToolDefinition): void
  search(query: string, accept: (definition: ToolDefinition) => boolean, limit: number): RankedTool[]
  /**
   * Optional: get ready to rank `query` (an embedding ranker embeds it here, since encoders are
   * asynchronous). `search_tools` awaits it (with `allowPartial`) before searching; a synchronous
   * `tools.search` of a query not prepared ranks without what `prepare` would have added.
   */
  prepare?(query: string, options?: PrepareOptions): Promise<void>
}

/** Options of the default engine. */
export interface TextEngineOptions {
  /**
   * The server (or other source) a tool comes from, indexed as its own field. Default: the part
   * of the name before `__`, `.` or `/`, when there is one.
   */
  readonly serverOf?: (definition: ToolDefinition) => string | undefined
}

function defaultServerOf(definition: ToolDefinition): string | undefined {
  const match = /^(.+?)(__|\.|\/)/.exec(definition.name)
  return match?.[1]
}

// The indexed fields, in this order: the name split into words, the description, the parameters'
// names and descriptions, and the server. A word in the name says most about what a tool does.
const FIELD_COUNT = 4
const FIELD_NAMES: readonly ToolSearchField[] = ['name', 'description', 'parameters', 'server']
const NAME = 0
const DESCRIPTION = 1
const PARAMS = 2
const SERVER = 3
const FIELD_BOOST = [2, 1, 0.6, 1.5]

// BM25+ (term-frequency saturation k, length normalisation b, lower bound d per matching term).
const K = 1.2
const B = 0.7
const D = 0.5

// A query term of this many letters also matches the longer terms it begins ("repositor" meets
// "repository"), each weighted down by how much longer it is.
const PREFIX_MIN_LENGTH = 5
const PREFIX_WEIGHT = 0.4

// A removed tool's entries are dropped from a term's list once they are at least this many and
// half of it, so removal costs constant time on average and the lists stay mostly live.
const COMPACT_MIN_DEAD = 8

interface IndexedTool {
  /** Undefined once removed: the entry may still sit in some term lists until they are compacted. */
  definition: ToolDefinition | undefined
  /** Whether its words are in the term lists (a build in steps indexes some tools before the rest). */
  indexed: boolean
  /** Distinct words per field, for length normalisation. */
  readonly lengths: number[]
  /** The term lists this tool is in, to mark them on removal. */
  readonly postings: Posting[]
  // Per-search scratch, valid when `searchMark` is the current search's mark.
  searchMark: number
  termMark: number
  score: number
  matchedTerms: number
}

/** The tools whose field holds a term, with the term's count in that field, in insertion order. */
interface Posting {
  /** The term and field this list is of, to say why a tool matched. */
  readonly term: string
  readonly field: number
  tools: IndexedTool[]
  counts: number[]
  dead: number
}

/** One index term: its list per field, and scratch for counting it in one field of one tool. */
interface Term {
  readonly key: string
  readonly postings: Array<Posting | undefined>
  mark: number
  count: number
}

/** A word met in a tool: its term (null for a stop word), and scratch for counting distinct words. */
interface Word {
  readonly term: Term | null
  mark: number
}

// Words are looked up once per occurrence while indexing; the word table is dropped whole past
// this size (it is rebuilt from the terms as words come again).
const WORD_TABLE_LIMIT = 100_000

function binarySearch(sorted: readonly string[], key: string): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (sorted[middle] < key) low = middle + 1
    else high = middle
  }
  return low
}

function compact(posting: Posting): void {
  const tools: IndexedTool[] = []
  const counts: number[] = []
  for (let i = 0; i < posting.tools.length; i++) {
    if (posting.tools[i].definition === undefined) continue
    tools.push(posting.tools[i])
    counts.push(posting.counts[i])
  }
  posting.tools = tools
  posting.counts = counts
  posting.dead = 0
}

/**
 * A request's full-text scores before any tool is picked, for one state of the index (`version`).
 * What `search` picks from; a caller may score a request ahead (while an encoder embeds it) and
 * pick later, if the index has not changed meanwhile.
 */
export interface TextScores {
  readonly query: string
  readonly version: number
}

/** Every tool that matched, with its score, and where each matched term came from. */
interface Scored extends TextScores {
  readonly tools: readonly IndexedTool[]
  /** Each tool's score; absent when picked at once, from the tools' own scratch (no other search between). */
  readonly scores?: readonly number[]
  readonly origins: ReadonlyMap<string, { word: string; how: MatchReason['how'] }>
}

const NO_SCORES = { tools: [], origins: new Map<string, { word: string; how: MatchReason['how'] }>() }

/** The matched terms of one ranked tool, by field in index order: only its own term lists are looked at. */
function reasons(
  tool: IndexedTool,
  origins: ReadonlyMap<string, { word: string; how: MatchReason['how'] }>,
): MatchReason[] {
  const out: MatchReason[] = []
  for (const posting of tool.postings) {
    const origin = origins.get(posting.term)
    if (origin !== undefined)
      out.push({ field: FIELD_NAMES[posting.field], term: posting.term, word: origin.word, how: origin.how })
  }
  return out.sort((a, b) => FIELD_NAMES.indexOf(a.field) - FIELD_NAMES.indexOf(b.field))
}

/**
 * The default engine: BM25+ over a tool's name split into words (boosted), its description, its
 * parameter names and descriptions, and its server, with prefix matching of the query's longer
 * terms; a tool's score is multiplied by how many of the query's terms it matched. Definitions are
 * kept by identity (two layers may register the same name). The index is an inverted list per term
 * and field, built on the first search (or ahead, in `buildStep`s) and updated one tool at a time
 * afterwards; a search walks only the lists of the query's terms and keeps the best `limit`
 * accepted tools as it goes.
 */
export class TextSearchEngine implements ToolSearchEngine {
  private readonly tools = new Map<ToolDefinition, IndexedTool>()
  private readonly serverOf: (definition: ToolDefinition) => string | undefined
  private built = false
  /** Tools added before the index was built, in order: what `build` and `buildStep` index. */
  private unindexed: IndexedTool[] = []
  private unindexedAt = 0
  /** Changes with every add and remove: scores of another version are stale. */
  private changes = 0
  /** How many searches found the index unbuilt and built it themselves (tests of the idle build). */
  private searchBuilds = 0
  private readonly terms = new Map<string, Term>()
  private readonly words = new Map<string, Word>()
  /** Every term, sorted, for prefix lookups. */
  private sortedTerms: string[] = []
  private readonly totalLengths = [0, 0, 0, 0]
  private marks = 0
  // Scratch of one field while indexing: the distinct terms met so far and the distinct word count.
  private readonly fieldTerms: Term[] = []
  private fieldWords = 0
  private fieldMark = 0
  private incremental = false
  private readonly visitWord = (source: string, start: number, end: number, upper: boolean) => {
    const text = upper ? source.slice(start, end).toLowerCase() : source.slice(start, end)
    let word = this.words.get(text)
    if (word === undefined) {
      word = { term: this.termOfWord(text), mark: 0 }
      this.words.set(text, word)
    }
    if (word.mark !== this.fieldMark) {
      word.mark = this.fieldMark
      this.fieldWords++
    }
    const term = word.term
    if (term === null) return
    if (term.mark !== this.fieldMark) {
      term.mark = this.fieldMark
      term.count = 0
      this.fieldTerms.push(term)
    }
    term.count++
  }

  constructor(options: TextEngineOptions = {}) {
    this.serverOf = options.serverOf ?? defaultServerOf
  }

  /** How many definitions are indexed. */
  get size(): number {
    return this.tools.size
  }

  /** @internal Whether the index is built (by a search, `build` or the last `buildStep`). */
  get isBuilt(): boolean {
    return this.built
  }

  /** @internal Increases with every change to what is indexed. */
  get version(): number {
    return this.changes
  }

  /** @internal How many searches had to build the index themselves (0 after an idle build). */
  get buildsBySearch(): number {
    return this.searchBuilds
  }

  add(definition: ToolDefinition): void {
    if (this.tools.has(definition)) return
    const tool: IndexedTool = {
      definition,
      indexed: false,
      lengths: [0, 0, 0, 0],
      postings: [],
      searchMark: 0,
      termMark: 0,
      score: 0,
      matchedTerms: 0,
    }
    // The server is named before anything changes, so a throwing `serverOf` leaves the index as it was.
    if (this.built) this.index(tool, this.serverOf(definition) ?? '', true)
    else this.unindexed.push(tool)
    this.tools.set(definition, tool)
    this.changes++
  }

  remove(definition: ToolDefinition): void {
    const tool = this.tools.get(definition)
    if (tool === undefined) return
    this.tools.delete(definition)
    tool.definition = undefined
    this.changes++
    // A tool not indexed yet is skipped when its turn comes.
    if (!tool.indexed) return
    for (let field = 0; field < FIELD_COUNT; field++) this.totalLengths[field] -= tool.lengths[field]
    for (const posting of tool.postings) {
      posting.dead++
      if (posting.dead >= COMPACT_MIN_DEAD && posting.dead * 2 >= posting.tools.length) compact(posting)
    }
    tool.postings.length = 0
  }

  search(query: string, accept: (definition: ToolDefinition) => boolean, limit: number): RankedTool[] {
    if (limit < 1) return []
    return this.pick(this.scoreAll(query, false), accept, limit)
  }

  /** @internal Every tool's full-text score for `query` (the index's current version), to `pick` from. */
  scores(query: string): TextScores {
    return this.scoreAll(query, true)
  }

  private scoreAll(query: string, keep: boolean): Scored {
    if (!this.built) {
      this.searchBuilds++
      this.build()
    }
    const version = this.changes
    const terms = queryTerms(query)
    if (terms.length === 0 || this.tools.size === 0) return { query, version, ...NO_SCORES }
    const searchMark = ++this.marks
    const touched: IndexedTool[] = []
    const count = this.tools.size
    const averages = this.totalLengths.map((total) => total / count)
    // One mark per group: a tool matching a word and its thesaurus word counts one matched word.
    const firstMark = this.marks + 1
    this.marks += terms.length
    // Which request word each matched term came from, to say why a tool ranked.
    const origins = new Map<string, QueryTerm | { word: string; how: 'prefix' }>()
    for (const query of terms) {
      const { term, weight, group, prefix, cover } = query
      const termMark = firstMark + group
      if (!origins.has(term)) origins.set(term, query)
      this.score(this.terms.get(term), weight, cover, searchMark, termMark, count, averages, touched)
      if (!prefix || term.length < PREFIX_MIN_LENGTH) continue
      const sorted = this.sortedTerms
      for (let i = binarySearch(sorted, term); i < sorted.length && sorted[i].startsWith(term); i++) {
        const longer = sorted[i]
        if (longer.length === term.length) continue
        if (!origins.has(longer)) origins.set(longer, { word: query.word, how: 'prefix' })
        const factor = (weight * PREFIX_WEIGHT * longer.length) / (longer.length + 0.3 * (longer.length - term.length))
        this.score(this.terms.get(longer), factor, cover, searchMark, termMark, count, averages, touched)
      }
    }
    if (!keep) return { query, version, tools: touched, origins }
    const totals = new Array<number>(touched.length)
    for (let i = 0; i < touched.length; i++) totals[i] = touched[i].score * touched[i].matchedTerms
    return { query, version, tools: touched, scores: totals, origins }
  }

  /**
   * @internal The best `limit` tools of `scored` that `accept` admits, best first; among equal scores
   * the one matched first stays first. `accept` is asked only about a tool that would enter the list.
   * `scored` must be of the index's current version.
   */
  pick(scored: TextScores, accept: (definition: ToolDefinition) => boolean, limit: number): RankedTool[] {
    const { tools: touched, scores: totals, origins } = scored as Scored
    const best: IndexedTool[] = []
    const scores: number[] = []
    for (let t = 0; t < touched.length; t++) {
      const tool = touched[t]
      const score = totals === undefined ? tool.score * tool.matchedTerms : totals[t]
      if (best.length === limit && score <= scores[limit - 1]) continue
      const definition = tool.definition
      if (definition === undefined || !accept(definition)) continue
      let at = best.length === limit ? limit - 1 : best.length
      while (at > 0 && scores[at - 1] < score) {
        best[at] = best[at - 1]
        scores[at] = scores[at - 1]
        at--
      }
      best[at] = tool
      scores[at] = score
    }
    const out: RankedTool[] = []
    for (let i = 0; i < best.length; i++) {
      const definition = best[i].definition
      if (definition !== undefined) out.push({ definition, score: scores[i], why: reasons(best[i], origins) })
    }
    return out
  }

  /** Build the whole index now (the first search does it otherwise). */
  build(): void {
    this.buildStep(Number.POSITIVE_INFINITY)
  }

  /**
   * Index up to `count` more of the tools added before the index was built, in the order they were
   * added; the step that indexes the last of them builds the index. Returns whether it is built. A
   * build in steps gives the index one `build` gives: the same lists in the same order.
   */
  buildStep(count: number): boolean {
    if (this.built) return true
    const end = Math.min(this.unindexed.length, this.unindexedAt + count)
    const tools = this.unindexed.slice(this.unindexedAt, end)
    // Every server is named before anything is indexed, so a throwing `serverOf` leaves the index as it was.
    const servers = tools.map((tool) => (tool.definition === undefined ? '' : (this.serverOf(tool.definition) ?? '')))
    for (let i = 0; i < tools.length; i++) this.index(tools[i], servers[i], false)
    this.unindexedAt = end
    if (end < this.unindexed.length) return false
    this.unindexed = []
    this.unindexedAt = 0
    this.built = true
    this.sortedTerms = [...this.terms.keys()].sort()
    return true
  }

  /**
   * Add one term list's BM25+ contributions, times `weight`, to the tools in it, and `cover` to the
   * request words matched by each tool not yet matched in this term's group.
   */
  private score(
    term: Term | undefined,
    weight: number,
    cover: number,
    searchMark: number,
    termMark: number,
    count: number,
    averages: readonly number[],
    touched: IndexedTool[],
  ): void {
    if (term === undefined) return
    for (let field = 0; field < FIELD_COUNT; field++) {
      const posting = term.postings[field]
      if (posting === undefined) continue
      const matching = posting.tools.length - posting.dead
      if (matching === 0) continue
      const idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5))
      const factor = weight * FIELD_BOOST[field] * idf
      const average = averages[field]
      const { tools, counts } = posting
      for (let i = 0; i < tools.length; i++) {
        const tool = tools[i]
        if (tool.definition === undefined) continue
        const frequency = counts[i]
        const normalised = K * (1 - B + (B * tool.lengths[field]) / average)
        const score = factor * (D + (frequency * (K + 1)) / (frequency + normalised))
        if (tool.searchMark !== searchMark) {
          tool.searchMark = searchMark
          tool.score = 0
          tool.matchedTerms = 0
          touched.push(tool)
        }
        tool.score += score
        if (tool.termMark !== termMark) {
          tool.termMark = termMark
          tool.matchedTerms += cover
        }
      }
    }
  }

  /** Add a tool's words to the term lists (`incremental`: the sorted term list is kept in order as it goes). */
  private index(tool: IndexedTool, server: string, incremental: boolean): void {
    const definition = tool.definition
    if (definition === undefined) return
    tool.indexed = true
    if (this.words.size >= WORD_TABLE_LIMIT) this.words.clear()
    this.incremental = incremental
    for (let field = 0; field < FIELD_COUNT; field++) {
      this.fieldMark = ++this.marks
      this.fieldWords = 0
      const visit = this.visitWord
      if (field === NAME) scanWords(definition.name, visit)
      else if (field === DESCRIPTION) {
        if (typeof definition.description === 'string') scanWords(definition.description, visit)
      } else if (field === PARAMS) this.scanParameters(definition.parameters)
      else if (field === SERVER) scanWords(server, visit)
      tool.lengths[field] = this.fieldWords
      this.totalLengths[field] += this.fieldWords
      for (const term of this.fieldTerms) {
        let posting = term.postings[field]
        if (posting === undefined) {
          posting = { term: term.key, field, tools: [], counts: [], dead: 0 }
          term.postings[field] = posting
        }
        posting.tools.push(tool)
        posting.counts.push(term.count)
        tool.postings.push(posting)
      }
      this.fieldTerms.length = 0
    }
  }

  /** Scan a raw schema's top-level parameter names and descriptions. */
  private scanParameters(parameters: unknown): void {
    if (!isRecord<Record<string, unknown>>(parameters)) return
    const properties = parameters.properties
    if (!isRecord<Record<string, unknown>>(properties)) return
    for (const [name, schema] of Object.entries(properties)) {
      scanWords(name, this.visitWord)
      if (isRecord<Record<string, unknown>>(schema) && typeof schema.description === 'string')
        scanWords(schema.description, this.visitWord)
    }
  }

  /** The term of a word new to the word table, created if new. */
  private termOfWord(word: string): Term | null {
    const key = termOf(word)
    if (key === null) return null
    let term = this.terms.get(key)
    if (term === undefined) {
      term = { key, postings: [undefined, undefined, undefined, undefined], mark: 0, count: 0 }
      this.terms.set(key, term)
      if (this.incremental) this.sortedTerms.splice(binarySearch(this.sortedTerms, key), 0, key)
    }
    return term
  }
}
