// MCP over stdio for `toolgate serve`: newline-delimited JSON-RPC like the SDK's
// StdioServerTransport, except that one bad or oversized line costs only that message. The SDK's
// reader closes the whole transport when its buffer passes the limit, and the gateway then ended
// as if the client had hung up; here an oversized request is answered with a JSON-RPC error and
// the next line is read as usual.
import type { Readable, Writable } from 'node:stream'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import { safeParseJsonRpcMessage } from '../protocol/jsonrpc-message.js'
import { DEFAULT_MAX_MESSAGE_BYTES } from '../protocol/message-limit.js'
import type { JSONRPCMessage, McpTransport } from '../protocol/wire-types.js'
import { SENT, writeLine } from '../protocol/write-line.js'
import type { FastPath } from './fast-path.js'

export { DEFAULT_MAX_MESSAGE_BYTES } from '../protocol/message-limit.js'

/** How long, after the client ended stdin, its requests still unanswered get before the transport closes. */
export const DEFAULT_END_GRACE_MS = 30_000

/** After the end grace, how long the calls then cancelled get to answer (and reach the journal) before the transport closes. */
export const DEFAULT_CANCEL_GRACE_MS = 5000

/** Why a request to the client fails once stdin ended: the client's answer could only come that way. */
const CLIENT_GONE = 'the MCP client ended stdin, so it can never answer this request'

/** Stdio carries no authentication. */
const NO_EXTRA = Object.freeze({})
const NEWLINE = 0x0a
const CR = 0x0d
const OPEN_BRACE = 0x7b

export interface LineTransportOptions {
  /** Largest message read, in bytes, without its newline. Default {@link DEFAULT_MAX_MESSAGE_BYTES}. */
  readonly maxMessageBytes?: number
  /** Named in the error a client gets for an oversized message, e.g. `toolgate serve --max-message-bytes`. */
  readonly limitName?: string
  /**
   * After the client ends stdin, how long the requests it sent and that are still unanswered get
   * before the transport closes anyway. Default {@link DEFAULT_END_GRACE_MS}.
   */
  readonly endGraceMs?: number
  /**
   * After `endGraceMs`, how long the calls cancelled then (see `cancelCalls`) get to answer before
   * the transport closes. Default {@link DEFAULT_CANCEL_GRACE_MS}.
   */
  readonly cancelGraceMs?: number
  readonly stdin?: Readable
  readonly stdout?: Writable
}

/**
 * A server-side stdio transport that survives bad input: a line that is not JSON gets a parse
 * error, an oversized request an `Invalid Request` error naming the limit (its bytes are skipped
 * as they arrive, never buffered), and serving goes on. `endReason` says why it closed: undefined
 * when the client ended stdin or `close()` was called, the failure otherwise.
 *
 * The client ending stdin closes the transport only once every request it sent was answered and
 * those answers were handed to stdout (or `endGraceMs` passed): a client that writes its requests
 * and closes stdin at once still gets every answer. Requests the server sends the client after
 * stdin ended (or that still wait for an answer when it ends) fail at once: the client can never
 * answer them. When `endGraceMs` runs out, the calls still running are cancelled (`cancelCalls`)
 * and get `cancelGraceMs` to answer with their cancelled results.
 */
