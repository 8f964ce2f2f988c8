// `toolgate serve --http`: the gateway as Streamable HTTP, one MCP session per client, each with its
// own server object, behind the HTTP guard (Host and Origin checks, auth, limits) and a drain on SIGTERM.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import {
  type JSONRPCMessage,
  JsonRpcCode,
  loadEventStore,
  loadFastPath,
  loadHttpServerTransport,
  loadStdioServerTransport,
  type McpServerHandle,
  type ModernHttpLeg,
} from '../mcp/gateway.js'
import { readBodyWithin } from '../util/read-body.js'
import { DEFAULT_DRAIN_TIMEOUT_SECONDS } from './drain-timeout.js'
import type { Gateway } from './gateway.js'
import type { Authenticator } from './http-auth.js'
import type { GuardedSession } from './http-guard.js'
import type { SharedBuckets } from './http-limits.js'
import type { Log, TextSink } from './log.js'
import { type RawHttpSession, type ReadBody, takeRawFirst } from './raw-first-record.js'
import type { ServeOps } from './serve-ops.js'
import type { SessionRegistry } from './serve-store.js'
import type { GatewaySettings } from './settings.js'

/** How a reload reaches the HTTP guard, which exists only once serveHttp runs. */
export interface HttpReload {
  pending?: { settings: GatewaySettings; authenticator: Authenticator | undefined }
  apply?: () => void
}

/** The SSE `retry` advertised to clients when the config does not set `http.retryMs`. */
export const DEFAULT_RETRY_MS = 1000

/** What `serve --http` announces once its port is open (scripts read the port from it). */
export function servingLine(host: string, port: number): string {
  const shown = host.includes(':') ? `[${host}]` : host
  return `serving MCP at http://${shown}:${port}/mcp`
}

