// A tools/call result common enough to pass on without the SDK's schema check: both fast paths (the
// served one answering a call, the client link reading an upstream's answer) skip the zod parse for it.
import { isRecord } from '../../util/is-record.js'

/** A result the SDK's CallToolResultSchema certainly accepts unchanged: text blocks only, no extras to check. */
export function isCommonCallToolResult(result: unknown): boolean {
  if (!isRecord(result) || !Array.isArray(result.content)) return false
  for (const key in result) {
    if (key === 'content') continue
    if (key === 'isError' && typeof result.isError === 'boolean') continue
    if (key === 'structuredContent' && isRecord(result.structuredContent)) continue
    return false
  }
  for (const block of result.content) {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return false
    let keys = 0
    for (const _key in block) keys++
    if (keys !== 2) return false
  }
  return true
}