export class LineStdioServerTransport implements McpTransport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** Why the transport closed, when it was not the client ending stdin or a `close()` call. */
  endReason: Error | undefined
  /**
   * The served server's shortcut (`fastPathOf(server)`, set after `server.connect`): each incoming
   * message is offered to it first, and only what it leaves reaches `onmessage`.
   */
  fastPath: FastPath | undefined
  /**
   * Cancels the calls still running (the gateway's `cancellableCalls`), called once when the end
   * grace runs out with requests unanswered: they end as cancelled, answered and journaled.
   */
  cancelCalls: ((reason: string) => void) | undefined

  private readonly stdin: Readable
  private readonly stdout: Writable
  private readonly max: number
  private readonly limitName: string
  /** The current line's bytes so far (it has no newline yet), while it is within the limit. */
  private pending: Buffer[] = []
  private pendingBytes = 0
  /** The current line is over the limit: its bytes are scanned for the id and dropped. */
  private skipping: OversizedScan | undefined
  private started = false
  private closed = false
  /** The client's requests read and not answered yet, by id (a count, should a client reuse an id). */
  private readonly unanswered = new Map<string | number, number>()
  /** The client ended stdin: the transport closes once `unanswered` is empty. */
  private inputEnded = false
  private readonly endGraceMs: number
  private readonly cancelGraceMs: number
  private endTimer: NodeJS.Timeout | undefined
  /** The end grace waits for `serving()`: nothing can answer the client's requests yet. */
  private endGraceHeld = false
  /** Ids of the server's requests to the client that wait for the client's answer. */
  private readonly asking = new Set<string | number>()

  constructor(options: LineTransportOptions = {}) {
    this.stdin = options.stdin ?? process.stdin
    this.stdout = options.stdout ?? process.stdout
    this.max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    this.limitName = options.limitName ?? 'maxMessageBytes'
    this.endGraceMs = options.endGraceMs ?? DEFAULT_END_GRACE_MS
    this.cancelGraceMs = options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('LineStdioServerTransport already started')
    this.started = true
    this.stdin.on('data', this.onData)
    this.stdin.on('end', this.onEnd)
    this.stdin.on('error', this.onInputError)
    this.stdout.on('error', this.onOutputError)
  }

  async close(): Promise<void> {
    this.finish(undefined)
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return SENT
    if ('method' in message && 'id' in message) {
      if (this.inputEnded) {
        this.clientGone(message.id)
        return SENT
      }
      this.asking.add(message.id)
    }
    const sent = writeLine(this.stdout, message)
    if (!('method' in message) && 'id' in message && message.id !== undefined && message.id !== null)
      this.answered(message.id)
    return sent
  }

  /**
   * Hold stdin's end grace until `serving()`: a transport read while the gateway still starts (its
   * upstreams connecting) must not give up requests nobody could answer yet, so the grace
   * (--drain-timeout) counts from when they can be served.
   */
  holdEndGrace(): void {
    this.endGraceHeld = true
  }

  /** The requests can be served now: a held end grace starts, if stdin already ended. */
  serving(): void {
    if (!this.endGraceHeld) return
    this.endGraceHeld = false
    if (this.closed || !this.inputEnded || this.unanswered.size === 0 || this.endTimer !== undefined) return
    this.endTimer = setTimeout(() => this.giveUp(), this.endGraceMs)
  }

  /** A request of the client's was answered by someone else (before this transport existed). */
  answeredElsewhere(id: string | number): void {
    this.answered(id)
  }

  private answered(id: string | number): void {
    const count = this.unanswered.get(id)
    if (count === undefined) return
    if (count > 1) this.unanswered.set(id, count - 1)
    else this.unanswered.delete(id)
    if (this.inputEnded && this.unanswered.size === 0) this.endWhenWritten()
  }

  private readonly onData = (chunk: Buffer): void => {
    let at = 0
    while (at < chunk.length && !this.closed) {
      const newline = chunk.indexOf(NEWLINE, at)
      const end = newline === -1 ? chunk.length : newline
      // The common case, a whole line within one chunk, is read in place.
      if (newline !== -1 && this.pendingBytes === 0 && this.skipping === undefined && end - at <= this.max) {
        this.line(chunk, at, end)
        at = newline + 1
        continue
      }
      const piece = chunk.subarray(at, end)
      if (this.skipping === undefined && this.pendingBytes + piece.length > this.max) {
        this.skipping = new OversizedScan()
        for (const earlier of this.pending) this.skipping.feed(earlier)
        this.pending = []
        this.pendingBytes = 0
      }
      if (this.skipping !== undefined) this.skipping.feed(piece)
      else if (piece.length > 0) {
        this.pending.push(piece)
        this.pendingBytes += piece.length
      }
      if (newline === -1) return
      at = newline + 1
      this.endOfLine()
    }
  }

  private endOfLine(): void {
    const skipped = this.skipping
    if (skipped !== undefined) {
      this.skipping = undefined
      this.refuseOversized(skipped)
      return
    }
    const bytes = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes)
    this.pending = []
    this.pendingBytes = 0
    this.line(bytes, 0, bytes.length)
  }

  /** Handle the line in `bytes` from `start` to `end` (its newline excluded). */
  private line(bytes: Buffer, start: number, end: number): void {
    if (end > start && bytes[end - 1] === CR) end--
    const line = bytes.toString('utf8', start, end)
    // A message starts with `{`; anything else may be a blank line, which is skipped.
    if (bytes[start] !== OPEN_BRACE && line.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      this.report(`a line that is not JSON was answered with a parse error: ${(error as Error).message}`)
      void this.send(errorResponse(undefined, JsonRpcCode.ParseError, 'Parse error: the line is not JSON'))
      return
    }
    const parsed = safeParseJsonRpcMessage(value)
    if (!parsed.success) {
      this.report('a message that is not JSON-RPC was refused')
      // A notification is never answered, even a malformed one.
      if (!(isObject(value) && 'method' in value && !('id' in value)))
        void this.send(
          errorResponse(idOf(value), JsonRpcCode.InvalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message'),
        )
      return
    }
    this.note(parsed.data)
    if (this.fastPath?.take(parsed.data, NO_EXTRA, this.reply)) return
    this.onmessage?.(parsed.data)
  }

  /** Count a request as awaiting its answer; a cancelled one is answered by no one. */
  private note(message: JSONRPCMessage): void {
    if (!('method' in message)) {
      if ('id' in message && message.id !== undefined && message.id !== null) this.asking.delete(message.id)
      return
    }
    if ('id' in message) {
      this.unanswered.set(message.id, (this.unanswered.get(message.id) ?? 0) + 1)
      return
    }
    if (message.method !== 'notifications/cancelled' || !isObject(message.params)) return
    const { requestId } = message.params
    if (typeof requestId === 'string' || typeof requestId === 'number') this.unanswered.delete(requestId)
  }

  private readonly reply = (response: JSONRPCMessage): Promise<void> => this.send(response)

  private refuseOversized(scan: OversizedScan): void {
    const text =
      `message too large: ${scan.bytes} bytes, over the limit of ${this.max} bytes` +
      ` (raise it with ${this.limitName})`
    this.report(`refused a ${scan.kind}${scan.id === undefined ? '' : ` (id ${JSON.stringify(scan.id)})`}: ${text}`)
    if (scan.kind === 'request' || scan.kind === 'unknown')
      void this.send(errorResponse(scan.id, JsonRpcCode.InvalidRequest, `Invalid Request: ${text}`))
    else if (scan.kind === 'response' && scan.id !== undefined)
      // The server's own request is waiting for this answer; fail it rather than leave it hanging.
      this.onmessage?.(errorResponse(scan.id, JsonRpcCode.InvalidRequest, `the client's response was refused: ${text}`))
  }

  private report(text: string): void {
    this.onerror?.(new Error(`stdio: ${text}`))
  }

  /**
   * Fail the server's request `id` as the client's answer would: the server's caller (an
   * elicitation, a sampling request) learns at once that no answer will come, and finishes.
   */
  private clientGone(id: string | number): void {
    this.asking.delete(id)
    this.report(`a request to the client (id ${JSON.stringify(id)}) failed: ${CLIENT_GONE}`)
    queueMicrotask(() => {
      if (!this.closed) this.onmessage?.(errorResponse(id, JsonRpcCode.ConnectionClosed, CLIENT_GONE))
    })
  }

  private readonly onEnd = (): void => {
    if (this.closed || this.inputEnded) return
    this.inputEnded = true
    this.pending = []
    this.skipping = undefined
    for (const id of [...this.asking]) this.clientGone(id)
    if (this.unanswered.size === 0) {
      this.endWhenWritten()
      return
    }
    if (this.endGraceHeld) return
    this.endTimer = setTimeout(() => this.giveUp(), this.endGraceMs)
  }

  /** The end grace ran out: the calls still running are cancelled, and get a short grace to answer. */
  private giveUp(): void {
    const cancel = this.cancelCalls
    if (cancel === undefined) {
      this.report(
        `stdin ended; ${this.unanswered.size} request(s) still unanswered after ${this.endGraceMs} ms were given up`,
      )
      this.endWhenWritten()
      return
    }
    this.report(
      `stdin ended; cancelling ${this.unanswered.size} request(s) still unanswered after ${this.endGraceMs} ms (--drain-timeout passed)`,
    )
    cancel('the MCP client ended stdin and --drain-timeout passed')
    if (this.unanswered.size === 0) return
    this.endTimer = setTimeout(() => {
      this.report(
        `stdin ended; ${this.unanswered.size} request(s) still unanswered ${this.cancelGraceMs} ms after they were cancelled were given up`,
      )
      this.endWhenWritten()
    }, this.cancelGraceMs)
  }

  /** Close once what was written reached stdout's file descriptor (a failed write closes it sooner). */
  private endWhenWritten(): void {
    clearTimeout(this.endTimer)
    const { stdout } = this
    if (stdout.writableLength === 0 || stdout.destroyed) {
      setImmediate(() => this.finish(undefined))
      return
    }
    // Writes complete in order: an empty one's callback runs once everything before it was written.
    stdout.write('', (error) => (error ? this.onOutputError(error) : this.finish(undefined)))
  }
  private readonly onInputError = (error: Error): void =>
    this.finish(new Error(`reading stdin failed: ${error.message}`))
  private readonly onOutputError = (error: Error): void => {
    // EPIPE: the client stopped reading, which is how it hangs up as much as ending stdin.
    const code = (error as { code?: unknown }).code
    this.finish(code === 'EPIPE' ? undefined : new Error(`writing stdout failed: ${error.message}`))
  }

  private finish(reason: Error | undefined): void {
    if (this.closed) return
    this.closed = true
    this.endReason = reason
    clearTimeout(this.endTimer)
    this.stdin.off('data', this.onData)
    this.stdin.off('end', this.onEnd)
    this.stdin.off('error', this.onInputError)
    this.stdout.off('error', this.onOutputError)
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause()
    this.pending = []
    this.skipping = undefined
    this.onclose?.()
  }
}

