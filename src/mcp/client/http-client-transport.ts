// The client side of MCP's Streamable HTTP transport, written for Node: requests go over node:http
// and node:https with kept-alive connections, and event streams are read straight off the response
// with a small parser. It behaves as the MCP SDK's StreamableHTTPClientTransport (sessions, the
// protocol version header, the server's GET stream, resuming a dropped stream with Last-Event-ID,
// OAuth through the SDK's `auth`), without the web Request/Response objects and the two web
// streams per response that cost a gateway a large share of its time on every forwarded call.
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { urlToHttpOptions } from 'node:url'
import {
  auth,
  createFetchWithInit,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
  UnauthorizedError,
} from '@modelcontextprotocol/client'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import { parseJsonRpcMessage } from '../protocol/jsonrpc-message.js'
import type { FetchLike, JSONRPCMessage, McpOAuthProvider, McpTransport, RequestId } from '../protocol/wire-types.js'
import { upstreamFetch } from './http-fetch.js'
import { SCOPE_CHALLENGE, type ScopeChallengeTaker } from './oauth.js'
import { SseParser } from './sse-parser.js'

/** How a dropped stream is retried (the SDK transport's options of the same name). */
export interface StreamableHTTPReconnectionOptions {
  readonly initialReconnectionDelay: number
  readonly maxReconnectionDelay: number
  readonly reconnectionDelayGrowFactor: number
  readonly maxRetries: number
}

/** What a send may be told (the SDK's transport send options have this shape). */
interface TransportSendOptions {
  readonly resumptionToken?: string
  readonly onresumptiontoken?: (token: string) => void
  readonly [key: string]: unknown
}

/**
 * The endpoint answered with an HTTP error (`code` is its status) or something unreadable (-1): the
 * error the SDK v1 transport of the same name threw, with the same message, which the link reads
 * (a 404 of a forgotten session, the JSON-RPC error in a 4xx body).
 */
export class StreamableHTTPError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(`Streamable HTTP error: ${message}`)
    this.name = 'StreamableHTTPError'
  }
}

// Idle connections are kept for reuse; Node closes them a second before the server's announced
// keep-alive timeout, or after this long when it announces none.
const IDLE_MS = 4000
const httpAgent = new HttpAgent({ keepAlive: true, timeout: IDLE_MS })
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: IDLE_MS })

/** The SDK transport's defaults, so a dropped stream is retried as it would be there. */
const DEFAULT_RECONNECTION: StreamableHTTPReconnectionOptions = {
  initialReconnectionDelay: 1000,
  maxReconnectionDelay: 30000,
  reconnectionDelayGrowFactor: 1.5,
  maxRetries: 2,
}

const MAX_REDIRECTS = 5
const REDIRECTS = new Set([301, 302, 303, 307, 308])

export interface NodeHttpClientTransportOptions {
  /** Sent with every request to the endpoint (after the transport's own, which they override). */
  readonly headers?: Readonly<Record<string, string>>
  /** OAuth: a token is attached to every request, and asked for when the server answers 401. */
  readonly authProvider?: McpOAuthProvider
  /**
   * Headers worked out for each request (after `headers`, which they override), e.g. a caller's own
   * credential. After a 401 it is asked once more with the headers that were refused (so that it
   * renews a credential once, however many requests were refused with it), and the request is sent again.
   */
  readonly headerProvider?: (refused?: Readonly<Record<string, string>>) => Promise<Readonly<Record<string, string>>>
  readonly reconnectionOptions?: StreamableHTTPReconnectionOptions
  /** Resume this session instead of starting one. */
  readonly sessionId?: string
  /**
   * Largest message read, in bytes: a JSON body, or an event's data (or a line without its end) on
   * a stream. Default: no limit.
   */
  readonly maxMessageBytes?: number
}

/** What a stream being read needs to resume and to report its progress. */
interface StreamOptions {
  readonly resumptionToken?: string
  readonly onresumptiontoken?: (token: string) => void
  /** The id of the request whose response a resumed stream carries (its replayed id is replaced). */
  readonly replayMessageId?: RequestId
}

type HeaderMap = Record<string, string>

/** The provided headers each request's header map carries, to hand back the ones a 401 refused. */
const sent = new WeakMap<HeaderMap, Readonly<Record<string, string>>>()