/** One MCP session per client, each with its own server object, until a signal asks to stop. */
export async function serveHttp(
  make: () => McpServerHandle,
  port: number,
  settings: Pick<
    GatewaySettings,
    'access' | 'maxMessageBytes' | 'resume' | 'host' | 'trustProxy' | 'limits' | 'drainTimeout'
  >,
  authenticator: Authenticator | undefined,
  log: Log,
  io: { readonly stderr: TextSink },
  registry?: SessionRegistry,
  buckets?: SharedBuckets,
  ops?: ServeOps,
  gateway?: Pick<Gateway, 'ctx'>,
  reload?: HttpReload,
  modern?: (maxMessageBytes: number) => Promise<ModernHttpLeg>,
): Promise<void> {
  const [
    { createServer },
    { NodeStreamableHttpServerTransport },
    { isInitializeRequest },
    { loopbackAccessCheck },
    { DEFAULT_MAX_MESSAGE_BYTES },
    { BoundedEventStore },
    { HttpGuard, DEFAULT_HOST },
    { fastPathOf },
    drain,
    keepAlive,
  ] = await Promise.all([
    import('node:http'),
    loadHttpServerTransport(),
    import('@modelcontextprotocol/server'),
    import('../util/http-origin.js'),
    loadStdioServerTransport(),
    loadEventStore(),
    import('./http-guard.js'),
    loadFastPath(),
    import('./drain.js'),
    import('./http-keep-alive.js'),
  ])
  const maxBytes = settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  const host = settings.host ?? DEFAULT_HOST
  const guard = new HttpGuard(settings, authenticator, log, buckets)
  type Session = GuardedSession & {
    transport: InstanceType<typeof NodeStreamableHttpServerTransport>
    server: McpServerHandle
    events: InstanceType<typeof BoundedEventStore>
  }
  const sessions = new Map<string, Session>()
  // The 2026 leg, once a request of that era has made it.
  let opened: ModernHttpLeg | undefined
  // Until the port is known nothing is accepted; set right after listen().
  let refusal: ReturnType<typeof loopbackAccessCheck> = () => ({ header: 'host', message: 'not listening yet' })

  const handle = async (req: IncomingMessage, res: ServerResponse, read?: ReadBody) => {
    // Probes come by the pod's address, which the Host check refuses; they reveal nothing.
    if (ops?.health(req, res)) return
    const view = guard.view(req)
    // DNS rebinding and cross-site pages: checked before the body is read or a session is touched.
    const refused = refusal(guard.checkedHeaders(req, view))
    if (refused !== undefined) {
      log.debug(`refused an HTTP request from ${view.client}: ${refused.message}`)
      return rpcError(res, 403, JsonRpcCode.ServerError, `Forbidden: ${refused.message}`)
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (guard.serveMetadata(url.pathname, req, res)) return
    if (url.pathname === '/metrics' && ops?.onMainPort) {
      if ((await guard.authenticate(req, res, view)) !== false) await ops.metrics(req, res)
      return
    }
    if (url.pathname !== '/mcp') return reply(res, 404, 'not found: the MCP endpoint is /mcp')
    const identity = await guard.authenticate(req, res, view)
    if (identity === false) return
    const id = req.headers['mcp-session-id']
    let existing = typeof id === 'string' ? sessions.get(id) : undefined
    // Another identity's session is answered exactly like one that does not exist.
    if (existing !== undefined && !guard.owns(identity, existing)) {
      log.debug(`refused session ${String(id)} to another identity (${view.client})`)
      existing = undefined
    }
    let body: unknown
    if (req.method === 'POST') {
      // The first script may have read it already (see raw-first-http.ts).
      const text = read !== undefined ? read.text : await readBodyWithin(req, maxBytes)
      if (text === undefined) {
        // Not "connection: close": the body still coming is drained first (see readBodyWithin).
        return rpcError(
          res,
          413,
          JsonRpcCode.InvalidRequest,
          `Invalid Request: message too large: over the limit of ${maxBytes} bytes (raise it with --max-message-bytes)`,
        )
      }
      try {
        body = JSON.parse(text)
      } catch {
        return rpcError(res, 400, JsonRpcCode.ParseError, 'Parse error: the body is not JSON')
      }
    }
    if (!(await guard.admit(identity || undefined, body, res))) return
    // MCP 2026-07-28 has no session: its requests go to the leg of that era. A 2025 session's
    // request (or an initialize) is known for what it is without asking the SDK.
    if (modern !== undefined && !surelyLegacy(req, body)) {
      const leg = await modern(maxBytes)
      opened = leg
      if (await leg.isModern(req, body)) return leg.handle(req, res, body)
    }
    if (existing) {
      // A resume from an event the store no longer has (or never had) is refused here with the
      // reason; the SDK's own answer to it would not say why.
      const last = req.headers['last-event-id']
      if (req.method === 'GET' && typeof last === 'string' && last !== '' && existing.events.state(last) !== 'stored')
        return rpcError(res, 400, JsonRpcCode.ServerError, `Bad Request: ${existing.events.refusal(last)}`)
      guard.track(existing, res)
      return existing.transport.handleRequest(req, res, body)
    }
    if (id !== undefined)
      return rpcError(
        res,
        404,
        JsonRpcCode.SessionNotFound,
        registry && typeof id === 'string'
          ? await registry.unknown(id, identity ? identity.subject : undefined)
          : 'Session not found',
      )
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return rpcError(res, 400, JsonRpcCode.ServerError, 'Bad Request: no session; start with an initialize request')
    if (!(await guard.makeRoom(identity || undefined, sessions.values(), body, res))) return
    // Every stream of the session starts with a priming event and keeps its events, so a client
    // that loses one resumes it with Last-Event-ID after the advertised retry interval.
    const session = await openSession(
      identity ? identity.subject : undefined,
      `${identity ? ` by "${identity.subject}"` : ''} from ${view.client}`,
      new BoundedEventStore(settings.resume?.eventStore),
    )
    guard.track(session, res)
    await session.transport.handleRequest(req, res, body)
  }

  /** A session's server and transport, registered once its id is issued (`id` when it has one already). */
  const openSession = async (
    owner: string | undefined,
    from: string,
    events: InstanceType<typeof BoundedEventStore>,
    id?: string,
  ): Promise<Session> => {
    const server = make()
    const transport: Session['transport'] = new NodeStreamableHttpServerTransport({
      // 122 random bits from the CSPRNG: a session id cannot be guessed.
      sessionIdGenerator: id === undefined ? () => randomUUID() : () => id,
      eventStore: events,
      retryInterval: settings.resume?.retryMs ?? DEFAULT_RETRY_MS,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, session)
        log.debug(`session ${sessionId} opened${from}`)
        registry?.opened(sessionId, owner)
      },
    })
    const session: Session = {
      transport,
      server,
      events,
      owner,
      lastSeen: Date.now(),
      active: 0,
      close: () => transport.close(),
    }
    transport.onclose = () => {
      if (transport.sessionId !== undefined) {
        sessions.delete(transport.sessionId)
        registry?.closed(transport.sessionId, session.owner)
      }
      events.clear()
      void server.close()
    }
    await server.connect(transport)
    transport.fastPath = fastPathOf(server)
    return session
  }

  /**
   * The session serve's first script opened and answered: the same id and event ids here, its
   * messages given to the server (whose answers are dropped: the client has them), and a
   * `tools/list_changed` if the gateway lists other tools than it was told.
   */
  const adopt = async (raw: RawHttpSession) => {
    const events = new BoundedEventStore(settings.resume?.eventStore, undefined, raw.eventToken)
    for (const { streamId, message } of raw.events)
      await events.storeEvent(streamId, message as unknown as JSONRPCMessage)
    const session = await openSession(undefined, ' by the first listing', events, raw.id)
    await session.transport.adopt(raw.messages as unknown as JSONRPCMessage[], raw.streams, (request, answer) => {
      if (!('method' in request) || request.method !== 'tools/list' || raw.tools === undefined) return
      const result = (answer as { result?: { tools?: unknown } }).result
      if (JSON.stringify(result?.tools) !== raw.tools)
        void session.transport
          .send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
          .catch((error: unknown) => log.info(`session ${raw.id}: ${String(error)}`))
    })
  }

  // Requests in progress, so that a drain lets them finish; an open GET stream is not waited for.
  const inFlight = new drain.InFlight()
  const calls = gateway ? drain.cancellableCalls(gateway.ctx) : { cancelAll: () => {} }
  const serve = (req: IncomingMessage, res: ServerResponse, read?: ReadBody) => {
    ops?.count(req, res)
    if (drain.refuseWhileDraining(req, res)) return
    keepAlive.advertiseKeepAlive(res)
    if (req.method === 'POST') res.once('close', inFlight.begin())
    handle(req, res, read).catch((error) => {
      log.info(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`)
      if (!res.headersSent) rpcError(res, 500, JsonRpcCode.InternalError, 'Internal error')
      else res.end()
    })
  }
  // The port serve's first script opened and announced, when it did (raw-first-http.ts).
  const handed = takeRawFirst().http
  let http: Server
  let actual: number
  if (handed !== undefined) {
    http = handed.server
    actual = handed.port
  } else {
    http = createServer((req, res) => serve(req, res))
    // Idle connections are the client's to close: closing them here races the client's next request.
    keepAlive.holdIdleConnections(http)
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject)
      http.listen(port, host, () => resolve())
    })
    const address = http.address()
    actual = typeof address === 'object' && address ? address.port : port
  }
  refusal = loopbackAccessCheck(actual, guard.access(settings.access, host, actual))
  if (reload !== undefined) {
    // A reloaded config's tokens and limits judge the requests from now on (an OAuth resource's host included).
    reload.apply = () => {
      const next = reload.pending
      if (next === undefined) return
      reload.pending = undefined
      guard.reconfigure(next.settings, next.authenticator)
      refusal = loopbackAccessCheck(actual, guard.access(settings.access, host, actual))
    }
    reload.apply()
  }
  if (handed === undefined) {
    const serving = servingLine(host, actual)
    // Written whatever --log-level says: scripts read the port from it.
    if (log.format === 'json') log.info(serving)
    else io.stderr.write(`toolgate: ${serving}\n`)
  } else {
    // Announced by the first script already; what it answered is the gateway's from now on.
    if (handed.session !== undefined)
      await adopt(handed.session).catch((error: unknown) =>
        log.info(`the first listing's session could not be taken over: ${String(error)}`),
      )
    ops?.countSent(handed.statuses)
    handed.take(serve)
  }
  // Sessions nobody has used for the idle limit are closed (one with a request or stream open is in use).
  const sweeper = setInterval(() => void guard.sweep(sessions.values()), guard.sweepEvery())
  sweeper.unref()
  await drain.untilStopped({
    inFlight,
    calls,
    timeoutMs: (settings.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT_SECONDS) * 1000,
    log,
  })
  clearInterval(sweeper)
  for (const session of sessions.values()) await session.transport.close().catch(() => {})
  await opened?.close().catch(() => {})
  const closed = new Promise<void>((resolve) => http.close(() => resolve()))
  http.closeAllConnections()
  await closed
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' }).end(`${text}\n`)
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}

/** The revisions before 2026-07-28, each negotiated by `initialize` and carried by a session. */
const LEGACY_REVISIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])

/**
 * True when the SDK would route this request to the 2025 era for certain: anything but a POST, or a
 * POST of a session (or an initialize) that claims no 2026 envelope, names no newer revision and
 * has no Mcp-Method header. Anything else is for the SDK to classify (isLegacyRequest).
 */
export function surelyLegacy(req: IncomingMessage, body: unknown): boolean {
  if (req.method !== 'POST') return true
  if (req.headers['mcp-method'] !== undefined) return false
  const version = req.headers['mcp-protocol-version']
  if (version !== undefined && !(typeof version === 'string' && LEGACY_REVISIONS.has(version))) return false
  if (typeof body !== 'object' || body === null || Array.isArray(body) || claimsEnvelope(body)) return false
  return req.headers['mcp-session-id'] !== undefined || (body as { method?: unknown }).method === 'initialize'
}

/** Whether a message's `params._meta` carries a key of the protocol's reserved namespace. */
function claimsEnvelope(message: object): boolean {
  const meta = (message as { params?: { _meta?: unknown } }).params?._meta
  if (typeof meta !== 'object' || meta === null) return false
  for (const key in meta) if (key.startsWith('io.modelcontextprotocol/')) return true
  return false
}
