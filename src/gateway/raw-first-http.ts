// `toolgate serve --http`'s first listing, before the CLI's bundle and the MCP SDK are loaded: in the
// common case (a loopback address without auth, stdio upstreams all spawned early, at most the
// gateway's own file tools), the executable's first script opens the port at once and announces it,
// runs every upstream's handshake and `tools/list` as plain JSON-RPC (raw-first-listing.ts), and
// answers the first 2025-11-25 client's `initialize`, `notifications/initialized` and `tools/list`
// on the wire exactly as the gateway's session would (the same SSE frames, headers and event ids).
// Any other request (another path or method, another session or version, a 2026 request, a health
// probe) is held unanswered and ends it; so do a failed listing and a quiet spell once the tools are
// known. What it hands on (raw-first-record.ts): the listening server with the requests it held,
// and the session it answered, which the gateway adopts under the same id and event ids.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  declaredCapabilities,
  fastRequest,
  MODERN_REVISION,
  modernTools,
  plainDiscover,
  type ServerCapabilities,
  stamped,
  type Tool,
} from '../mcp/gateway.js'
import { loopbackAccessCheck } from '../util/http-origin.js'
import { isRecord } from '../util/is-record.js'
import { readBodyWithin } from '../util/read-body.js'
import { DRAIN_FORCED_EXIT_CODE } from './drain-timeout.js'
import { holdTerminationEarly } from './early-hangup.js'
import { advertiseKeepAlive, holdIdleConnections } from './http-keep-alive.js'
import type { Log } from './log.js'
import { CLIENT_INFO, type ListingSettings, REVISION, upstreamListing } from './raw-first-listing.js'
import {
  type RawHttpHandler,
  type RawHttpHandover,
  type RawHttpSession,
  type ReadBody,
  rawFirstRecord,
} from './raw-first-record.js'
import { DEFAULT_RETRY_MS, servingLine } from './serve-http.js'
import type { GatewaySettings } from './settings.js'

/** How long the port may wait for the upstreams' listing before the gateway is loaded to do it (as over stdio). */
const DEADLINE_MS = 10_000
/**
 * Once the tools are known, how long a quiet port waits for a client's next request before the
 * gateway loads: a client seldom comes exactly when the port opens, and one that comes later is
 * served by the gateway as before.
 */
const QUIET_MS = 250

/**
 * What the gateway declares to its upstreams over HTTP: every capability its relay answers (it has
 * many clients, so none is narrowed to one client's; see gateway.ts), as the SDK client sends it.
 */
const standIn = async () => ({}) as never
const UPSTREAM_INITIALIZE = {
  protocolVersion: REVISION,
  capabilities: declaredCapabilities({
    elicitation: standIn,
    urlElicitation: standIn,
    sampling: standIn,
    roots: standIn,
  }),
  clientInfo: CLIENT_INFO,
}

export type HttpListingSettings = ListingSettings & Pick<GatewaySettings, 'access' | 'trustProxy' | 'resume'>

/** The session being answered, as it grows. */
type OpenSession = { -readonly [K in keyof RawHttpSession]: RawHttpSession[K] } & {
  events: { streamId: string; message: Record<string, unknown> }[]
  messages: Record<string, unknown>[]
}

/** A request the first script leaves to the gateway, with its body when it read it. */
interface Held {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly body?: ReadBody
}

/** A request waiting for what the upstreams have not answered yet. */
interface Waiting {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly body: ReadBody
  readonly message: Record<string, unknown> & { id: string | number }
}

/**
 * Open the port of `serve --http` and answer its first client's listing here when the config
 * allows it; resolves once that is done or given up (the CLI's bundle loads then), the port open
 * or left to the gateway. Undefined when it does not apply. `note` is told which way it went.
 */
