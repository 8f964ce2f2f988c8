import type MiniSearch from 'minisearch'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { isRecord } from '../util/is-record.js'
import { lazyRequire } from '../util/lazy-require.js'

/** One ranked match of an engine: the registered definition and its relevance (higher is better). */
export interface RankedTool {
  readonly definition: ToolDefinition
  readonly score: number
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
}

/** Options of the default engine. */
export interface TextEngineOptions {
  /**
   * The server (or other source) a tool comes from, indexed as its own field. Default: the part
   * of the name before `__`, `.` or `/`, when there is one.
   */
  readonly serverOf?: (definition: ToolDefinition) => string | undefined
}

const loadMiniSearch = lazyRequire<{ default: typeof MiniSearch } | typeof MiniSearch>('minisearch')

/** Words of a name or text: snake, kebab, dotted and camelCase names split, lower-cased. */
export function splitWords(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)
}

// Words that carry no meaning in a request for a tool; dropping them keeps long requests from
// matching every description through "the" and "a".
const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from how i in into is it its me my of on or please some that the their them then this to us use using want we what when which with without you your'.split(
    ' ',
  ),
)

/** A light English suffix stripper, so "files", "listing" and "created" meet "file", "list" and "create". */
export function stem(word: string): string {
  let w = word
  if (w.length <= 3 || /\d/.test(w)) return w
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`
  else if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3)
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2)
  else if (/(sh|ch|x|ss)es$/.test(w)) w = w.slice(0, -2)
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us')) w = w.slice(0, -1)
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1)
  return w
}

function processTerm(term: string): string | null {
  return STOP_WORDS.has(term) ? null : stem(term)
}

// Words people use for what tool descriptions name otherwise. Applied to the query only, each
// adding the words it stands for, so a request in everyday words meets the tools' vocabulary.
const SYNONYMS: Readonly<Record<string, string>> = {
  folder: 'directory',
  folders: 'directories',
  dir: 'directory',
  mkdir: 'create directory',
  ls: 'list directory',
  mv: 'move rename',
  rm: 'delete remove',
  cp: 'copy',
  cat: 'read file contents',
  pr: 'pull request',
  prs: 'pull requests',
  ci: 'status checks',
  approve: 'review',
  approved: 'reviews',
  bug: 'issue',
  ticket: 'issue',
  sql: 'query database',
  table: 'sql query',
  rows: 'sql query',
  database: 'sql query',
  db: 'sql query database',
  png: 'image media',
  jpg: 'image media',
  picture: 'image',
  photo: 'image media',
  audio: 'media',
  remember: 'entity observation memory',
  forget: 'delete',
  memory: 'knowledge graph',
  fact: 'observation',
  facts: 'observations',
  repo: 'repository',
  repos: 'repositories',
  biggest: 'sizes',
  size: 'sizes',
  contents: 'read',
  show: 'get read list',
  open: 'read',
}

/** The query with each everyday word followed by the words it stands for. */
function expandQuery(query: string): string {
  const words = splitWords(query)
  return words.map((word) => (SYNONYMS[word] === undefined ? word : `${word} ${SYNONYMS[word]}`)).join(' ')
}

function defaultServerOf(definition: ToolDefinition): string | undefined {
  const match = /^(.+?)(__|\.|\/)/.exec(definition.name)
  return match?.[1]
}

/** Parameter names (split) and descriptions of a raw schema's top-level properties. */
function parameterText(parameters: unknown): string {
  if (!isRecord<Record<string, unknown>>(parameters)) return ''
  const properties = parameters.properties
  if (!isRecord<Record<string, unknown>>(properties)) return ''
  const parts: string[] = []
  for (const [name, schema] of Object.entries(properties)) {
    parts.push(splitWords(name).join(' '))
    if (isRecord<Record<string, unknown>>(schema) && typeof schema.description === 'string')
      parts.push(schema.description)
  }
  return parts.join(' \n ')
}

interface IndexedTool {
  readonly id: number
  readonly name: string
  readonly description: string
  readonly params: string
  readonly server: string
}

/**
 * The default engine: BM25 over a tool's name split into words (boosted), its description, its
 * parameter names and descriptions, and its server, with prefix and light fuzzy matching of the
 * query's terms. Definitions are kept by identity (two layers may register the same name); the
 * index itself is built on the first search and updated one document at a time afterwards.
 */
export class TextSearchEngine implements ToolSearchEngine {
  private nextId = 1
  private readonly ids = new Map<ToolDefinition, number>()
  private readonly byId = new Map<number, ToolDefinition>()
  private index: MiniSearch<IndexedTool> | undefined
  private readonly serverOf: (definition: ToolDefinition) => string | undefined

  constructor(options: TextEngineOptions = {}) {
    this.serverOf = options.serverOf ?? defaultServerOf
  }

  /** How many definitions are indexed. */
  get size(): number {
    return this.ids.size
  }

  add(definition: ToolDefinition): void {
    if (this.ids.has(definition)) return
    const id = this.nextId++
    this.ids.set(definition, id)
    this.byId.set(id, definition)
    this.index?.add(this.document(id, definition))
  }

  remove(definition: ToolDefinition): void {
    const id = this.ids.get(definition)
    if (id === undefined) return
    this.ids.delete(definition)
    this.byId.delete(id)
    this.index?.discard(id)
  }

  search(query: string, accept: (definition: ToolDefinition) => boolean, limit: number): RankedTool[] {
    const index = this.ensureIndex()
    const hits = index.search(expandQuery(query), {
      filter: (hit) => {
        const definition = this.byId.get(hit.id as number)
        return definition !== undefined && accept(definition)
      },
    })
    const out: RankedTool[] = []
    for (const hit of hits) {
      if (out.length >= limit) break
      const definition = this.byId.get(hit.id as number)
      if (definition !== undefined) out.push({ definition, score: hit.score })
    }
    return out
  }

  /** Build the whole index now (the first search does it otherwise). */
  build(): void {
    this.ensureIndex()
  }

  private ensureIndex(): MiniSearch<IndexedTool> {
    if (this.index !== undefined) return this.index
    const loaded = loadMiniSearch()
    const Engine = 'default' in loaded ? loaded.default : loaded
    const index = new Engine<IndexedTool>({
      fields: ['name', 'description', 'params', 'server'],
      tokenize: splitWords,
      processTerm,
      searchOptions: {
        boost: { name: 3, server: 1.5, description: 1, params: 0.6 },
        prefix: (term) => term.length >= 5,
        weights: { fuzzy: 0.3, prefix: 0.4 },
        combineWith: 'OR',
      },
    })
    index.addAll([...this.byId].map(([id, definition]) => this.document(id, definition)))
    this.index = index
    return index
  }

  private document(id: number, definition: ToolDefinition): IndexedTool {
    return {
      id,
      name: splitWords(definition.name).join(' '),
      description: definition.description,
      params: parameterText(definition.parameters),
      server: this.serverOf(definition) ?? '',
    }
  }
}
