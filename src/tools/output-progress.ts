import { StringDecoder } from 'node:string_decoder'
import { stripVTControlCharacters } from 'node:util'
import type { ToolProgress } from '../contract/execution.js'

/** Lines a progress message shows, and the longest line it keeps (characters). */
const KEPT_LINES = 3
const LINE_MAX = 200

/**
 * Turns a process's output stream into throttled progress: it keeps the last few complete lines
 * (control sequences stripped, long lines cut) and reports them at most once per `intervalMs`
 * — the first output at once, then the latest state when the interval ends. Only a bounded
 * suffix of each chunk is decoded, so a flood of output costs the same as a trickle.
 */
export class OutputProgress {
  private readonly decoder = new StringDecoder('utf8')
  private lines: string[] = []
  private partial = ''
  private dirty = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false

  constructor(
    private readonly report: (progress: ToolProgress) => void,
    private readonly intervalMs: number,
  ) {}

  push(chunk: Buffer): void {
    if (this.closed) return
    // Only the tail of a chunk can hold the last lines; decoding it alone keeps a flood cheap.
    const window = (KEPT_LINES + 1) * LINE_MAX * 4
    const windowed = chunk.length > window
    const text = this.decoder.write(windowed ? chunk.subarray(chunk.length - window) : chunk)
    // A windowed chunk skipped bytes, so the held partial line no longer continues into it.
    const parts = ((windowed ? '' : this.partial) + text).split(/\r?\n|\r/)
    this.partial = (parts.pop() ?? '').slice(-LINE_MAX * 4)
    for (const part of parts) {
      const line = stripVTControlCharacters(part).trimEnd()
      if (line === '') continue
      this.lines.push(line.length > LINE_MAX ? `${line.slice(0, LINE_MAX)}…` : line)
    }
    if (this.lines.length > KEPT_LINES) this.lines = this.lines.slice(-KEPT_LINES)
    this.dirty = true
    if (this.timer === undefined) this.flush()
  }

  /** Stop reporting (the process ended); a pending report is dropped with the call. */
  close(): void {
    this.closed = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private flush(): void {
    this.timer = undefined
    if (!this.dirty || this.closed) return
    this.dirty = false
    let partial = stripVTControlCharacters(this.partial).trimEnd()
    if (partial.length > LINE_MAX) partial = `${partial.slice(0, LINE_MAX)}…`
    const shown = partial === '' ? this.lines : [...this.lines, partial].slice(-KEPT_LINES)
    if (shown.length > 0) {
      try {
        this.report({ message: shown.join('\n') })
      } catch {
        // Progress is advisory: a failing report never disturbs the command.
      }
    }
    this.timer = setTimeout(() => this.flush(), this.intervalMs)
  }
}
