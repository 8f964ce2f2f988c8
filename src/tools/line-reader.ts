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

/** The window being kept while a file streams past, and the line count. */
class LineWindow {
  readonly lines: ReadFileLine[] = []
  /** Number of the line being read. */
  line = 1
  /** The current line has at least one byte. */
  hasBytes = false
  done = false
  windowBytesHit = false
  cutLines = 0
  private parts: Buffer[] = []
  private partBytes = 0
  /** The current kept line exceeded `maxLineBytes`. */
  private overflow = false
  private keptBytes = 0
  private readonly maxLineBytes: number

  constructor(private readonly options: WindowReadOptions) {
    this.maxLineBytes = options.maxLineChars * 4
  }

  /** Take the lines of one chunk: kept ones are copied (the read buffer is reused), the rest counted. */
  consume(chunk: Buffer): void {
    let pos = 0
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos)
      const end = nl === -1 ? chunk.length : nl
      const keeping = !this.done && this.line >= this.options.offset
      if (keeping && end > pos && !this.overflow) {
        const room = this.maxLineBytes - this.partBytes
        const take = Math.min(room, end - pos)
        this.parts.push(Buffer.from(chunk.subarray(pos, pos + take)))
        this.partBytes += take
        if (end - pos > room) this.overflow = true
      }
      if (end > pos) this.hasBytes = true
      if (nl === -1) break
      if (keeping) this.finishLine()
      this.line++
      this.hasBytes = false
      pos = nl + 1
    }
  }

  /** Keep the line read so far, cut at `maxLineChars` (cut lines end in `…`). */
  finishLine(): void {
    const { maxLineChars } = this.options
    let text = Buffer.concat(this.parts, this.partBytes).toString('utf8')
    if (!this.overflow && text.endsWith('\r')) text = text.slice(0, -1)
    let cut = this.overflow
    if (text.length > maxLineChars) {
      text = text.slice(0, maxLineChars)
      cut = true
    }
    if (cut) {
      // Drop a replacement char left by cutting inside a multi-byte sequence.
      if (text.endsWith('\ufffd')) text = text.slice(0, -1)
      text += '…'
      this.cutLines++
    }
    this.lines.push({ number: this.line, text })
    this.keptBytes += this.partBytes
    this.parts = []
    this.partBytes = 0
    this.overflow = false
    if (this.lines.length >= this.options.limit) this.done = true
    else if (this.keptBytes >= this.options.windowBytes) {
      this.done = true
      this.windowBytesHit = true
    }
  }
}

/**
 * Stream a file and keep only a window of its lines: memory stays bounded by the window (each kept
 * line holds at most `maxLineChars * 4` bytes however long it is), and scanning stops
 * `countScanBytes` after the window so a huge file is never read to the end just to count lines.
 * Line terminators are `\n` (a trailing `\r` is dropped); a final unterminated line counts.
 */
export async function readLineWindow(file: string | FileHandle, options: WindowReadOptions): Promise<WindowRead> {
  // A handle passed in stays the caller's to close.
  const handle = typeof file === 'string' ? await open(file, 'r') : file
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
    const window = new LineWindow(options)
    let scannedAfter = 0
    let exact = true
    let first = true
    for (;;) {
      checkAborted(options.signal)
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null)
      if (bytesRead === 0) break
      const chunk = buffer.subarray(0, bytesRead)
      if (first) {
        first = false
        if (looksBinary(chunk)) throw new BinaryFileError('binary file (contains NUL bytes)')
      }
      window.consume(chunk)
      if (window.done) {
        scannedAfter += bytesRead
        if (scannedAfter > options.countScanBytes) {
          exact = false
          break
        }
      }
    }
    if (exact && window.hasBytes && !window.done && window.line >= options.offset) window.finishLine()
    const totalLines = exact && window.hasBytes ? window.line : window.line - 1
    const { lines, cutLines, windowBytesHit } = window
    return { lines, totalLines, totalLinesExact: exact, cutLines, windowBytesHit }
  } finally {
    if (typeof file === 'string') await handle.close()
  }
}