export function listenBeforeLoad(
  settings: HttpListingSettings,
  host: string,
  serverInfo: { name: string; version: string },
  log: Log,
  note: (outcome: string) => void = () => {},
): Promise<void> | undefined {
  const port = settings.http
  if (port === undefined) return undefined
  // Behind a proxy the Host check reads forwarded headers: the gateway's own guard handles those.
  if (settings.trustProxy !== undefined) return void note('not tried: behind a proxy (--trust-proxy)')
  const retryMs = settings.resume?.retryMs ?? DEFAULT_RETRY_MS
  const maxBytes = settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  let done = false
  let capabilities: ServerCapabilities | undefined
  let tools: Tool[] | undefined
  const listing = upstreamListing(settings, 'http', {
    ended: () => done,
    declared(declared) {
      capabilities = declared
      answer()
    },
    listed(listed) {
      tools = listed
      answer()
    },
    failed: (why) => finish(why),
  })
  if ('reason' in listing) return void note(`not tried: ${listing.reason}`)
  listing.initialize(UPSTREAM_INITIALIZE)

  const record = rawFirstRecord()
  const held: Held[] = []
  const statuses: number[] = []
  let handler: RawHttpHandler | undefined
  let refusal: ReturnType<typeof loopbackAccessCheck> | undefined
  let session: OpenSession | undefined
  let initializing: Waiting | undefined
  let listingAsked: Waiting | undefined
  /** 2026-07-28 requests waiting for what the upstreams have not answered yet, in order. */
  const waiting26: Waiting[] = []
  let initializedSeen = false
  let eventSeq = 0
  let resolveDone = () => {}
  const finished = new Promise<void>((resolve) => {
    resolveDone = resolve
  })

  const hold = (req: IncomingMessage, res: ServerResponse, body?: ReadBody) => {
    if (handler !== undefined) handler(req, res, body)
    else held.push(body === undefined ? { req, res } : { req, res, body })
  }

  const server = createServer((req, res) => {
    if (done || refusal === undefined) return hold(req, res)
    take(req, res, refusal).catch(() => {
      // A request it could not read to the end (the client went) is the gateway's to see fail.
      if (!res.headersSent) hold(req, res)
    })
  })
  holdIdleConnections(server)

  /** One request while the first listing runs: answered here, waiting for the upstreams, or held. */
  async function take(req: IncomingMessage, res: ServerResponse, refused: NonNullable<typeof refusal>): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    // The session's standalone stream, which a client opens once initialized, in parallel with its
    // listing: it waits for the gateway, and the listing goes on.
    if (standaloneStream(req, path, session?.id) && refused(req.headers) === undefined) return hold(req, res)
    if (req.method !== 'POST' || path !== '/mcp' || refused(req.headers) !== undefined || !acceptable(req))
      return leave(req, res, undefined, `a request it does not answer first (${req.method} ${path.slice(0, 40)})`)
    const body: ReadBody = { text: await readBodyWithin(req, maxBytes) }
    if (done) return hold(req, res, body)
    let message: unknown
    try {
      message = body.text === undefined ? undefined : JSON.parse(body.text)
    } catch {
      message = undefined
    }
    if (!isRecord(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string')
      return leave(req, res, body, 'a body that is not one JSON-RPC message')
    const id = message.id
    const sessionId = req.headers['mcp-session-id']
    const version = req.headers['mcp-protocol-version']
    if (version === MODERN_REVISION && sessionId === undefined) return modern(req, res, body, message)
    if (req.headers['mcp-method'] !== undefined || (version !== undefined && version !== REVISION))
      return leave(req, res, body, 'another protocol version')
    const method = JSON.stringify(message.method.slice(0, 40))
    if (sessionId === undefined) {
      if (session !== undefined || initializing !== undefined || !isInitialize(message))
        return leave(req, res, body, `a request it does not answer first (${method})`)
      initializing = { req, res, body, message: message as Waiting['message'] }
      return answer()
    }
    if (session === undefined || sessionId !== session.id)
      return leave(req, res, body, 'a request of a session it did not open')
    if (message.method === 'notifications/initialized' && !('id' in message) && !initializedSeen) {
      initializedSeen = true
      session.messages.push(message)
      advertiseKeepAlive(res)
      res.writeHead(202).end()
      statuses.push(202)
      return quietly()
    }
    const params = message.params
    if (
      message.method === 'tools/list' &&
      listingAsked === undefined &&
      (typeof id === 'string' || typeof id === 'number') &&
      (params === undefined || (isRecord(params) && Object.keys(params).length === 0))
    ) {
      listingAsked = { req, res, body, message: message as Waiting['message'] }
      return answer()
    }
    leave(req, res, body, `a request it does not answer first (${method})`)
  }

  /**
   * A 2026-07-28 request: the era has no session, so each plain `server/discover` and `tools/list`
   * is answered as the gateway's 2026 leg answers it (its fast path's checks and stamps); the first
   * listing ends with the first `tools/list`. Anything else of the era is the gateway's.
   */
  function modern(req: IncomingMessage, res: ServerResponse, body: ReadBody, message: Record<string, unknown>): void {
    if (plainDiscover(req, message) !== undefined || fastRequest(req, message)?.method === 'tools/list') {
      waiting26.push({ req, res, body, message: message as Waiting['message'] })
      answer()
      return
    }
    const method = JSON.stringify(String(message.method).slice(0, 40))
    leave(req, res, body, `a 2026-07-28 request it does not answer first (${method})`)
  }

  /** Answer the 2026 requests waiting that can be answered now, in order. */
  function answerModern(): void {
    while (waiting26.length > 0 && !done) {
      const next = waiting26[0] as Waiting
      const discover = next.message.method === 'server/discover'
      if (discover ? capabilities === undefined : tools === undefined) return
      waiting26.shift()
      if (discover) {
        const declared = modernCapabilities(capabilities as ServerCapabilities)
        respondJson(
          next.res,
          next.message.id,
          stamped({ supportedVersions: [MODERN_REVISION], capabilities: declared }, serverInfo, CACHE_HINTS),
        )
        continue
      }
      const listed = modernTools(tools)
      // A tool whose `execution` says more than the era keeps is the SDK's serving to list.
      if (listed === undefined) {
        leave(next.req, next.res, next.body, 'a tool the 2026 era lists otherwise')
        return
      }
      respondJson(next.res, next.message.id, stamped({ tools: listed }, serverInfo, CACHE_HINTS))
      finish(`answered (${listed.length} tools, 2026-07-28)`)
      return
    }
  }

  /** A 2026 answer as the gateway's leg writes it: one JSON body. */
  function respondJson(res: ServerResponse, id: string | number, result: Record<string, unknown>): void {
    advertiseKeepAlive(res)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result, jsonrpc: '2.0', id }))
    statuses.push(200)
  }

  /** Answer what is waiting and can be answered now. */
  function answer(): void {
    if (done) return
    answerModern()
    if (done) return
    if (initializing !== undefined && capabilities !== undefined) {
      const { res, message } = initializing
      initializing = undefined
      const token = Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString('base64url')
      session = {
        // 122 random bits from the CSPRNG, as the gateway's own sessions.
        id: crypto.randomUUID(),
        eventToken: token,
        events: [],
        streams: 0,
        messages: [message],
      }
      respond(res, message.id, { protocolVersion: REVISION, capabilities, serverInfo: { ...serverInfo } })
    }
    if (listingAsked !== undefined && tools !== undefined && session !== undefined) {
      const { res, message } = listingAsked
      listingAsked = undefined
      session.messages.push(message)
      respond(res, message.id, { tools })
      session.tools = JSON.stringify(tools)
      finish(`answered (${tools.length} tools)`)
      return
    }
    quietly()
  }

  /** A request's answer as the session's transport writes it: a stream with its priming event, then the answer. */
  function respond(res: ServerResponse, id: string | number, result: Record<string, unknown>): void {
    const open = session as NonNullable<typeof session>
    const streamId = String(++open.streams)
    // In the order the SDK's server writes an answer's keys.
    const message = { result, jsonrpc: '2.0', id }
    const priming = `${open.eventToken}.${++eventSeq}`
    open.events.push({ streamId, message: {} })
    const answered = `${open.eventToken}.${++eventSeq}`
    open.events.push({ streamId, message })
    advertiseKeepAlive(res)
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'mcp-session-id': open.id,
    })
    res.write(`id: ${priming}\nretry: ${retryMs}\ndata: \n\n`)
    res.end(`event: message\nid: ${answered}\ndata: ${JSON.stringify(message)}\n\n`)
    statuses.push(200)
  }

  /** Leave this request to the gateway, and end the first listing. */
  function leave(req: IncomingMessage, res: ServerResponse, body: ReadBody | undefined, why: string): void {
    hold(req, res, body)
    finish(why)
  }

  let quiet: ReturnType<typeof setTimeout> | undefined
  /** Once the tools are known, a quiet spell ends the first listing (see QUIET_MS). */
  function quietly(): void {
    if (done || tools === undefined || initializing !== undefined || listingAsked !== undefined) return
    if (waiting26.length > 0) return
    clearTimeout(quiet)
    quiet = setTimeout(() => finish(`no request within ${QUIET_MS} ms of the last`), QUIET_MS)
  }

  let listening: Promise<boolean> | undefined
  function finish(why: string): void {
    if (done) return
    done = true
    clearTimeout(deadline)
    clearTimeout(quiet)
    // What still waits for the upstreams is the gateway's to answer.
    for (const waiting of [initializing, listingAsked, ...waiting26.splice(0)])
      if (waiting !== undefined) hold(waiting.req, waiting.res, waiting.body)
    initializing = undefined
    listingAsked = undefined
    note(`${why.startsWith('answered') ? why : `left to the gateway: ${why}`}, at ${Math.round(performance.now())} ms`)
    void (listening ?? Promise.resolve(false)).then(resolveDone)
  }

  const handover: RawHttpHandover = {
    server,
    get port() {
      const address = server.address()
      return typeof address === 'object' && address !== null ? address.port : port
    },
    get session() {
      return session
    },
    statuses,
    take(next) {
      handler = next
      for (const { req, res, body } of held.splice(0)) next(req, res, body)
    },
    async close() {
      handler = (_req, res) => {
        if (!res.headersSent) res.writeHead(503, { 'content-type': 'text/plain' }).end('the gateway did not start\n')
      }
      for (const { req, res, body } of held.splice(0)) handler(req, res, body)
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closed
    },
  }

  const deadline = setTimeout(() => finish(`no listing within ${DEADLINE_MS} ms`), DEADLINE_MS)
  listening = new Promise<boolean>((resolve) => {
    server.once('error', () => {
      // The gateway listens itself, and reports what stops it.
      finish('the port could not be opened here')
      resolve(false)
    })
    server.listen(port, host, () => {
      const opened = handover.port
      refusal = loopbackAccessCheck(opened, settings.access)
      record.http = handover
      // Announced, it is serving: a SIGTERM from now on asks for the drain (see early-hangup.ts).
      holdTerminationEarly(DRAIN_FORCED_EXIT_CODE)
      // Written whatever --log-level says: scripts read the port from it.
      const serving = servingLine(host, opened)
      if (log.format === 'json') log.info(serving)
      else process.stderr.write(`toolgate: ${serving}\n`)
      resolve(true)
    })
  })
  return finished
}

