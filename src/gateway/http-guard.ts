// What `serve --http` checks besides the MCP protocol itself: that a gateway others can reach asks
// who is calling, the caller's credentials, the caller's limits, the proxy in front, and which
// sessions belong to whom and for how long.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { ConfigError } from '../errors/config-error.js'
import { type AuthInfo, type Identity, JsonRpcCode } from '../mcp/gateway.js'
import type { LoopbackAccess } from '../util/http-origin.js'
import { consentFlows } from './consent-flows.js'
import type { Gateway } from './gateway.js'
import { type Authenticator, createAuthenticator } from './http-auth.js'
import {
  DEFAULT_SESSION_IDLE_MS,
  DEFAULT_SESSIONS_PER_IDENTITY,
  DEFAULT_UPSTREAM_CONCURRENCY,
  IdentityLimiter,
  type SharedBuckets,
} from './http-limits.js'
import { type ForwardedView, forwardedView, isLoopbackHost } from './http-proxy.js'
import type { Log } from './log.js'
import type { GatewaySettings } from './settings.js'
import { capUpstreamCalls } from './upstream-cap.js'

export const DEFAULT_HOST = '127.0.0.1'

type ExposureSettings = Pick<GatewaySettings, 'host' | 'auth'>

/**
 * The authenticator of `serve --http`, or undefined when the config has no `auth`; throws a
 * ConfigError when the bind address is not loopback and nobody would be asked who they are.
 */
export function checkExposure(
  settings: ExposureSettings,
  env: NodeJS.ProcessEnv = process.env,
): Authenticator | undefined {
  const host = settings.host ?? DEFAULT_HOST
  if (settings.auth === undefined) {
    if (!isLoopbackHost(host))
      throw new ConfigError(
        '--host',
        `${host} is not a loopback address, and anyone who can reach it could call every tool: add "auth" to the ` +
          'config (static bearer tokens or an OAuth issuer), or bind 127.0.0.1 and put an authenticating proxy in front',
      )
    return undefined
  }
  return createAuthenticator(settings.auth, env)
}

/** The global cap on calls of upstream tools in progress at once (`limits.upstreamConcurrency`). */
export function installUpstreamCap(gateway: Gateway, settings: Pick<GatewaySettings, 'limits'>): void {
  capUpstreamCalls(gateway, gateway.ctx, settings.limits?.upstreamConcurrency ?? DEFAULT_UPSTREAM_CONCURRENCY)
}

/** A request the SDK's transport reads `auth` from, handing it to handlers as `extra.authInfo`. */
type AuthedRequest = IncomingMessage & { auth?: AuthInfo }

/** The bookkeeping of one MCP session that the guard needs. */
export interface GuardedSession {
  /** The subject that opened it; undefined without `auth`. */
  readonly owner: string | undefined
  lastSeen: number
  /** Requests (and open streams) of the session in progress. */
  active: number
  close(): Promise<void>
}

function jsonReply(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}

/** The id of a single JSON-RPC request, for an error that answers it; null otherwise. */
function requestId(body: unknown): string | number | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const id = (body as { id?: unknown }).id
  return typeof id === 'string' || typeof id === 'number' ? id : null
}

/** Whether a POST body holds a JSON-RPC request (as opposed to only notifications or responses). */
function holdsRequest(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body]
  return messages.some(
    (m) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m && (m as { id: unknown }).id !== null,
  )
}

export class HttpGuard {
  #auth: Authenticator | undefined
  readonly #trusted: ReadonlySet<string>
  #limiter: IdentityLimiter
  readonly #buckets: SharedBuckets | undefined
  readonly #log: Log
  #sessionCap: number
  idleMs: number

  constructor(
    settings: Pick<GatewaySettings, 'trustProxy' | 'limits'>,
    authenticator: Authenticator | undefined,
    log: Log,
    buckets?: SharedBuckets,
  ) {
    this.#auth = authenticator
    this.#buckets = buckets
    this.#trusted = new Set(settings.trustProxy ?? [])
    this.#limiter = new IdentityLimiter(settings.limits)
    this.#log = log
    this.#sessionCap = settings.limits?.sessionsPerIdentity ?? DEFAULT_SESSIONS_PER_IDENTITY
    this.idleMs = settings.limits?.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS
  }