export class NodeHttpClientTransport implements McpTransport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private readonly url: URL
  /** The endpoint as request options, worked out once rather than on every request. */
  private readonly target: RequestOptions
  private readonly extraHeaders: ReadonlyArray<readonly [string, string]>
  private readonly authProvider: OAuthClientProvider | undefined
  private readonly headerProvider: NodeHttpClientTransportOptions['headerProvider']
  private readonly reconnection: StreamableHTTPReconnectionOptions
  private readonly maxMessageBytes: number
  private _sessionId: string | undefined
  private _protocolVersion: string | undefined
  private started = false
  private aborted = false
  /** Requests (and the responses being read from them) to end when the transport closes. */
  private readonly live = new Set<ClientRequest>()
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined
  private serverRetryMs: number | undefined
  private resourceMetadataUrl: URL | undefined
  private scope: string | undefined
  /** Set after an authorization, so a server that refuses the new token does not loop. */
  private authorizedAgain = false
  private lastUpscopingHeader: string | undefined

  constructor(url: URL, options: NodeHttpClientTransportOptions = {}) {
    this.url = url
    this.target = urlToHttpOptions(url)
    this.extraHeaders = Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])
    // The caller's provider has the SDK's shape (McpOAuthProvider); the SDK's auth() takes it as such.
    this.authProvider = options.authProvider as OAuthClientProvider | undefined
    this.headerProvider = options.headerProvider
    this.reconnection = options.reconnectionOptions ?? DEFAULT_RECONNECTION
    this._sessionId = options.sessionId
    this.maxMessageBytes = options.maxMessageBytes ?? Number.POSITIVE_INFINITY
  }

  get sessionId(): string | undefined {
    return this._sessionId
  }

  get protocolVersion(): string | undefined {
    return this._protocolVersion
  }

  setProtocolVersion(version: string): void {
    this._protocolVersion = version
  }

  async start(): Promise<void> {
    if (this.started)
      throw new Error(
        'NodeHttpClientTransport already started! If using Client class, note that connect() calls start() automatically.',
      )
    this.started = true
  }

  async close(): Promise<void> {
    if (this.reconnectTimer !== undefined) {
      clearTimeout(this.reconnectTimer)
      this.reconnectTimer = undefined
    }
    this.aborted = true
    for (const req of this.live) req.destroy(abortError())
    this.live.clear()
    this.onclose?.()
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.post(message, options)
    } catch (error) {
      this.onerror?.(asError(error))
      throw error
    }
  }

  private async post(
    message: JSONRPCMessage,
    options: TransportSendOptions | undefined,
    refused?: Readonly<Record<string, string>>,
  ): Promise<void> {
    const { resumptionToken, onresumptiontoken } = options ?? {}
    if (resumptionToken) {
      // A request whose response was being streamed: fetch the rest of that stream instead.
      const replayMessageId = 'method' in message && 'id' in message ? message.id : undefined
      this.startOrAuthSse({ resumptionToken, replayMessageId }).catch((error) => this.onerror?.(asError(error)))
      return
    }
    const headers = await this.commonHeaders(refused)
    headers['content-type'] = 'application/json'
    headers.accept = 'application/json, text/event-stream'
    const { res, url } = await this.exchange('POST', headers, JSON.stringify(message))
    const sessionId = header(res, 'mcp-session-id')
    if (sessionId) this._sessionId = sessionId
    const status = res.statusCode ?? 0
    if (status < 200 || status > 299) {
      const text = await readText(res, this.maxMessageBytes).catch(() => null)
      // Provided headers that were refused are asked for once more (a fresh credential), then sent again.
      if (status === 401 && this.headerProvider && !this.authProvider && refused === undefined)
        return this.post(message, undefined, sent.get(headers) ?? {})
      if (status === 401 && this.authProvider) {
        if (this.authorizedAgain)
          throw new StreamableHTTPError(401, 'Server returned 401 after successful authentication')
        const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(authResponse(res))
        this.resourceMetadataUrl = resourceMetadataUrl
        this.scope = scope
        if ((await this.authorize(this.fetchWithHeaders())) !== 'AUTHORIZED') throw new UnauthorizedError()
        this.authorizedAgain = true
        return this.post(message, undefined)
      }
      if (status === 403 && this.authProvider) {
        const { resourceMetadataUrl, scope, error } = extractWWWAuthenticateParams(authResponse(res))
        if (error === 'insufficient_scope') {
          const challenge = header(res, 'www-authenticate')
          // The same challenge after asking for its scope would only repeat.
          if (this.lastUpscopingHeader === challenge)
            throw new StreamableHTTPError(403, 'Server returned 403 after trying upscoping')
          if (scope) {
            this.scope = scope
            // The SDK's flow without a browser asks for the provider's own scope only: tell ours.
            if (takesScopeChallenges(this.authProvider)) this.authProvider[SCOPE_CHALLENGE](scope)
          }
          if (resourceMetadataUrl) this.resourceMetadataUrl = resourceMetadataUrl
          this.lastUpscopingHeader = challenge
          if ((await this.authorize(upstreamFetch)) !== 'AUTHORIZED') throw new UnauthorizedError()
          return this.post(message, undefined)
        }
      }
      throw new StreamableHTTPError(status, `Error POSTing to endpoint: ${unfollowedRedirect(res, url) ?? text}`)
    }
    this.authorizedAgain = false
    this.lastUpscopingHeader = undefined
    if (status === 202) {
      res.resume()
      // Once the session is initialized, the server may offer its own stream of messages.
      if (isInitializedNotification(message)) this.startOrAuthSse({}).catch((error) => this.onerror?.(asError(error)))
      return
    }
    const requests = 'method' in message && 'id' in message && message.id !== undefined ? [message.id] : []
    if (requests.length === 0) {
      res.resume()
      return
    }
    const contentType = header(res, 'content-type')
    const type = mediaType(contentType)
    if (type === 'text/event-stream') {
      this.readStream(res, { onresumptiontoken }, false, requests)
    } else if (type === 'application/json') {
      let text: string
      try {
        text = await readText(res, this.maxMessageBytes)
      } catch (error) {
        if (error instanceof OversizedError) this.dropOversized()
        throw error
      }
      for (const each of jsonMessages(text)) this.onmessage?.(each)
    } else {
      res.resume()
      throw new StreamableHTTPError(-1, `Unexpected content type: ${contentType}`)
    }
  }

  /** Open (or resume) the server's stream with a GET; a server without one answers 405. */
  private async startOrAuthSse(options: StreamOptions): Promise<void> {
    try {
      const headers = await this.commonHeaders()
      headers.accept = 'text/event-stream'
      if (options.resumptionToken) headers['last-event-id'] = options.resumptionToken
      const { res, url } = await this.exchange('GET', headers, undefined)
      const status = res.statusCode ?? 0
      if (status < 200 || status > 299) {
        res.resume()
        if (status === 401 && this.authProvider) return await this.authThenStart()
        if (status === 405) return
        throw new StreamableHTTPError(
          status,
          `Failed to open SSE stream: ${unfollowedRedirect(res, url) ?? res.statusMessage ?? ''}`,
        )
      }
      this.readStream(res, options, true, [])
    } catch (error) {
      this.onerror?.(asError(error))
      throw error
    }
  }

  private async authThenStart(): Promise<void> {
    if (!this.authProvider) throw new UnauthorizedError('No auth provider')
    let result: string
    try {
      result = await this.authorize(this.fetchWithHeaders())
    } catch (error) {
      this.onerror?.(asError(error))
      throw error
    }
    if (result !== 'AUTHORIZED') throw new UnauthorizedError()
    return this.startOrAuthSse({})
  }

  /** Run the SDK's OAuth flow for this server. */
  private authorize(fetchFn: FetchLike, authorizationCode?: string): Promise<string> {
    if (!this.authProvider) return Promise.reject(new UnauthorizedError('No auth provider'))
    return auth(this.authProvider, {
      serverUrl: this.url,
      resourceMetadataUrl: this.resourceMetadataUrl,
      scope: this.scope,
      fetchFn,
      ...(authorizationCode !== undefined ? { authorizationCode } : {}),
    })
  }

  /** The fetch OAuth requests go through, with this server's headers added as the SDK adds them. */
  private fetchWithHeaders(): FetchLike {
    return this.extraHeaders.length === 0
      ? upstreamFetch
      : createFetchWithInit(upstreamFetch, { headers: Object.fromEntries(this.extraHeaders) })
  }

  /**
   * After the user authorized in a browser and came back with a code: exchange it for a token, so
   * that the next connection is authorized.
   */
  async finishAuth(authorizationCode: string): Promise<void> {
    if (!this.authProvider) throw new UnauthorizedError('No auth provider')
    if ((await this.authorize(this.fetchWithHeaders(), authorizationCode)) !== 'AUTHORIZED')
      throw new UnauthorizedError('Failed to authorize')
  }

  /** Resume a stream from an event id: a GET with Last-Event-ID replays what came after it. */
  async resumeStream(lastEventId: string, options?: { onresumptiontoken?: (token: string) => void }): Promise<void> {
    await this.startOrAuthSse({ resumptionToken: lastEventId, onresumptiontoken: options?.onresumptiontoken })
  }

  /** End the session on the server with a DELETE (a server that does not allow it answers 405). */
  async terminateSession(): Promise<void> {
    if (!this._sessionId) return
    try {
      const { res, url } = await this.exchange('DELETE', await this.commonHeaders(), undefined)
      res.resume()
      const status = res.statusCode ?? 0
      if ((status < 200 || status > 299) && status !== 405)
        throw new StreamableHTTPError(
          status,
          `Failed to terminate session: ${unfollowedRedirect(res, url) ?? res.statusMessage ?? ''}`,
        )
      this._sessionId = undefined
    } catch (error) {
      this.onerror?.(asError(error))
      throw error
    }
  }

  private async commonHeaders(refused?: Readonly<Record<string, string>>): Promise<HeaderMap> {
    const headers: HeaderMap = { 'user-agent': 'node' }
    if (this.authProvider) {
      const tokens = await this.authProvider.tokens()
      if (tokens) headers.authorization = `Bearer ${tokens.access_token}`
    }
    if (this._sessionId) headers['mcp-session-id'] = this._sessionId
    if (this._protocolVersion) headers['mcp-protocol-version'] = this._protocolVersion
    for (const [name, value] of this.extraHeaders) headers[name] = value
    if (this.headerProvider) {
      const provided = await this.headerProvider(refused)
      for (const [name, value] of Object.entries(provided)) headers[name.toLowerCase()] = value
      sent.set(headers, provided)
    }
    return headers
  }

  /** One request to the endpoint, following redirects that stay within its origin. */
  private async exchange(
    method: string,
    headers: HeaderMap,
    body: string | undefined,
  ): Promise<{ res: IncomingMessage; url: URL }> {
    let url = this.url
    for (let followed = 0; ; followed++) {
      const res = await this.request(url, method, headers, body)
      const target = followed < MAX_REDIRECTS ? redirectWithinOrigin(res, url, method) : undefined
      if (target === undefined) return { res, url }
      res.resume()
      url = target
    }
  }

  private request(url: URL, method: string, headers: HeaderMap, body: string | undefined): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      if (this.aborted) return reject(abortError())
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body))
      const secure = url.protocol === 'https:'
      const send = secure ? httpsRequest : httpRequest
      const target = url === this.url ? this.target : urlToHttpOptions(url)
      const req = send({ ...target, method, headers, agent: secure ? httpsAgent : httpAgent })
      this.live.add(req)
      let answered = false
      // on, not once: a second error must not go unhandled.
      req.on('error', (cause) => {
        this.live.delete(req)
        if (answered) return
        answered = true
        reject(this.aborted ? abortError() : new TypeError('fetch failed', { cause }))
      })
      req.once('response', (res) => {
        answered = true
        res.once('close', () => this.live.delete(req))
        resolve(res)
      })
      req.end(body)
    })
  }

  /**
   * Read an event stream, handing each message on as it arrives. A stream the server drops before
   * the response is resumed with a GET carrying the last event id, when the server gave ids (or for
   * the server's own stream, which is always reopened).
   */
  private readStream(
    res: IncomingMessage,
    options: StreamOptions,
    reconnectable: boolean,
    requests: readonly RequestId[],
  ): void {
    const { onresumptiontoken, replayMessageId } = options
    let primed = false
    let receivedResponse = false
    const answered = new Set<RequestId>()
    let unreadable: string | undefined
    // Messages that arrive together are handed on one microtask apart, as a web stream reader
    // would: the client runs a notification's handler a microtask later, so a progress
    // notification must be handled before the response that follows it ends the request.
    const queue: JSONRPCMessage[] = []
    let draining = false
    const drain = async () => {
      draining = true
      while (queue.length > 0) {
        const next = queue.shift() as JSONRPCMessage
        try {
          this.onmessage?.(next)
        } catch (error) {
          this.onerror?.(asError(error))
        }
        // Also when nothing is queued yet: the next message may come in this same tick.
        await undefined
      }
      draining = false
    }
    const deliver = (message: JSONRPCMessage) => {
      queue.push(message)
      if (!draining) void drain()
    }
    let oversized = false
    const parser = new SseParser({
      maxBytes: this.maxMessageBytes,
      oversized: () => {
        // Resuming would replay the same event, so the stream is not resumed.
        oversized = true
        res.destroy()
        if (requests.length > 0 || replayMessageId !== undefined) this.dropOversized()
        else
          this.onerror?.(
            new Error(
              `Streamable HTTP error: the server's stream sent a message larger than the ${this.maxMessageBytes}-byte limit (the maxMessageBytes option), so the stream was closed`,
            ),
          )
      },
      retry: (ms) => {
        this.serverRetryMs = ms
      },
      event: ({ event, data, id }) => {
        if (id !== '') {
          primed = true
          try {
            onresumptiontoken?.(id)
          } catch (error) {
            // The caller's callback failing must not cut the rest of the chunk.
            this.onerror?.(asError(error))
          }
        }
        if (!data || event !== 'message') return
        let message: JSONRPCMessage
        try {
          message = parseJsonRpcMessage(JSON.parse(data))
        } catch (error) {
          unreadable = describeUnreadable(data, error)
          this.onerror?.(new Error(`Streamable HTTP error: the server sent an event that is ${unreadable}`))
          return
        }
        if ('id' in message && !('method' in message)) {
          if (message.id !== undefined) answered.add(message.id)
          if ('result' in message) {
            receivedResponse = true
            if (replayMessageId !== undefined) message.id = replayMessageId
          }
        }
        deliver(message)
      },
    })
    let done = false
    const finish = (error: Error | undefined) => {
      if (done) return
      done = true
      if (this.aborted || oversized) return
      if (error !== undefined) this.onerror?.(new Error(`SSE stream disconnected: ${error}`))
      if ((reconnectable || primed) && !receivedResponse) {
        this.scheduleReconnection({ resumptionToken: parser.lastEventId, onresumptiontoken, replayMessageId }, 0)
        return
      }
      // A request whose answer could not be read would otherwise wait for its timeout.
      if (unreadable !== undefined)
        for (const id of requests)
          if (!answered.has(id))
            deliver({
              jsonrpc: '2.0',
              id,
              error: {
                code: JsonRpcCode.InternalError,
                message: `Streamable HTTP error: the server's event stream ended without a response it could read: it sent ${unreadable}`,
              },
            })
    }
    res.on('data', (chunk: Buffer) => {
      try {
        parser.push(chunk)
      } catch (error) {
        // A handler that throws must not leave the stream half read.
        this.onerror?.(asError(error))
      }
    })
    res.once('end', () => finish(undefined))
    res.once('close', () => finish(new TypeError('terminated')))
    res.on('error', () => {}) // the close that follows reports it
  }

  /**
   * A message over the limit cannot be read, and the request it answered cannot be answered any
   * more: as with a stdio server, the connection is dropped, with an error that names the cause
   * first so that the client can tell its callers why.
   */
  private dropOversized(): void {
    this.onerror?.(
      new Error(
        `Streamable HTTP error: the server sent a message that exceeded maximum size of ${this.maxMessageBytes} bytes (the maxMessageBytes option)`,
      ),
    )
    this.close().catch(() => {})
  }

  private reconnectionDelay(attempt: number): number {
    if (this.serverRetryMs !== undefined) return this.serverRetryMs
    const { initialReconnectionDelay, reconnectionDelayGrowFactor, maxReconnectionDelay } = this.reconnection
    return Math.min(initialReconnectionDelay * reconnectionDelayGrowFactor ** attempt, maxReconnectionDelay)
  }

  private scheduleReconnection(options: StreamOptions, attempt: number): void {
    const { maxRetries } = this.reconnection
    if (attempt >= maxRetries) {
      this.onerror?.(new Error(`Maximum reconnection attempts (${maxRetries}) exceeded.`))
      return
    }
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined
      this.startOrAuthSse(options).catch((error) => {
        this.onerror?.(
          new Error(`Failed to reconnect SSE stream: ${error instanceof Error ? error.message : String(error)}`),
        )
        if (!this.aborted) this.scheduleReconnection(options, attempt + 1)
      })
    }, this.reconnectionDelay(attempt))
  }
}