/** The SDK's default cache hint for a 2026 answer: not to be kept, and private to this caller. */
const CACHE_HINTS = { ttlMs: 0, cacheScope: 'private' }

/**
 * What the gateway's 2026 leg declares, from what its 2025 sessions declare: tasks are an extension
 * of that era, and resource subscriptions are `subscriptions/listen`, answered by the SDK.
 */
function modernCapabilities(legacy: ServerCapabilities): ServerCapabilities {
  const { tasks: _tasks, ...rest } = legacy
  return rest.resources === undefined ? rest : { ...rest, resources: { ...rest.resources, subscribe: false } }
}

/** Whether a POST's headers are the ones its session's transport takes (both media types accepted, a JSON body). */
function acceptable(req: IncomingMessage): boolean {
  const accept = req.headers.accept
  const type = req.headers['content-type']
  return (
    accept?.includes('application/json') === true &&
    accept.includes('text/event-stream') &&
    type !== undefined &&
    /^application\/json\s*(;|$)/i.test(type)
  )
}

/** A GET of the session's standalone SSE stream (not a resume): the gateway opens it once it takes the session. */
function standaloneStream(req: IncomingMessage, path: string, sessionId: string | undefined): boolean {
  const { headers } = req
  return (
    req.method === 'GET' &&
    path === '/mcp' &&
    sessionId !== undefined &&
    headers['mcp-session-id'] === sessionId &&
    headers['last-event-id'] === undefined &&
    headers.accept?.includes('text/event-stream') === true &&
    (headers['mcp-protocol-version'] === undefined || headers['mcp-protocol-version'] === REVISION)
  )
}

/** A 2025-11-25 `initialize` the gateway would take as it is, claiming no 2026 envelope. */
function isInitialize(message: Record<string, unknown>): boolean {
  const { id, params } = message
  if (message.method !== 'initialize' || (typeof id !== 'string' && typeof id !== 'number')) return false
  if (!isRecord(params) || params.protocolVersion !== REVISION || !isRecord(params.capabilities)) return false
  if (isRecord(params._meta) && Object.keys(params._meta).some((key) => key.startsWith('io.modelcontextprotocol/')))
    return false
  const info = params.clientInfo
  return isRecord(info) && typeof info.name === 'string' && typeof info.version === 'string'
}
