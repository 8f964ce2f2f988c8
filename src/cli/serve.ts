// `toolgate serve`: the gateway as an MCP server, over stdio or Streamable HTTP on 127.0.0.1.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  type Authenticator,
  configPathOf,
  createLog,
  type Gateway,
  type GatewaySettings,
  type GatewayStartup,
  type GuardedSession,
  type Log,
  loadDrain,
  loadGateway,
  loadHttpGuard,
  loadMemoryStanding,
  loadServeOps,
  loadServeStore,
  loadStartupGate,
  readSettings,
  reloadOnHangup,
  SERVE_FLAGS,
  type ServeOps,
  type SessionRegistry,
  type SharedBuckets,
  type StartupGate,
  spawnUpstreamsEarly,
  type UpstreamReport,
} from '../gateway/index.js'
import { identityOf } from '../mcp/identity.js'
import type { LineStdioServerTransport } from '../mcp/stdio-transport.js'
import { readBodyWithin } from '../util/read-body.js'
import type { CliCommand, CliIo } from './command.js'
import { VERSION } from './version.js'

const usage = `Usage: toolgate serve [--root DIR] [--bash] [--mode native|code|both] [--config FILE] [--http PORT]
                     [--host ADDR] [--trust-proxy ADDR,...] [--allow-host HOST]... [--allow-origin ORIGIN]...
                     [--max-message-bytes N] [--store URL] [--metrics-port N] [--drain-timeout SECONDS]
                     [--log-format text|json] [--log-level debug|info|warn|error] [--vault-key-file FILE]
                     [--verbose]
       toolgate serve --check [--config FILE] [--root DIR] [--bash] [--mode native|code|both]

Serves toolgate's file tools (read_file, write_file, edit_file, glob, grep, list_dir) rooted in
--root (default: the current directory), bash with --bash, and the tools of every upstream MCP
server in the config file, through the config's policy. With "files": false in the config it
serves no file tools: only the upstreams' tools (and bash with --bash, still run in --root), a
pure gateway. Over stdio by default; with --http PORT as Streamable HTTP at
http://127.0.0.1:PORT/mcp (PORT 0 picks a free port, logged on stderr).

Each server's tools are named "<name>__<tool>", or with the server's "prefix" in front ("" for
none). Two servers (or a server and the gateway) serving the same tool name stop the gateway
before it serves. An upstream server that fails to start, or dies, is logged on stderr by its
config name, its tools are left out (clients get list_changed), and it is retried with backoff
(1 s doubling to 60 s, jittered; the config's "reconnect" sets both) while the others serve.

  --root DIR      workspace the file tools (and bash) are confined to; refused when neither is served
  --bash          also serve the bash tool
  --mode MODE     native (each tool), code (one run_code tool with a typed SDK) or both
  --config FILE   JSON: { root?, files?, bash?, mode?, servers?, policy?, http?, reconnect?,
                  maxMessageBytes?, auth?, limits?, journal?, store?, deferAbove?, metrics? }; flags override it
                  ("files": false serves no file tools; "journal": the audit journal, every call
                  with who made it)
  --check         start every upstream server once, print each one's state on stdout
                  ("connected, N tools, MCP REVISION" or "down: reason", and any tool not
                  served), and exit: 0 when every server is connected and every tool served,
                  1 otherwise
  --http PORT     serve Streamable HTTP on 127.0.0.1:PORT instead of stdio
  --host ADDR     with --http, bind ADDR instead of 127.0.0.1; anything but a loopback address needs
                  "auth" in the config (bearer tokens or an OAuth issuer), or the gateway refuses to start
  --trust-proxy ADDR,...
                  with --http, believe X-Forwarded-For, -Proto and -Host only from these proxy addresses
  --allow-host HOST
                  with --http, also accept this Host (NAME for any port, or NAME:PORT); by default
                  only 127.0.0.1, localhost and [::1] with the bound port are accepted (repeatable)
  --allow-origin ORIGIN
                  with --http, also accept requests from this Origin (e.g. https://app.example);
                  by default only no Origin or a loopback origin with the bound port (repeatable)
  --max-message-bytes N
                  largest JSON-RPC message read from the client (a stdio line or an HTTP body)
                  or an upstream stdio server (default 10485760, 10 MiB); a larger request
                  gets an error response
  --store URL     keep the journal and shared state in PostgreSQL (postgres://…; or the config's
                  "store"): several instances serving one database share them, standing
                  approvals ("always") and rate-limit buckets included. Each MCP session
                  stays on the instance that opened it (route sticky on Mcp-Session-Id); another
                  instance answers 404 naming it, and the client starts a new session
  --metrics-port N
                  with --http, serve GET /metrics (Prometheus) on port N of the same address, without a
                  token, instead of on the MCP port behind its Host check and "auth"
  --drain-timeout SECONDS
                  with --http, on SIGTERM: new MCP requests get 503 with Retry-After, calls in
                  flight get this long to finish (default 30), then are cancelled (and journaled
                  so); then the upstreams and the store close and the process exits 0. A second
                  SIGTERM exits at once (143). Ctrl-C (SIGINT) stops at once
  --vault-key-file FILE
                  the 32-byte key (raw, hex or base64) of the per-caller credential vault, for servers
                  with "auth": { "perUser": ... } (default: $TOOLGATE_VAULT_KEY_FILE)
  --log-format FORMAT
                  text (default: "toolgate: message" lines) or json (one object per line:
                  time, level, msg, and callId, tool, subject where known; every call at info)
  --log-level LEVEL
                  debug, info (default), warn or error; arguments and tokens are never logged
  --verbose       log every call on stderr (same as --log-level debug)

SIGHUP re-reads the config file: policy, rules, auth, limits, deferAbove and servers change for
new calls (calls in flight finish under the old config; only changed servers reconnect); a config
that does not validate is refused, logged with its path, and the old one serves on.

With --http, GET /healthz answers 200 while the gateway serves, and GET /readyz 200 once the store
(if any) answers and every server marked "required": true is connected, else 503; neither needs a token.
`

