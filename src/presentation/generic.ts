import type { ContentBlock } from '../contract/content.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolResult } from '../contract/tool-definition.js'
import type { ToolCallKind, ToolCallView, ToolResultView } from '../contract/views.js'
import { cloneJsonValue, isJsonValue } from '../json/index.js'
import { contentBlockProblem } from '../util/content-shape.js'
import { isPlainRecord, readOwn } from './json-guard.js'

/**
 * The fallback pending card: title = tool name, raw arguments as input (only when they are lossless
 * JSON, so the card itself stays JSON). Never throws.
 */
export function genericCallView(name: string, args: unknown, kind?: ToolCallKind): ToolCallView & { card: 'generic' } {
  const view: ToolCallView & { card: 'generic' } = { card: 'generic', title: typeof name === 'string' ? name : 'tool' }
  if (kind !== undefined) view.kind = kind
  if (args !== undefined && isJsonValue(args)) view.rawInput = args
  return view
}

/** Copy only well-formed content blocks; anything else in a replayed log is dropped, not thrown on. */
export function sanitizeContent(content: unknown): ContentBlock[] {
  if (!Array.isArray(content)) return []
  const out: ContentBlock[] = []
  for (const block of content) {
    if (!isPlainRecord(block)) continue
    let copy: JsonValue
    try {
      copy = cloneJsonValue(block)
    } catch {
      continue
    }
    if (contentBlockProblem(copy, 'block') === undefined) out.push(copy as unknown as ContentBlock)
  }
  return out
}

/** The fallback completed card: the raw result content under an optional title. Never throws. */
export function genericResultView(result: ToolResult | unknown, title?: string): ToolResultView & { card: 'generic' } {
  const view: ToolResultView & { card: 'generic' } = { card: 'generic' }
  if (title !== undefined) view.title = title
  view.content = isPlainRecord(result) ? sanitizeContent(readOwn(result, 'content')) : []
  return view
}
