// The fakes' server-side tool search: what Anthropic's tool search tool and the Responses API's
// hosted tool_search do with a request's deferred tools (`defer_loading: true`), in miniature.
import type { ProviderFormat } from '../providers/index.js'

type Json = Record<string, unknown>

/** What a scripted native search found, for the wire to put in the reply. */
export interface NativeSearchFound {
  /** The search tool's name as the request declared it (Anthropic: `tool_search_tool_bm25` or `…_regex`). */
  readonly tool: string
  readonly query: string
  /** The matching deferred tools, best first, as the request sent them. */
  readonly matches: readonly Json[]
}

/** Most matches one search returns (the providers return a handful). */
const MAX_MATCHES = 5

const record = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined

/**
 * Run a native search of `query` over the deferred tools of a request `body`, as `format`'s API
 * would. Returns what was found, or why the real API would refuse the request.
 */
export function nativeSearch(format: ProviderFormat, body: unknown, query: string): NativeSearchFound | string {
  const declared = record(body)?.tools
  const tools = Array.isArray(declared) ? declared.map(record) : []
  let tool: string | undefined
  if (format === 'anthropic') {
    const declared = tools.find((t) => /^tool_search_tool_(bm25|regex)(_\d+)?$/.test(String(t?.type ?? '')))
    tool = declared === undefined ? undefined : String(declared?.name)
  } else if (format === 'openai-responses') {
    tool = tools.some((t) => t?.type === 'tool_search') ? 'tool_search' : undefined
  } else return `${format} has no native tool search`
  if (tool === undefined) return 'the script searches natively, but the request declares no tool search tool'
  const deferred = tools.filter((t): t is Json => t?.defer_loading === true)
  if (deferred.length === tools.length) return 'every tool is deferred: the search tool itself must be loaded'
  const regex = tool.includes('regex')
  const words = query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length >= 3)
  const scored: { tool: Json; score: number }[] = []
  for (const candidate of deferred) {
    const text = `${String(candidate.name ?? '')} ${String(candidate.description ?? '')}`.toLowerCase()
    let score = 0
    if (regex) {
      try {
        score = new RegExp(query, 'i').test(text) ? 1 : 0
      } catch {
        return `invalid_tool_input: ${query} is not a valid pattern`
      }
    } else for (const word of words) if (text.includes(word)) score++
    if (score > 0) scored.push({ tool: candidate, score })
  }
  scored.sort((a, b) => b.score - a.score)
  return { tool, query, matches: scored.slice(0, MAX_MATCHES).map((s) => s.tool) }
}

/**
 * Why the real Anthropic API would refuse this request's tool references, if it would: every
 * `tool_reference` in the conversation must name a tool the request still declares.
 */
export function unresolvedReference(body: unknown): string | undefined {
  const fields = record(body)
  const declared = new Set((Array.isArray(fields?.tools) ? fields.tools : []).map((t) => String(record(t)?.name ?? '')))
  for (const message of Array.isArray(fields?.messages) ? fields.messages : []) {
    const content = record(message)?.content
    for (const block of Array.isArray(content) ? content : []) {
      const result = record(record(block)?.content)
      if (record(block)?.type !== 'tool_search_tool_result' || !Array.isArray(result?.tool_references)) continue
      for (const reference of result.tool_references) {
        const name = String(record(reference)?.tool_name ?? '')
        if (!declared.has(name)) return `tool_reference_unresolved: "${name}" is not among the request's tools`
      }
    }
  }
  return undefined
}

/**
 * A turn's native search over `body`, or why the real API would refuse the request (a tool search
 * scripted where none is declared, a tool reference that no longer resolves); undefined: no search.
 */
export function searchOfTurn(
  format: ProviderFormat,
  body: unknown,
  toolSearch: string | undefined,
): NativeSearchFound | string | undefined {
  if (format === 'anthropic') {
    const unresolved = unresolvedReference(body)
    if (unresolved !== undefined) return unresolved
  }
  return toolSearch === undefined ? undefined : nativeSearch(format, body, toolSearch)
}