/** What the gateway calls itself to its clients. */
const SERVER_INFO = { name: 'toolgate', version: VERSION } as const

const serve: CliCommand = {
  summary: 'Serve tools (and aggregated MCP servers) as an MCP server',
  usage,
  async run(argv, io) {
    const settings = await readSettings(argv, SERVE_FLAGS)
    // A gateway others can reach must know who is calling: refused before anything starts. Over
    // stdio nothing of HTTP (nor its token verification) is loaded.
    const exposure = settings.http === undefined ? undefined : await loadHttpGuard()
    let authenticator = exposure?.checkExposure(settings)
    const discardEarly = spawnUpstreamsEarly(settings)
    const log = createLog(io.stderr, settings.verbose, { format: settings.logFormat, level: settings.logLevel })
    // The runtime and the MCP SDK load only once the flags and the config are known to be good.
    const [{ openGateway, refuseCollisions, perSession }, { createMcpServer }, early] = await Promise.all([
      loadGateway(),
      import('../mcp/server.js'),
      // Over stdio the client is read while the upstreams start.
      settings.http === undefined && !settings.check ? openStdio(settings, log) : undefined,
    ])
    const failed = async (error: unknown): Promise<never> => {
      await early?.gate.close()
      throw error
    }
    const gateway = await openGateway(settings, log, early?.startup).finally(discardEarly).catch(failed)
    if (settings.check) {
      try {
        return printCheck(gateway.upstreams(), io)
      } finally {
        await gateway.close()
      }
    }
    await refuseCollisions(gateway).catch(failed)
    if (settings.verbose || settings.logLevel === 'debug' || settings.logFormat === 'json')
      (await import('./log-calls.js')).logCalls(gateway, log)
    if (settings.http !== undefined) (await loadHttpGuard()).installUpstreamCap(gateway, settings)
    const shared = settings.store
      ? await (await loadServeStore()).attachStore(gateway, settings.store, log).catch(async (error) => {
          await gateway.close()
          return failed(error)
        })
      : undefined
    // Without a shared store, "always" answers are kept by agent id beside the bounded identity scopes.
    if (shared === undefined)
      gateway.agent.ctx.tools.host.installStandingStore((await loadMemoryStanding()).memoryStandingApprovals())
    const ops =
      settings.http === undefined
        ? undefined
        : await (await loadServeOps()).openServeOps(gateway, settings, shared?.store, log, io)
    // SIGHUP re-reads the config; the HTTP guard takes its tokens and limits once it exists.
    const http: HttpReload = {}
    const reloader = reloadOnHangup({
      current: settings,
      read: () => readSettings(argv, SERVE_FLAGS),
      gateway,
      log,
      configPath: configPathOf(argv),
      ...(ops ? { count: (result: 'ok' | 'refused') => ops.countReload(result) } : {}),
      ...(exposure === undefined
        ? {}
        : {
            prepare: (next: GatewaySettings) => {
              const auth = exposure.checkExposure(next)
              return () => {
                authenticator = auth
                ops?.reconfigure(next)
                http.pending = { settings: next, authenticator: auth }
                http.apply?.()
              }
            },
          }),
    })
    const make = perSession(
      () => gateway.deferring,
      gateway.agent,
      (agent) => {
        const server = createMcpServer(gateway.agent.ctx, {
          agent,
          // An authenticated caller is served its identity's scope; anyone else the session's. With
          // `auth`, a request without a readable identity is an error, never the unrestricted scope.
          agentFor: (authInfo) => {
            const identity = identityOf(authInfo)
            if (identity !== undefined) return gateway.identities.agentFor(identity)
            if (authenticator !== undefined) throw new Error('the request carries no authenticated identity')
            return agent
          },
          ...SERVER_INFO,
          logging: gateway.logging,
          catalog: gateway.catalog(),
          clients: gateway.clients,
          ...(shared?.keeper === undefined ? {} : { keeper: shared.keeper }),
        })
        return shared ? shared.acknowledging(server) : server
      },
    )
    try {
      if (settings.http !== undefined)
        await serveHttp(
          make,
          settings.http,
          settings,
          authenticator,
          log,
          io,
          shared?.sessions,
          shared?.buckets,
          ops,
          gateway,
          http,
        )
      else if (early !== undefined) await serveStdio(make, early, log)
      return 0
    } finally {
      reloader.stop()
      await ops?.close()
      await gateway.close()
      await shared?.close()
    }
  },
}

