// A server-sent events reader for bytes as they come off a Node stream, following the event stream
// interpretation of the HTML standard: lines end in CRLF, LF or CR; a line starting with a colon is
// a comment; `data` lines are joined with newlines; `id` sets the last event id (kept across events,
// taken at each dispatch); `retry` takes only digits; an event without data is not delivered; an
// unfinished event at the end of the stream is dropped. Chunks may split anything, a CRLF pair or a
// multi-byte UTF-8 character included.
import { StringDecoder } from 'node:string_decoder'

/** One dispatched event. */
export interface SseEvent {
  /** The event type; `message` when the event named none. */
  readonly event: string
  /** The data lines joined with `\n`, or undefined for an event that had no data line. */
  readonly data: string | undefined
  /** The last event id in force when the event was dispatched ('' when none was set). */
  readonly id: string
}

export interface SseHandlers {
  /** Every dispatch, including events without data (they carry an id, as a priming event does). */
  readonly event: (event: SseEvent) => void
  /** A valid `retry` field, in milliseconds. */
  readonly retry?: (ms: number) => void
  /**
   * An event's data, or a line whose end has not arrived, grew past the parser's byte limit. The
   * parser then ignores everything after it: the rest of that event cannot be read.
   */
  readonly oversized?: () => void
  /** The bound `oversized` reports, in UTF-8 bytes (default none), so that neither grows without end. */
  readonly maxBytes?: number
}

const LF = 10
const CR = 13
const SPACE = 32
const BOM = 0xfeff
const DIGITS = /^\d+$/

export class SseParser {
  private readonly decoder = new StringDecoder('utf8')
  /** The start of a line whose end has not arrived yet. */
  private partial = ''
  private partialBytes = 0
  private started = false
  /** The last chunk ended in CR: an LF at the start of the next one belongs to that line end. */
  private afterCR = false
  private data = ''
  private dataLines = 0
  private dataBytes = 0
  /** Past the byte limit: nothing more is read. */
  private over = false
  private type = ''
  private idBuffer = ''
  /** The id taken at the last dispatch: what a reconnection asks to resume after. */
  lastEventId = ''

  private readonly maxBytes: number

  constructor(private readonly handlers: SseHandlers) {
    this.maxBytes = handlers.maxBytes ?? Number.POSITIVE_INFINITY
  }

  push(chunk: Buffer | string): void {
    if (this.over) return
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk)
    if (text.length === 0) return
    if (!this.started) {
      this.started = true
      if (text.charCodeAt(0) === BOM) text = text.slice(1)
    }
    let at = 0
    if (this.afterCR) {
      this.afterCR = false
      if (text.charCodeAt(0) === LF) at = 1
    }
    const n = text.length
    let lf = text.indexOf('\n', at)
    let cr = text.indexOf('\r', at)
    while (at < n) {
      let end: number
      if (lf === -1 && cr === -1) break
      if (cr === -1 || (lf !== -1 && lf < cr)) end = lf
      else end = cr
      const piece = text.slice(at, end)
      let line = piece
      if (this.partial !== '') {
        line = this.partial + piece
        this.partial = ''
        this.partialBytes = 0
      }
      at = end + 1
      if (text.charCodeAt(end) === CR) {
        if (at === n) this.afterCR = true
        else if (text.charCodeAt(at) === LF) at++
      }
      this.line(line)
      if (this.over) return
      if (lf !== -1 && lf < at) lf = text.indexOf('\n', at)
      if (cr !== -1 && cr < at) cr = text.indexOf('\r', at)
    }
    if (at < n) {
      const rest = text.slice(at)
      this.partial += rest
      this.partialBytes += Buffer.byteLength(rest)
      if (this.partialBytes > this.maxBytes) this.overflow()
    }
  }

  private overflow(): void {
    this.over = true
    this.partial = ''
    this.data = ''
    this.handlers.oversized?.()
  }

  private line(line: string): void {
    if (line.length === 0) {
      this.dispatch()
      return
    }
    const first = line.charCodeAt(0)
    if (first === 58) return // a comment
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = ''
    if (colon !== -1) value = line.slice(line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1)
    switch (field) {
      case 'data':
        this.dataBytes += Buffer.byteLength(value) + (this.dataLines === 0 ? 0 : 1)
        if (this.dataBytes > this.maxBytes) {
          this.overflow()
          return
        }
        this.data = this.dataLines === 0 ? value : `${this.data}\n${value}`
        this.dataLines++
        break
      case 'event':
        this.type = value
        break
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value
        break
      case 'retry':
        if (DIGITS.test(value)) this.handlers.retry?.(Number.parseInt(value, 10))
        break
      // Any other field is ignored.
    }
  }

  private dispatch(): void {
    this.lastEventId = this.idBuffer
    const data = this.dataLines === 0 ? undefined : this.data
    const event = this.type === '' ? 'message' : this.type
    this.data = ''
    this.dataLines = 0
    this.dataBytes = 0
    this.type = ''
    this.handlers.event({ event, data, id: this.lastEventId })
  }
}