function isInitializedNotification(message: JSONRPCMessage): boolean {
  return 'method' in message && message.method === 'notifications/initialized' && !('id' in message)
}

/** The messages of a JSON response body; a body that is not JSON-RPC throws an error that says so. */
function jsonMessages(text: string): JSONRPCMessage[] {
  let value: unknown
  let messages: JSONRPCMessage[]
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new StreamableHTTPError(-1, `the server's JSON response is ${describeUnreadable(text, error)}`)
  }
  try {
    messages = Array.isArray(value) ? value.map(parseJsonRpcMessage) : [parseJsonRpcMessage(value)]
  } catch (error) {
    throw new StreamableHTTPError(-1, `the server's JSON response is ${describeUnreadable(text, error)}`)
  }
  return messages
}

/** Why `text` is no message, quoting its start. */
function describeUnreadable(text: string, error: unknown): string {
  const quoted = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)
  return error instanceof SyntaxError ? `not JSON (${quoted})` : `not a JSON-RPC message (${quoted})`
}

function header(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/** The media type of a Content-Type value, lower-cased, without its parameters. */
function mediaType(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined
  const semicolon = contentType.indexOf(';')
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() || undefined
}

/** A body was longer than the limit; what had arrived of it is dropped. */
class OversizedError extends StreamableHTTPError {
  constructor(max: number) {
    super(-1, `the server sent a message larger than the ${max}-byte limit (the maxMessageBytes option)`)
  }
}

/**
 * The body of `res` as text; a connection lost mid-body fails it, and so does a body over `max`
 * bytes, whose response is destroyed as soon as it passes the limit rather than read to its end.
 */
function readText(res: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let bytes = 0
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > max) {
        chunks.length = 0
        reject(new OversizedError(max))
        res.destroy()
        return
      }
      chunks.push(chunk)
    })
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    res.once('close', () => reject(new TypeError('terminated')))
    res.on('error', () => {}) // the close that follows reports it
  })
}