function errorResponse(id: string | number | undefined, code: number, message: string): JSONRPCMessage {
  // MCP's error response leaves out an id it could not read (JSON-RPC's `null` fails its schema).
  return { jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } } as JSONRPCMessage
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function idOf(value: unknown): string | number | undefined {
  if (!isObject(value)) return undefined
  const id = value.id
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
/** Longest top-level key or id value kept while scanning; longer ones cannot be `id` or a usable id. */
const MAX_TOKEN = 256

/**
 * Reads what an oversized line is without keeping it: its size, its top-level `id` and whether it
 * is a request (`method`), a response (`result` / `error`) or neither. A streaming JSON scan that
 * holds only the current key and id value, so a 50 MB line costs no 50 MB buffer.
 */
class OversizedScan {
  bytes = 0
  id: string | number | undefined
  private depth = 0
  private inString = false
  private escaped = false
  /** Top level is not an object: nothing more to learn. */
  private broken = false
  private started = false
  private hasMethod = false
  private hasResponse = false
  /** At depth 1: the next string is a key. */
  private expectKey = false
  private key: number[] | undefined
  private currentKey = ''
  /** Raw bytes of the top-level `id` value while it is being read. */
  private idBytes: number[] | undefined
  private slashChunk: Buffer | undefined
  private slashAt = -1

  get kind(): 'request' | 'notification' | 'response' | 'unknown' {
    if (this.broken || !this.started) return 'unknown'
    if (this.hasMethod) return this.id === undefined ? 'notification' : 'request'
    return this.hasResponse ? 'response' : 'unknown'
  }

  feed(chunk: Buffer): void {
    this.bytes += chunk.length
    if (this.broken) return
    let i = 0
    while (i < chunk.length) {
      if (this.inString) {
        i = this.stringBytes(chunk, i)
        continue
      }
      const byte = chunk[i++]
      if (this.idBytes !== undefined && this.depth === 1 && (byte === 0x2c || byte === 0x7d)) this.endId()
      else if (this.idBytes !== undefined && this.idBytes.length < MAX_TOKEN && byte > 0x20) this.idBytes.push(byte)
      switch (byte) {
        case QUOTE:
          this.inString = true
          if (this.depth === 1 && this.expectKey) this.key = []
          break
        case 0x7b: // {
          if (!this.started) {
            this.started = true
            this.expectKey = true
          }
          this.depth++
          break
        case 0x5b: // [
          if (!this.started) this.broken = true
          this.depth++
          break
        case 0x7d: // }
        case 0x5d: // ]
          this.depth--
          break
        case 0x3a: // :
          if (this.depth === 1) {
            this.expectKey = false
            if (this.currentKey === 'id') this.idBytes = []
          }
          break
        case 0x2c: // ,
          if (this.depth === 1) this.expectKey = true
          break
        default:
          if (!this.started && byte > 0x20) this.broken = true
      }
      if (this.broken) return
    }
  }

  /** Consume string bytes from `i`; returns where scanning continues. */
  private stringBytes(chunk: Buffer, i: number): number {
    const collecting = this.key !== undefined || (this.idBytes !== undefined && this.depth === 1)
    if (!collecting && !this.escaped) {
      // Most of a large message is string content: jump to the next quote or backslash.
      const quote = chunk.indexOf(QUOTE, i)
      const slash = this.nextBackslash(chunk, i)
      const next = quote === -1 ? slash : slash === -1 ? quote : Math.min(quote, slash)
      if (next === -1) return chunk.length
      i = next
    }
    const byte = chunk[i]
    if (this.escaped) this.escaped = false
    else if (byte === BACKSLASH) this.escaped = true
    else if (byte === QUOTE) {
      this.inString = false
      if (this.key !== undefined) {
        this.currentKey = Buffer.from(this.key).toString('utf8')
        if (this.currentKey === 'method') this.hasMethod = true
        if (this.currentKey === 'result' || this.currentKey === 'error') this.hasResponse = true
        this.key = undefined
      }
    }
    if (this.inString || byte === QUOTE) {
      if (this.key !== undefined && byte !== QUOTE && this.key.length < MAX_TOKEN) this.key.push(byte)
      if (this.idBytes !== undefined && this.idBytes.length < MAX_TOKEN) this.idBytes.push(byte)
    }
    return i + 1
  }

  /** The next backslash at or after `i`, remembered per chunk so many short strings do not rescan it. */
  private nextBackslash(chunk: Buffer, i: number): number {
    if (this.slashChunk !== chunk || (this.slashAt !== -1 && this.slashAt < i)) {
      this.slashChunk = chunk
      this.slashAt = chunk.indexOf(BACKSLASH, i)
    }
    return this.slashAt
  }

  private endId(): void {
    const raw = Buffer.from(this.idBytes ?? []).toString('utf8')
    this.idBytes = undefined
    if (raw.length >= MAX_TOKEN) return
    try {
      const value: unknown = JSON.parse(raw)
      if (typeof value === 'string' || typeof value === 'number') this.id = value
    } catch {
      // not a usable id
    }
  }
}
