import { type FileHandle, open } from 'node:fs/promises'
import type { ReadFileLine } from '../contract/views.js'
import { looksBinary } from './binary.js'
import { checkAborted } from './workspace.js'

const CHUNK_BYTES = 64 * 1024

export interface WindowReadOptions {
  offset: number
  limit: number
  maxLineChars: number
  windowBytes: number
  countScanBytes: number
  signal: AbortSignal
}

export interface WindowRead {
  lines: ReadFileLine[]
  /** Lines counted; exact when `totalLinesExact`, otherwise a lower bound. */
  totalLines: number
  totalLinesExact: boolean
  /** Lines of the window cut at `maxLineChars`. */
  cutLines: number
  /** The window stopped at `windowBytes` before reaching `limit` lines. */
  windowBytesHit: boolean
}

/** Thrown for a file whose leading bytes contain NUL. */
export class BinaryFileError extends Error {
  override name = 'BinaryFileError'
}

/**
 * Stream a file and keep only a window of its lines: memory stays bounded by the window (each kept
 * line holds at most `maxLineChars * 4` bytes however long it is), and scanning stops
 * `countScanBytes` after the window so a huge file is never read to the end just to count lines.
 * Line terminators are `\n` (a trailing `\r` is dropped); a final unterminated line counts.
 */
export async function readLineWindow(file: string | FileHandle, options: WindowReadOptions): Promise<WindowRead> {
  const { offset, limit, maxLineChars, windowBytes, countScanBytes, signal } = options
  const maxLineBytes = maxLineChars * 4
  // A handle passed in stays the caller's to close.
  const handle = typeof file === 'string' ? await open(file, 'r') : file
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
    const lines: ReadFileLine[] = []
    let line = 1 // number of the line being read
    let parts: Buffer[] = []
    let partBytes = 0
    let overflow = false // the current kept line exceeded maxLineBytes
    let hasBytes = false // the current line has at least one byte
    let windowDone = false
    let windowBytesHit = false
    let keptBytes = 0
    let cutLines = 0
    let scannedAfter = 0
    let exact = true
    let first = true

    const finishLine = (): void => {
      let text = Buffer.concat(parts, partBytes).toString('utf8')
      if (!overflow && text.endsWith('\r')) text = text.slice(0, -1)
      let cut = overflow
      if (text.length > maxLineChars) {
        text = text.slice(0, maxLineChars)
        cut = true
      }
      if (cut) {
        // Drop a replacement char left by cutting inside a multi-byte sequence.
        if (text.endsWith('\ufffd')) text = text.slice(0, -1)
        text += '…'
        cutLines++
      }
      lines.push({ number: line, text })
      keptBytes += partBytes
      parts = []
      partBytes = 0
      overflow = false
      if (lines.length >= limit) windowDone = true
      else if (keptBytes >= windowBytes) {
        windowDone = true
        windowBytesHit = true
      }
    }

    for (;;) {
      checkAborted(signal)
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null)
      if (bytesRead === 0) break
      const chunk = buffer.subarray(0, bytesRead)
      if (first) {
        first = false
        if (looksBinary(chunk)) throw new BinaryFileError('binary file (contains NUL bytes)')
      }
      let pos = 0
      while (pos < bytesRead) {
        const nl = chunk.indexOf(10, pos)
        const end = nl === -1 ? bytesRead : nl
        const keeping = !windowDone && line >= offset
        if (keeping && end > pos && !overflow) {
          const room = maxLineBytes - partBytes
          const take = Math.min(room, end - pos)
          // Copy: the read buffer is reused for the next chunk.
          parts.push(Buffer.from(chunk.subarray(pos, pos + take)))
          partBytes += take
          if (end - pos > room) overflow = true
        }
        if (end > pos) hasBytes = true
        if (nl === -1) break
        if (keeping) finishLine()
        line++
        hasBytes = false
        pos = nl + 1
      }
      if (windowDone) {
        scannedAfter += bytesRead
        if (scannedAfter > countScanBytes) {
          exact = false
          break
        }
      }
    }
    if (exact && hasBytes && !windowDone && line >= offset) finishLine()
    const totalLines = exact && hasBytes ? line : line - 1
    return { lines, totalLines, totalLinesExact: exact, cutLines, windowBytesHit }
  } finally {
    if (typeof file === 'string') await handle.close()
  }
}