/** Just what the SDK's WWW-Authenticate reader looks at. */
function authResponse(res: IncomingMessage): Response {
  const challenge = header(res, 'www-authenticate')
  return new Response(null, { status: 200, headers: challenge === undefined ? {} : { 'www-authenticate': challenge } })
}

function redirectTarget(res: IncomingMessage, from: URL): URL | undefined {
  const location = REDIRECTS.has(res.statusCode ?? 0) ? header(res, 'location') : undefined
  if (!location) return undefined
  try {
    return new URL(location, from)
  } catch {
    return undefined
  }
}

/** Where to follow a redirect that keeps the method and stays within the origin, as the SDK does. */
function redirectWithinOrigin(res: IncomingMessage, from: URL, method: string): URL | undefined {
  const target = redirectTarget(res, from)
  // 301, 302 and 303 turn a request with a body into a GET, so only 307 and 308 are followed for those.
  const keepsMethod = res.statusCode === 307 || res.statusCode === 308 || method === 'GET'
  if (target === undefined || !keepsMethod) return undefined
  const addsUserinfo =
    (target.username || target.password) && (target.username !== from.username || target.password !== from.password)
  if (addsUserinfo) return undefined
  const same = from.protocol === target.protocol && from.hostname === target.hostname && from.port === target.port
  const upgraded =
    from.hostname === target.hostname &&
    from.protocol === 'http:' &&
    from.port === '' &&
    target.protocol === 'https:' &&
    target.port === ''
  return same || upgraded ? target : undefined
}

/** The error text for a redirect that was not followed, naming its target without userinfo or query. */
function unfollowedRedirect(res: IncomingMessage, from: URL): string | undefined {
  const target = redirectTarget(res, from)
  if (target === undefined) return undefined
  target.username = ''
  target.password = ''
  target.search = ''
  target.hash = ''
  if (target.protocol === 'http:' && from.protocol === 'https:') {
    target.protocol = 'https:'
    return `Redirect to plain http not followed; try ${target.href} instead (redirectPolicy: 'same-origin')`
  }
  return `Redirect to ${target.href} not followed (redirectPolicy: 'same-origin')`
}

function abortError(): DOMException {
  return new DOMException('This operation was aborted', 'AbortError')
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

function takesScopeChallenges(provider: object): provider is ScopeChallengeTaker {
  return typeof (provider as Partial<ScopeChallengeTaker>)[SCOPE_CHALLENGE] === 'function'
}
