import type { ReadFileLine } from '../contract/views.js'

/** A bounded, 1-based window of numbered lines. */
export interface ReadWindow {
  lines: ReadFileLine[]
  /** Lines in the whole text. */
  totalLines: number
  /** The 1-based first line asked for, kept even when `lines` is empty. */
  offset: number
}

/**
 * Split a text into lines the way the read card numbers them: `\n` or `\r\n` ends a line, a final
 * line terminator does not open an extra empty line, and the empty text has zero lines.
 */
export function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1)
  }
  return lines
}

/**
 * The window of `text` starting at 1-based `offset` with at most `limit` lines. `offset` below 1
 * (or not an integer) is clamped to 1, a missing or non-positive `limit` means "to the end". An
 * offset past the end yields no lines but keeps the offset, so a UI can say where it looked.
 */
export function readWindow(text: string, offset = 1, limit?: number): ReadWindow {
  const all = splitLines(text)
  const start = Number.isInteger(offset) && offset >= 1 ? offset : 1
  const count = limit !== undefined && Number.isInteger(limit) && limit > 0 ? limit : all.length
  const lines: ReadFileLine[] = []
  for (let n = start; n <= all.length && lines.length < count; n++) lines.push({ number: n, text: all[n - 1] })
  return { lines, totalLines: all.length, offset: start }
}
