// MCP's Streamable HTTP transport, server side, on Node's own request and response objects. The
// SDK's transport for Node converts every request into a web Request, answers it with a web
// Response around a ReadableStream, arms a keep-alive timer per POST and parses every message
// with zod; its Node adapter then reads that stream back into the Node response. A gateway pays
// all of that on every relayed call. This one writes SSE frames (or a JSON body) straight to the
// ServerResponse and keeps one keep-alive timer per session, while answering like the SDK's
// transport on the wire: the same status codes, error messages, headers, event format and ids.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  isInitializeRequest,
  isJsonContentType,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server'
import { ConfigError } from '../../errors/config-error.js'
import { readBodyWithin } from '../../util/read-body.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import { parseJsonRpcMessage } from '../protocol/jsonrpc-message.js'
import type { AuthInfo, JSONRPCMessage, JSONRPCRequest, McpTransport, RequestId } from '../protocol/wire-types.js'
import type { EventId, EventStore, StreamId } from './event-store.js'
import type { FastPath, FastPathExtra } from './fast-path.js'

/** Most messages one POST may carry (the SDK's transports refuse a longer batch with the same words). */
const MAX_BATCH_SIZE = 100
/** How often an open SSE stream gets a keep-alive comment, unless the options say otherwise (as the SDK's transports). */
const DEFAULT_SSE_KEEP_ALIVE_MS = 15_000

/** The 413 message for a body over `maxBytes`, worded as the SDK's transports word it. */
function requestBodyTooLargeMessage(maxBytes: number): string {
  return `Payload Too Large: Request body must not exceed ${maxBytes} bytes`
}

/** The request's headers and URL, as a v1 SDK transport gives handlers in `extra.requestInfo`. */
interface RequestInfo {
  readonly headers: IncomingHttpHeaders
  readonly url?: URL
}

/** What reaches the server with each message: who sent it, over which request, and how to end its stream. */
interface MessageExtraInfo {
  authInfo?: AuthInfo
  requestInfo?: RequestInfo
  closeSSEStream?: () => void
  closeStandaloneSSEStream?: () => void
}

/** The `initialize` request, as far as this transport reads it. */
type InitializeRequest = JSONRPCRequest & { method: 'initialize'; params: { protocolVersion: string } }

export interface NodeStreamableHttpOptions {
  /** A new session's id; without it the transport is stateless (one request, no session checks). */
  readonly sessionIdGenerator?: () => string
  /** Called once the session id is issued, before the initialize request is handled. */
  readonly onsessioninitialized?: (sessionId: string) => void | Promise<void>
  /** Called when a DELETE ends the session. */
  readonly onsessionclosed?: (sessionId: string | undefined) => void | Promise<void>
  /** Answer a POST with one JSON body once every request in it is answered, instead of an SSE stream. */
  readonly enableJsonResponse?: boolean
  /** Keeps every event, so a client that loses a stream resumes it with Last-Event-ID. */
  readonly eventStore?: EventStore
  /** The SSE `retry` (ms) sent in each stream's priming event. */
  readonly retryInterval?: number
  /** How often an open SSE stream gets a comment to keep intermediaries from closing it (ms; default 15 s, 0 for never). */
  readonly keepAliveMs?: number
  /** Largest body read when the caller has not parsed it (bytes; default 4 MiB). */
  readonly maxRequestBodySize?: number
}

/** The stream id the standalone GET stream's events are stored under (the SDK's, so stores stay interchangeable). */
const STANDALONE: StreamId = '_GET_stream'
const DEFAULT_MAX_BODY = 4 * 1024 * 1024
const RESUMABLE_SINCE = '2025-11-25'
const KEEP_ALIVE_FRAME = ': keepalive\n\n'
/** Characters that would end an SSE field early, or that make a client drop the field. */
const LINE_BREAK = /[\r\n\0]/

type AuthedRequest = IncomingMessage & { auth?: AuthInfo }

const NO_AUTH: FastPathExtra = Object.freeze({})

/** One HTTP response carrying SSE events; its headers go out with the first write. */
class SseConnection {
  private started = false

