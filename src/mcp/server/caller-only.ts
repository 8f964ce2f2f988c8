// Text only the client that made a call may see (a one-time sign-in link): the pipeline's result,
// which the journal and the viewer record, carries a placeholder, and only the answer sent to that
// client carries the text in its place.

import { isRecord } from '../../util/is-record.js'
import type { CallToolResult } from '../protocol/wire-types.js'

/** Placeholders and the text each stands for, in one call's answer. */
export type CallerOnlyTexts = ReadonlyMap<string, string>

/** `result` as its client gets it: each placeholder in its text blocks and error message replaced. */
export function revealToCaller(result: CallToolResult, texts: CallerOnlyTexts): CallToolResult {
  if (texts.size === 0) return result
  const fill = (text: string) => {
    let out = text
    for (const [placeholder, value] of texts) out = out.split(placeholder).join(value)
    return out
  }
  const content = result.content.map((block) =>
    block.type === 'text' && typeof block.text === 'string' ? { ...block, text: fill(block.text) } : block,
  )
  const out: CallToolResult = { ...result, content }
  const error = result._meta?.['toolgate/error']
  if (isRecord(error) && typeof error.message === 'string')
    out._meta = { ...result._meta, 'toolgate/error': { ...error, message: fill(error.message) } }
  return out
}