/**
 * `serve --check`: one line per upstream, with the protocol revision it speaks (and one per tool it
 * does not serve); 1 when anything is wrong.
 */
function printCheck(upstreams: readonly UpstreamReport[], io: CliIo): number {
  if (upstreams.length === 0) io.stdout.write('no upstream servers in the config\n')
  for (const upstream of upstreams) {
    const count = `${upstream.tools.length} tool${upstream.tools.length === 1 ? '' : 's'}`
    io.stdout.write(
      upstream.status === 'connected'
        ? `servers.${upstream.name}: connected, ${count}${upstream.protocolVersion === undefined ? '' : `, MCP ${upstream.protocolVersion}`}\n`
        : `servers.${upstream.name}: down: ${upstream.error ?? 'unknown'}\n`,
    )
    for (const line of upstream.skipped) io.stdout.write(`  ${line}\n`)
  }
  return upstreams.every((u) => u.status === 'connected' && u.skipped.length === 0) ? 0 : 1
}

/** The stdio transport, read from now on through the startup gate (see startup-gate.ts). */
async function openStdio(settings: GatewaySettings, log: Log): Promise<StdioStart> {
  const [{ LineStdioServerTransport }, { StartupGate, declareWhenKnown }] = await Promise.all([
    import('../mcp/stdio-transport.js'),
    loadStartupGate(),
  ])
  const transport = new LineStdioServerTransport({
    maxMessageBytes: settings.maxMessageBytes,
    limitName: '--max-message-bytes',
  })
  // What the transport refused (an oversized or malformed message) is answered to the client; the log says so too.
  const gate = new StartupGate(transport, { serverInfo: SERVER_INFO }, (error) => log.info(error.message))
  const startup = declareWhenKnown(gate, Object.keys(settings.servers))
  await gate.open()
  return { transport, gate, startup }
}