  constructor(
    readonly res: ServerResponse,
    private readonly headers: OutgoingHttpHeaders,
    /** Events a resume already wrote here: live sends of the same events skip them. */
    readonly replayed?: Set<EventId>,
  ) {}

  get live(): boolean {
    return !this.res.writableEnded && !this.res.destroyed
  }

  /** Write `chunk` (ending the response when `end`); false when the response is gone. */
  write(chunk: string, end = false): boolean {
    if (!this.live) return false
    if (!this.started) {
      this.started = true
      this.res.writeHead(200, this.headers)
    }
    if (end) this.res.end(chunk)
    else this.res.write(chunk)
    return true
  }

  /** Send the headers now: the client's fetch resolves on them, before any event. */
  flush(): void {
    if (this.started || !this.live) return
    this.started = true
    this.res.writeHead(200, this.headers)
    this.res.flushHeaders()
  }

  keepAlive(): void {
    if (this.started) this.write(KEEP_ALIVE_FRAME)
  }

  end(): void {
    if (!this.live) return
    if (!this.started) {
      this.started = true
      this.res.writeHead(200, this.headers)
    }
    this.res.end()
  }
}

/** The messages of one POST that hold requests: open until every request is answered. */
interface RequestStream {
  readonly id: StreamId
  readonly requests: readonly RequestId[]
  readonly pending: Set<RequestId>
  /** Where its events go now: the POST's response, or a resume's; undefined while the client has none. */
  connection: SseConnection | undefined
  /** The client holds an event id of this stream, so what it misses can be replayed. */
  resumable: boolean
  /** JSON mode: the POST's response, and the answers so far. */
  readonly json?: { readonly res: ServerResponse; readonly answers: Map<RequestId, JSONRPCMessage> }
  /** Until its priming event is written: what is sent on the stream waits for it. */
  priming?: Promise<void>
  /** A request someone else answered already (see adopt): its answer goes here, not to the client. */
  readonly answered?: (answer: JSONRPCMessage) => void
}

const isRequest = (message: JSONRPCMessage): boolean => 'method' in message && 'id' in message
const isResponse = (message: JSONRPCMessage): boolean => !('method' in message)

function sseFrame(message: JSONRPCMessage, eventId: EventId | undefined): string {
  // JSON.stringify escapes every line break inside the message, so it stays on its one data line.
  return eventId
    ? `event: message\nid: ${eventId}\ndata: ${JSON.stringify(message)}\n\n`
    : `event: message\ndata: ${JSON.stringify(message)}\n\n`
}

function checkedEventId(eventId: EventId): EventId {
  if (LINE_BREAK.test(eventId))
    throw new Error(`the event store issued an event id with a line break or NUL: ${JSON.stringify(eventId)}`)
  return eventId
}

/**
 * The server side of one Streamable HTTP session for `node:http`: hand each request of the session
 * to {@link handleRequest}. POSTs carry client messages (a request opens an SSE stream, or a JSON
 * body, answered once every request in it is; notifications and responses alone get 202), a GET
 * opens the session's one standalone stream, or resumes a stream with Last-Event-ID, and DELETE
 * ends the session. A registered {@link FastPath} is offered each incoming message first.
 */