  /**
   * Judge requests from now on by a reloaded config's tokens and limits. Requests already admitted
   * keep their slots in the old accounts; the rate buckets start full.
   */
  reconfigure(settings: Pick<GatewaySettings, 'limits'>, authenticator: Authenticator | undefined): void {
    this.#auth = authenticator
    this.#limiter = new IdentityLimiter(settings.limits)
    this.#sessionCap = settings.limits?.sessionsPerIdentity ?? DEFAULT_SESSIONS_PER_IDENTITY
    this.idleMs = settings.limits?.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS
  }

  /** The client, host and scheme of a request, believing X-Forwarded-* only from a trusted proxy. */
  view(req: IncomingMessage): ForwardedView {
    return forwardedView(req.socket.remoteAddress, req.headers, this.#trusted)
  }

  /**
   * The headers the Host/Origin check sees: behind a trusted proxy, the Host the client asked the
   * proxy for, and no Origin when the page's origin is that very host (a same-origin request).
   */
  checkedHeaders(req: IncomingMessage, view: ForwardedView): IncomingHttpHeaders {
    if (!view.viaProxy) return req.headers
    const headers: IncomingHttpHeaders = { ...req.headers, host: view.host }
    if (view.host !== undefined && headers.origin?.toLowerCase() === `${view.proto}://${view.host}`.toLowerCase())
      delete headers.origin
    return headers
  }

  /** What the Host/Origin check accepts besides the configured names: the bound address and the OAuth resource's host. */
  access(base: LoopbackAccess, host: string, port: number): LoopbackAccess {
    const hosts = [...(base.allowedHosts ?? [])]
    const origins = [...(base.allowedOrigins ?? [])]
    if (!isLoopbackHost(host) && host !== '0.0.0.0' && host !== '::')
      hosts.push(host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`)
    const resource = this.#auth?.metadata?.document.resource
    // Sign-in links (consent by URL) point at the gateway's public address when it is known.
    const bound = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
    consentFlows.origin =
      resource !== undefined
        ? new URL(resource).origin
        : `http://${bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound}:${port}`
    if (resource !== undefined) {
      const url = new URL(resource)
      hosts.push(url.host)
      origins.push(url.origin)
    }
    return { allowedHosts: hosts, allowedOrigins: origins }
  }

  /**
   * Answer a request for the protected resource metadata, or a sign-in link's start or callback;
   * false when `pathname` is none of their paths.
   */
  serveMetadata(pathname: string, req: IncomingMessage, res: ServerResponse): boolean {
    if (consentFlows.serve(pathname, req, res, (line) => this.#log.info(line))) return true
    const metadata = this.#auth?.metadata
    if (metadata === undefined || !metadata.paths.includes(pathname)) return false
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n')
      return true
    }
    jsonReply(res, 200, { 'cache-control': 'max-age=300' }, metadata.document)
    return true
  }

  /**
   * Who is calling: undefined without `auth` (nobody is asked), the identity (hung on the request
   * for the MCP SDK), or false when the request was refused and answered here.
   */
  async authenticate(
    req: IncomingMessage,
    res: ServerResponse,
    view: ForwardedView,
  ): Promise<Identity | undefined | false> {
    if (this.#auth === undefined) return undefined
    const outcome = await this.#auth.authenticate(req.headers.authorization)
    if (outcome.ok) {
      ;(req as AuthedRequest).auth = outcome.info
      return outcome.identity
    }
    this.#log.debug(`refused an HTTP request from ${view.client}: ${outcome.status} ${outcome.description}`)
    const headers: Record<string, string> =
      outcome.challenge !== undefined ? { 'www-authenticate': outcome.challenge } : { 'retry-after': '5' }
    jsonReply(res, outcome.status, headers, { error: outcome.error, error_description: outcome.description })
    return false
  }

  /**
   * Count a request of `identity` against its rate limit and, when it holds a JSON-RPC request,
   * its concurrency limit until the response ends. False when refused with 429 and answered here.
   */
  async admit(identity: Identity | undefined, body: unknown, res: ServerResponse): Promise<boolean> {
    if (identity === undefined) return true
    // Each message of a JSON-RPC batch is a request of its own to the rate limit.
    const cost = Array.isArray(body) ? Math.max(1, body.length) : 1
    const { burst } = this.#limiter.rateOf(identity)
    if (cost > burst) {
      this.#log.debug(`refused a batch of ${cost} messages of "${identity.subject}" (burst ${burst})`)
      jsonReply(
        res,
        400,
        {},
        {
          jsonrpc: '2.0',
          error: {
            code: JsonRpcCode.InvalidRequest,
            message: `Invalid Request: a batch of ${cost} messages is more than the ${burst} requests limits.rate allows at once (each message counts as one request); send at most ${burst} per batch`,
          },
          id: null,
        },
      )
      return false
    }
    const concurrent = holdsRequest(body)
    const admission =
      this.#buckets === undefined
        ? this.#limiter.admit(identity, concurrent, cost)
        : await this.#limiter.admitShared(
            identity,
            concurrent,
            this.#buckets,
            (error) =>
              this.#log.info(
                `the shared rate limit could not be read (this instance's limit applies): ${error instanceof Error ? error.message : String(error)}`,
              ),
            cost,
          )
    if (admission.ok) {
      res.once('close', admission.release)
      return true
    }
    this.#log.debug(`refused a request of "${identity.subject}": ${admission.reason}`)
    jsonReply(
      res,
      429,
      { 'retry-after': String(admission.retryAfterSec) },
      {
        jsonrpc: '2.0',
        error: {
          code: JsonRpcCode.ServerError,
          message: `Too Many Requests: ${admission.reason}; retry after ${admission.retryAfterSec} s`,
          data: { retryAfterSeconds: admission.retryAfterSec },
        },
        id: requestId(body),
      },
    )
    return false
  }

  /** Whether `identity` may use `session` (the one that opened it; anyone when `auth` is off). */
  owns(identity: Identity | undefined, session: GuardedSession): boolean {
    return session.owner === identity?.subject
  }

  /** Mark a request of `session` in progress until its response ends. */
  track(session: GuardedSession, res: ServerResponse): void {
    session.active++
    session.lastSeen = Date.now()
    res.once('close', () => {
      session.active--
      session.lastSeen = Date.now()
    })
  }

  /**
   * Make room for a new session of `identity`: at its cap, its least recently used idle session is
   * closed; when every one is in use, the request is refused with 429 and answered here (false).
   */
  async makeRoom(
    identity: Identity | undefined,
    sessions: Iterable<GuardedSession>,
    body: unknown,
    res: ServerResponse,
  ): Promise<boolean> {
    if (identity === undefined) return true
    const own = [...sessions].filter((s) => s.owner === identity.subject)
    if (own.length < this.#sessionCap) return true
    const idle = own.filter((s) => s.active === 0).sort((a, b) => a.lastSeen - b.lastSeen)[0]
    if (idle !== undefined) {
      this.#log.debug(
        `closing the least recently used session of "${identity.subject}" (at its cap of ${this.#sessionCap})`,
      )
      await idle.close()
      return true
    }
    jsonReply(
      res,
      429,
      { 'retry-after': '60' },
      {
        jsonrpc: '2.0',
        error: {
          code: JsonRpcCode.ServerError,
          message: `Too Many Requests: "${identity.subject}" already holds ${this.#sessionCap} sessions in use; close one (DELETE) first`,
        },
        id: requestId(body),
      },
    )
    return false
  }

  /** Close every session idle for longer than the idle limit; returns how often to look again. */
  sweepEvery(): number {
    return Math.max(50, Math.min(60_000, Math.floor(this.idleMs / 2)))
  }

  async sweep(sessions: Iterable<GuardedSession>, now = Date.now()): Promise<void> {
    for (const session of [...sessions])
      if (session.active === 0 && now - session.lastSeen > this.idleMs) await session.close().catch(() => {})
  }
}
