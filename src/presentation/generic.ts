import type { ContentBlock } from '../contract/content.js'
import type { ToolResult } from '../contract/tool-definition.js'
import type { ToolCallKind, ToolCallView, ToolResultView } from '../contract/views.js'
import { isJsonValue } from '../json/index.js'
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
    const type = readOwn(block, 'type')
    if (type === 'text') {
      const text = readOwn(block, 'text')
      if (typeof text === 'string') out.push({ type: 'text', text })
    } else if (type === 'image') {
      const mediaType = readOwn(block, 'mediaType')
      const data = readOwn(block, 'data')
      if (typeof mediaType === 'string' && typeof data === 'string') out.push({ type: 'image', mediaType, data })
    }
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