export class NodeStreamableHttpServerTransport implements McpTransport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void
  sessionId?: string
  /** The served server's shortcut for incoming messages, if it has one. */
  fastPath: FastPath | undefined

  private readonly generateSessionId: (() => string) | undefined
  private readonly options: NodeStreamableHttpOptions
  private readonly eventStore: EventStore | undefined
  private readonly retryInterval: number | undefined
  private readonly keepAliveMs: number
  private readonly maxBody: number
  private readonly jsonMode: boolean
  private started = false
  private handled = false
  private initialized = false
  private closed = false
  private nextStream = 0
  private standalone: SseConnection | undefined
  private readonly byRequest = new Map<RequestId, RequestStream>()
  private readonly byStream = new Map<StreamId, RequestStream>()
  private keepAliveTimer: ReturnType<typeof setInterval> | undefined
  private sseHeaderCache: OutgoingHttpHeaders | undefined

  constructor(options: NodeStreamableHttpOptions = {}) {
    this.options = options
    this.generateSessionId = options.sessionIdGenerator
    this.eventStore = options.eventStore
    this.jsonMode = options.enableJsonResponse ?? false
    const retry = options.retryInterval
    if (retry !== undefined && !(Number.isSafeInteger(retry) && retry >= 0))
      throw new ConfigError('retryInterval', `expected a whole number of ms, at least 0, got ${retry}`)
    this.retryInterval = retry
    this.keepAliveMs = options.keepAliveMs ?? DEFAULT_SSE_KEEP_ALIVE_MS
    const max = options.maxRequestBodySize ?? DEFAULT_MAX_BODY
    if (!(Number.isSafeInteger(max) && max > 0))
      throw new ConfigError('maxRequestBodySize', `expected a whole number of bytes above 0, got ${max}`)
    this.maxBody = max
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('Transport already started')
    this.started = true
  }

  /**
   * Answer one HTTP request of this session. `parsedBody` is the POST's body already parsed as
   * JSON; without it the body is read here. `req.auth`, when set, reaches handlers as `authInfo`.
   */
  async handleRequest(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void> {
    if (this.closed) return this.errorReply(res, 404, JsonRpcCode.SessionNotFound, 'Session not found')
    if (this.generateSessionId === undefined && this.handled)
      throw new Error('Stateless transport cannot be reused across requests. Create a new transport per request.')
    this.handled = true
    switch (req.method) {
      case 'POST':
        return this.handlePost(req as AuthedRequest, res, parsedBody)
      case 'GET':
        return this.handleGet(req, res)
      case 'DELETE':
        return this.handleDelete(req, res)
      default:
        this.onerror?.(new Error('Method not allowed.'))
        return void res.writeHead(405, { allow: 'GET, POST, DELETE', 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: JsonRpcCode.ServerError, message: 'Method not allowed.' },
            id: null,
          }),
        )
    }
  }

  async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    // After close nothing is delivered, and nothing fails for it: the session is gone.
    if (this.closed) return
    const response = isResponse(message)
    const requestId = response ? (message as { id?: RequestId }).id : options?.relatedRequestId
    if (requestId === undefined) {
      if (response)
        throw new Error('Cannot send a response on a standalone SSE stream unless resuming a previous client request')
      // Stored even with no stream open, so the client gets it when it reconnects.
      const eventId = this.eventStore && checkedEventId(await this.eventStore.storeEvent(STANDALONE, message))
      const connection = this.standalone
      if (connection !== undefined && (eventId === undefined || !connection.replayed?.has(eventId)))
        connection.write(sseFrame(message, eventId))
      return
    }
    const stream = this.byRequest.get(requestId)
    if (stream === undefined) throw new Error(`No connection established for request ID: ${String(requestId)}`)
    if (stream.answered !== undefined) {
      if (response && stream.pending.delete(requestId)) {
        this.release(stream)
        stream.answered(message)
      }
      return
    }
    if (stream.priming !== undefined) {
      await stream.priming
      if (this.closed) return
    }
    let eventId: EventId | undefined
    if (stream.json === undefined && this.eventStore !== undefined) {
      eventId = checkedEventId(await this.eventStore.storeEvent(stream.id, message))
      if (this.closed) return
    }
    // Settled now, after the store: two answers racing for the end of one stream end it once, in order.
    const last = response && stream.pending.delete(requestId) && stream.pending.size === 0
    if (last) this.release(stream)
    if (stream.json !== undefined) {
      if (response) stream.json.answers.set(requestId, message)
      if (last) this.answerJson(stream)
      return
    }
    const connection = stream.connection
    if (connection !== undefined && (eventId === undefined || !connection.replayed?.has(eventId))) {
      const written = connection.write(sseFrame(message, eventId), last)
      if (written && eventId !== undefined) stream.resumable = true
      if (written) return
    }
    if (!last) return
    if (connection?.live) return connection.end()
    // The client has no stream for it: it was stored, and a resume replays it.
    if (this.eventStore !== undefined && stream.resumable) return
    throw new Error(`No connection established for request ID: ${String(requestId)}`)
  }

  /**
   * Take over a session whose `initialize` was answered outside this transport (by `serve`'s first
   * script, under the id the generator gives): the server gets `messages` as if they came now, the
   * `initialize` first, and its answers to them go to `answered` instead of the client (whose
   * answers were sent already). `streams` is how many request streams the session has used, so
   * new streams are numbered after them. Resolves once the `initialize` is answered and the rest
   * delivered.
   */
  async adopt(
    messages: readonly JSONRPCMessage[],
    streams: number,
    answered: (request: JSONRPCMessage, answer: JSONRPCMessage) => void,
  ): Promise<void> {
    const [init, ...rest] = messages
    if (this.handled || init === undefined || (init as { method?: unknown }).method !== 'initialize')
      throw new Error('adopt: a fresh session whose first message is its initialize request')
    this.handled = true
    this.sessionId = this.generateSessionId?.()
    this.initialized = true
    this.nextStream = streams
    if (this.sessionId !== undefined && this.options.onsessioninitialized)
      await this.options.onsessioninitialized(this.sessionId)
    const replay = (message: JSONRPCMessage): Promise<void> => {
      if (!isRequest(message)) {
        this.deliver(message, {}, undefined)
        return Promise.resolve()
      }
      return new Promise((resolve) => {
        const id = (message as { id: RequestId }).id
        const stream: RequestStream = {
          id: `adopted-${String(id)}`,
          requests: [id],
          pending: new Set([id]),
          connection: undefined,
          resumable: false,
          answered: (answer) => {
            answered(message, answer)
            resolve()
          },
        }
        this.byStream.set(stream.id, stream)
        this.byRequest.set(id, stream)
        this.deliver(message, {}, undefined)
      })
    }
    await replay(init)
    for (const message of rest) void replay(message)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.keepAliveTimer !== undefined) clearInterval(this.keepAliveTimer)
    this.standalone?.end()
    this.standalone = undefined
    for (const stream of this.byStream.values()) {
      stream.connection?.end()
      // A JSON answer still owed cannot come any more: the session is gone.
      if (stream.json !== undefined && !stream.json.res.headersSent)
        this.errorReply(stream.json.res, 404, JsonRpcCode.SessionNotFound, 'Session not found')
    }
    this.byStream.clear()
    this.byRequest.clear()
    this.onclose?.()
  }

  /** End the SSE stream of `requestId`'s POST, so the client reconnects and resumes after the retry interval. */
  closeSSEStream(requestId: RequestId): void {
    const stream = this.byRequest.get(requestId)
    // Not before the priming event: the client needs its id to resume.
    if (stream?.priming !== undefined) {
      void stream.priming.then(() => this.closeSSEStream(requestId))
      return
    }
    const connection = stream?.connection
    if (stream === undefined || connection === undefined) return
    stream.connection = undefined
    connection.end()
  }

  /** End the standalone GET stream, so the client reconnects to it. */
  closeStandaloneSSEStream(): void {
    const connection = this.standalone
    this.standalone = undefined
    connection?.end()
  }

  private async handlePost(req: AuthedRequest, res: ServerResponse, parsedBody: unknown): Promise<void> {
    const accept = req.headers.accept
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream'))
      return this.refuse(
        res,
        406,
        JsonRpcCode.ServerError,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      )
    if (!isJsonContentType(req.headers['content-type']))
      return this.refuse(
        res,
        415,
        JsonRpcCode.ServerError,
        'Unsupported Media Type: Content-Type must be application/json',
      )
    let raw = parsedBody
    if (raw === undefined) {
      const text = await readBodyWithin(req, this.maxBody)
      if (text === undefined)
        return this.refuse(res, 413, JsonRpcCode.ServerError, requestBodyTooLargeMessage(this.maxBody))
      try {
        raw = JSON.parse(text)
      } catch {
        return this.refuse(res, 400, JsonRpcCode.ParseError, 'Parse error: Invalid JSON')
      }
    }
    if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE)
      return this.refuse(
        res,
        400,
        JsonRpcCode.InvalidRequest,
        `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`,
      )
    let messages: JSONRPCMessage[]
    try {
      messages = Array.isArray(raw) ? raw.map(parseJsonRpcMessage) : [parseJsonRpcMessage(raw)]
    } catch {
      return this.refuse(res, 400, JsonRpcCode.ParseError, 'Parse error: Invalid JSON-RPC message')
    }
    try {
      await this.dispatchPost(req, res, messages)
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)))
      if (!res.headersSent) this.errorReply(res, 400, JsonRpcCode.ParseError, 'Parse error', String(error))
      else res.end()
    }
  }

  private async dispatchPost(req: AuthedRequest, res: ServerResponse, messages: JSONRPCMessage[]): Promise<void> {
    if (this.closed) return this.errorReply(res, 404, JsonRpcCode.SessionNotFound, 'Session not found')
    let init: InitializeRequest | undefined
    for (const message of messages)
      if ((message as { method?: unknown }).method === 'initialize' && isInitializeRequest(message)) {
        init = message as InitializeRequest
        break
      }
    if (init !== undefined) {
      if (this.initialized && this.sessionId !== undefined)
        return this.refuse(res, 400, JsonRpcCode.InvalidRequest, 'Invalid Request: Server already initialized')
      if (messages.length > 1)
        return this.refuse(
          res,
          400,
          JsonRpcCode.InvalidRequest,
          'Invalid Request: Only one initialization request is allowed',
        )
      this.sessionId = this.generateSessionId?.()
      this.initialized = true
      if (this.sessionId !== undefined && this.options.onsessioninitialized)
        await this.options.onsessioninitialized(this.sessionId)
    } else if (!this.checkSession(req, res) || !this.checkProtocolVersion(req, res)) return
    if (this.closed) return this.errorReply(res, 404, JsonRpcCode.SessionNotFound, 'Session not found')

    const authInfo = req.auth
    const requestInfo = requestInfoOf(req)
    const requests: RequestId[] = []
    for (const message of messages) if (isRequest(message)) requests.push((message as { id: RequestId }).id)
    if (requests.length === 0) {
      for (const message of messages) this.deliver(message, { authInfo, requestInfo }, authInfo)
      return void res.writeHead(202).end()
    }

    const protocolVersion = init?.params.protocolVersion ?? header(req.headers, 'mcp-protocol-version')
    const resumable =
      this.eventStore !== undefined && (protocolVersion ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION) >= RESUMABLE_SINCE
    const streamId = String(++this.nextStream)
    const connection = this.jsonMode ? undefined : new SseConnection(res, this.sseHeaders())
    const stream: RequestStream = {
      id: streamId,
      requests,
      pending: new Set(requests),
      connection,
      resumable: false,
      json: this.jsonMode ? { res, answers: new Map() } : undefined,
    }
    this.byStream.set(streamId, stream)
    for (const id of requests) this.byRequest.set(id, stream)
    if (connection !== undefined) {
      res.once('close', () => {
        if (stream.connection === connection) stream.connection = undefined
      })
      if (resumable) await this.prime(stream, connection)
      else connection.flush()
      this.armKeepAlive()
    }
    for (const message of messages) {
      const extra: MessageExtraInfo = { authInfo, requestInfo }
      if (resumable && isRequest(message)) {
        const id = (message as { id: RequestId }).id
        extra.closeSSEStream = () => this.closeSSEStream(id)
        extra.closeStandaloneSSEStream = () => this.closeStandaloneSSEStream()
      }
      this.deliver(message, extra, authInfo)
    }
  }

  /** The fast path's when it takes `message`, the SDK's otherwise. */
  private deliver(message: JSONRPCMessage, extra: MessageExtraInfo, authInfo: AuthInfo | undefined): void {
    const fastPath = this.fastPath
    if (fastPath !== undefined) {
      const fastExtra: FastPathExtra = authInfo === undefined ? NO_AUTH : { authInfo }
      if (fastPath.take(message, fastExtra, this.reply)) return
    }
    this.onmessage?.(message, extra)
  }

  /** The fast path's answer goes out as `send` would send it (through `send`, which a caller may have wrapped). */
  private readonly reply = (response: JSONRPCMessage): Promise<void> => this.send(response)

  /**
   * A stream's first event: an id the client can resume from, and how long to wait before it does.
   * It is stored now (a store that fails refuses the POST before anything runs), and written once
   * this turn's writes are out: by then the call is on its way to the upstream, so the priming
   * write's system call (which on a loaded machine also wakes the client) is not on its path.
   */
  private async prime(stream: RequestStream, connection: SseConnection): Promise<void> {
    const store = this.eventStore as EventStore
    const eventId = checkedEventId(await store.storeEvent(stream.id, {} as JSONRPCMessage))
    const retry = this.retryInterval === undefined ? '' : `retry: ${this.retryInterval}\n`
    const priming = new Promise<void>((resolve) =>
      setImmediate(() => {
        if (stream.priming === priming) stream.priming = undefined
        if (connection.write(`id: ${eventId}\n${retry}data: \n\n`)) stream.resumable = true
        resolve()
      }),
    )
    stream.priming = priming
  }

  private async handleGet(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!req.headers.accept?.includes('text/event-stream'))
      return this.refuse(res, 406, JsonRpcCode.ServerError, 'Not Acceptable: Client must accept text/event-stream')
    if (!this.checkSession(req, res) || !this.checkProtocolVersion(req, res)) return
    if (this.eventStore !== undefined) {
      const lastEventId = header(req.headers, 'last-event-id')
      if (lastEventId) return this.replay(this.eventStore, lastEventId, res)
    }
    if (this.standalone !== undefined)
      return this.refuse(res, 409, JsonRpcCode.ServerError, 'Conflict: Only one SSE stream is allowed per session')
    const connection = new SseConnection(res, this.sseHeaders())
    this.standalone = connection
    res.once('close', () => {
      if (this.standalone === connection) this.standalone = undefined
    })
    connection.flush()
    this.armKeepAlive()
  }

  /** A resumed stream: what the client missed after `lastEventId`, then that stream's live events. */
  private async replay(store: EventStore, lastEventId: EventId, res: ServerResponse): Promise<void> {
    try {
      if (store.getStreamIdForEventId) {
        const known = await store.getStreamIdForEventId(lastEventId)
        if (!known) return this.refuse(res, 400, JsonRpcCode.ServerError, 'Invalid event ID format')
        const busy = known === STANDALONE ? this.standalone : this.byStream.get(known)?.connection
        if (busy !== undefined)
          return this.refuse(res, 409, JsonRpcCode.ServerError, 'Conflict: Stream already has an active connection')
      }
      const connection = new SseConnection(res, this.sseHeaders(), new Set())
      const replayed = connection.replayed as Set<EventId>
      let cancelled = false
      res.once('close', () => {
        cancelled = true
      })
      const streamId = await store.replayEventsAfter(lastEventId, {
        send: async (eventId, message) => {
          if (connection.write(sseFrame(message, checkedEventId(eventId)))) replayed.add(eventId)
          else this.onerror?.(new Error('Failed replay events'))
        },
      })
      // Closed, or the client gone, while the store was replaying: nothing will ever end this stream.
      if (this.closed || cancelled) {
        if (!res.headersSent) return this.errorReply(res, 404, JsonRpcCode.SessionNotFound, 'Session not found')
        return void res.end()
      }
      if (streamId === STANDALONE) {
        this.standalone?.end()
        this.standalone = connection
        res.once('close', () => {
          if (this.standalone === connection) this.standalone = undefined
        })
      } else {
        const stream = this.byStream.get(streamId)
        // Every request of that stream is answered and replayed: the stream is complete.
        if (stream === undefined) return connection.end()
        const previous = stream.connection
        stream.connection = connection
        stream.resumable = true
        previous?.end()
        res.once('close', () => {
          if (stream.connection === connection) stream.connection = undefined
        })
      }
      connection.flush()
      this.armKeepAlive()
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)))
      if (!res.headersSent) this.errorReply(res, 500, JsonRpcCode.ServerError, 'Error replaying events')
      else res.end()
    }
  }

  private async handleDelete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.checkSession(req, res) || !this.checkProtocolVersion(req, res)) return
    try {
      await this.options.onsessionclosed?.(this.sessionId)
    } finally {
      await this.close()
    }
    res.writeHead(200).end()
  }

  /** Whether the request names this session; answered here when it does not. */
  private checkSession(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.generateSessionId === undefined) return true
    if (!this.initialized) return this.refused(res, 400, JsonRpcCode.ServerError, 'Bad Request: Server not initialized')
    const sessionId = header(req.headers, 'mcp-session-id')
    if (!sessionId)
      return this.refused(res, 400, JsonRpcCode.ServerError, 'Bad Request: Mcp-Session-Id header is required')
    if (sessionId !== this.sessionId) return this.refused(res, 404, JsonRpcCode.SessionNotFound, 'Session not found')
    return true
  }

  /** Whether the request's MCP-Protocol-Version, if any, is one the SDK speaks; answered here when not. */
  private checkProtocolVersion(req: IncomingMessage, res: ServerResponse): boolean {
    const version = header(req.headers, 'mcp-protocol-version')
    if (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return true
    return this.refused(
      res,
      400,
      JsonRpcCode.ServerError,
      `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    )
  }

  /** The same for every stream of the session once its id is issued (Node only reads them). */
  private sseHeaders(): OutgoingHttpHeaders {
    if (this.sseHeaderCache !== undefined && this.sseHeaderCache['mcp-session-id'] === this.sessionId)
      return this.sseHeaderCache
    const headers: OutgoingHttpHeaders = {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    }
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId
    this.sseHeaderCache = headers
    return headers
  }

  /** One timer per session, writing a comment to every open stream, instead of one per stream. */
  private armKeepAlive(): void {
    if (this.keepAliveTimer !== undefined || this.closed) return
    if (!Number.isFinite(this.keepAliveMs) || this.keepAliveMs < 1) return
    this.keepAliveTimer = setInterval(
      () => {
        this.standalone?.keepAlive()
        for (const stream of this.byStream.values()) stream.connection?.keepAlive()
      },
      Math.min(this.keepAliveMs, 2 ** 31 - 1),
    )
    this.keepAliveTimer.unref()
  }

  /** Forget a stream whose every request is answered. */
  private release(stream: RequestStream): void {
    this.byStream.delete(stream.id)
    for (const id of stream.requests) if (this.byRequest.get(id) === stream) this.byRequest.delete(id)
  }

  private answerJson(stream: RequestStream): void {
    const json = stream.json
    if (json === undefined || json.res.writableEnded || json.res.destroyed) return
    const answers = stream.requests.map((id) => json.answers.get(id))
    const headers: OutgoingHttpHeaders = { 'content-type': 'application/json' }
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId
    json.res.writeHead(200, headers).end(JSON.stringify(answers.length === 1 ? answers[0] : answers))
  }

  /** Report and answer a refused request, as the SDK's transport does. */
  private refuse(res: ServerResponse, status: number, code: number, httpRefusal: string): void {
    this.onerror?.(new Error(httpRefusal))
    this.errorReply(res, status, code, httpRefusal)
  }

  /** {@link refuse}, for a check: false. */
  private refused(res: ServerResponse, status: number, code: number, message: string): false {
    this.refuse(res, status, code, message)
    return false
  }

  private errorReply(res: ServerResponse, status: number, code: number, message: string, data?: string): void {
    const error = data === undefined ? { code, message } : { code, message, data }
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', error, id: null }))
  }
}

/** A header's value, as the web Headers of the SDK's transport would read it (repeats joined). */
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/** The request's headers and URL for handlers' `extra.requestInfo`; the URL is built only when asked for. */
function requestInfoOf(req: IncomingMessage): RequestInfo {
  let url: URL | undefined
  return {
    headers: req.headers,
    get url() {
      url ??= new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`)
      return url
    },
  }
}