interface StdioStart {
  readonly transport: LineStdioServerTransport
  readonly gate: StartupGate
  readonly startup: GatewayStartup
}

/**
 * Until the client closes stdin (or a signal asks to stop). Any other end of the transport (a
 * failed read or write) is an error, so the process exits non-zero with the reason.
 */
async function serveStdio(make: () => Server, { transport, gate }: StdioStart, log: Log): Promise<void> {
  const { fastPathOf } = await import('../mcp/fast-path.js')
  // A client that left while the upstreams started is not served.
  if (!gate.clientGone) {
    const server = make()
    const done = new Promise<void>((resolve) => {
      const onclose = server.onclose
      server.onclose = () => {
        onclose?.()
        resolve()
      }
    })
    server.onerror = (error) => log.info(error.message)
    await server.connect(gate)
    transport.fastPath = fastPathOf(server)
    const stop = () => void server.close()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    log.debug('serving MCP over stdio')
    await done
  }
  if (transport.endReason !== undefined) throw new Error(`the stdio transport ended: ${transport.endReason.message}`)
}

/** How a reload reaches the HTTP guard, which exists only once serveHttp runs. */
interface HttpReload {
  pending?: { settings: GatewaySettings; authenticator: Authenticator | undefined }
  apply?: () => void
}

/** The SSE `retry` advertised to clients when the config does not set `http.retryMs`. */
const DEFAULT_RETRY_MS = 1000

/** One MCP session per client, each with its own server object, until a signal asks to stop. */
async function serveHttp(
  make: () => Server,
  port: number,
  settings: Pick<
    GatewaySettings,
    'access' | 'maxMessageBytes' | 'resume' | 'host' | 'trustProxy' | 'limits' | 'drainTimeout'
  >,
  authenticator: Authenticator | undefined,
  log: Log,
  io: CliIo,
  registry?: SessionRegistry,
  buckets?: SharedBuckets,
  ops?: ServeOps,
  gateway?: Pick<Gateway, 'ctx'>,
  reload?: HttpReload,
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
  ] = await Promise.all([
    import('node:http'),
    import('../mcp/http-server-transport.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('../util/http-origin.js'),
    import('../mcp/stdio-transport.js'),
    import('../mcp/event-store.js'),
    loadHttpGuard(),
    import('../mcp/fast-path.js'),
    loadDrain(),
  ])
  const maxBytes = settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  const host = settings.host ?? DEFAULT_HOST
  const guard = new HttpGuard(settings, authenticator, log, buckets)
  type Session = GuardedSession & {
    transport: InstanceType<typeof NodeStreamableHttpServerTransport>
    server: Server
    events: InstanceType<typeof BoundedEventStore>
  }
  const sessions = new Map<string, Session>()
  // Until the port is known nothing is accepted; set right after listen().
  let refusal: ReturnType<typeof loopbackAccessCheck> = () => ({ header: 'host', message: 'not listening yet' })

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // Probes come by the pod's address, which the Host check refuses; they reveal nothing.
    if (ops?.health(req, res)) return
    const view = guard.view(req)
    // DNS rebinding and cross-site pages: checked before the body is read or a session is touched.
    const refused = refusal(guard.checkedHeaders(req, view))
    if (refused !== undefined) {
      log.debug(`refused an HTTP request from ${view.client}: ${refused.message}`)
      return rpcError(res, 403, -32000, `Forbidden: ${refused.message}`)
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
      const text = await readBodyWithin(req, maxBytes)
      if (text === undefined) {
        // Not "connection: close": the body still coming is drained first (see readBodyWithin).
        return rpcError(
          res,
          413,
          -32600,
          `Invalid Request: message too large: over the limit of ${maxBytes} bytes (raise it with --max-message-bytes)`,
        )
      }
      try {
        body = JSON.parse(text)
      } catch {
        return rpcError(res, 400, -32700, 'Parse error: the body is not JSON')
      }
    }
    if (!(await guard.admit(identity || undefined, body, res))) return
    if (existing) {
      // A resume from an event the store no longer has (or never had) is refused here with the
      // reason; the SDK's own answer to it would not say why.
      const last = req.headers['last-event-id']
      if (req.method === 'GET' && typeof last === 'string' && last !== '' && existing.events.state(last) !== 'stored')
        return rpcError(res, 400, -32000, `Bad Request: ${existing.events.refusal(last)}`)
      guard.track(existing, res)
      return existing.transport.handleRequest(req, res, body)
    }
    if (id !== undefined)
      return rpcError(
        res,
        404,
        -32001,
        registry && typeof id === 'string'
          ? await registry.unknown(id, identity ? identity.subject : undefined)
          : 'Session not found',
      )
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return rpcError(res, 400, -32000, 'Bad Request: no session; start with an initialize request')
    if (!(await guard.makeRoom(identity || undefined, sessions.values(), body, res))) return
    const server = make()
    // Every stream of the session starts with a priming event and keeps its events, so a client
    // that loses one resumes it with Last-Event-ID after the advertised retry interval.
    const events = new BoundedEventStore(settings.resume?.eventStore)
    const transport: Session['transport'] = new NodeStreamableHttpServerTransport({
      // 122 random bits from the CSPRNG: a session id cannot be guessed.
      sessionIdGenerator: () => randomUUID(),
      eventStore: events,
      retryInterval: settings.resume?.retryMs ?? DEFAULT_RETRY_MS,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, session)
        log.debug(`session ${sessionId} opened${identity ? ` by "${identity.subject}"` : ''} from ${view.client}`)
        registry?.opened(sessionId, session.owner)
      },
    })
    const session: Session = {
      transport,
      server,
      events,
      owner: identity ? identity.subject : undefined,
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
    guard.track(session, res)
    await transport.handleRequest(req, res, body)
  }

  // Requests in progress, so that a drain lets them finish; an open GET stream is not waited for.
  const inFlight = new drain.InFlight()
  const calls = gateway ? drain.cancellableCalls(gateway.ctx) : { cancelAll: () => {} }
  const http = createServer((req, res) => {
    ops?.count(req, res)
    if (drain.refuseWhileDraining(req, res)) return
    if (req.method === 'POST') res.once('close', inFlight.begin())
    handle(req, res).catch((error) => {
      log.info(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`)
      if (!res.headersSent) rpcError(res, 500, -32603, 'Internal error')
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(port, host, () => resolve())
  })
  const address = http.address()
  const actual = typeof address === 'object' && address ? address.port : port
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
  const shown = host.includes(':') ? `[${host}]` : host
  const serving = `serving MCP at http://${shown}:${actual}/mcp`
  // Written whatever --log-level says: scripts read the port from it.
  if (log.format === 'json') log.info(serving)
  else io.stderr.write(`toolgate: ${serving}\n`)
  // Sessions nobody has used for the idle limit are closed (one with a request or stream open is in use).
  const sweeper = setInterval(() => void guard.sweep(sessions.values()), guard.sweepEvery())
  sweeper.unref()
  await drain.untilStopped({
    inFlight,
    calls,
    timeoutMs: (settings.drainTimeout ?? drain.DEFAULT_DRAIN_TIMEOUT_SECONDS) * 1000,
    log,
  })
  clearInterval(sweeper)
  for (const session of sessions.values()) await session.transport.close().catch(() => {})
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

export default serve
