// `GET /healthz` and `GET /readyz` of `serve --http`: liveness and readiness for a load balancer or
// an orchestrator's probes. Both are answered without authentication and before the Host check
// (a probe comes by the pod's address), so they say nothing but the state: no tool, identity or
// config value, not even an upstream's config name (see docs/decisions.md).
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Store } from '../journal/store.js'
import type { ServerConfig } from './config.js'
import { isDraining } from './drain.js'
import type { UpstreamReport } from './gateway.js'

/** What is not ready: the store, or one or more `"required": true` upstreams. */
export type NotReady = 'store' | 'upstreams' | 'draining'

export interface Readiness {
  readonly ready: boolean
  readonly notReady: readonly NotReady[]
}

/** How long the store may take to answer a readiness check before it counts as down. */
export const STORE_CHECK_MS = 2000

/** The readiness check of a gateway: its required upstreams connected, its store (if any) answering. */
export function readinessOf(
  upstreams: () => readonly UpstreamReport[],
  servers: Readonly<Record<string, ServerConfig>> | (() => Readonly<Record<string, ServerConfig>>),
  store: Store | undefined,
): () => Promise<Readiness> {
  const requiredOf = (of: Readonly<Record<string, ServerConfig>>) =>
    new Set(Object.entries(of).flatMap(([name, spec]) => (spec.required === true ? [name] : [])))
  const fixed = typeof servers === 'function' ? undefined : requiredOf(servers)
  return async () => {
    // A function is asked each time: a reload may change which servers are required.
    const required = fixed ?? requiredOf((servers as () => Readonly<Record<string, ServerConfig>>)())
    const notReady: NotReady[] = []
    // A draining instance takes no new requests: the load balancer must stop sending them at once.
    if (isDraining()) notReady.push('draining')
    if (store !== undefined && !(await answers(store))) notReady.push('store')
    if (upstreams().some((u) => required.has(u.name) && u.status !== 'connected')) notReady.push('upstreams')
    return { ready: notReady.length === 0, notReady }
  }
}

/** Whether the store answers a cheap read (one indexed lookup) within {@link STORE_CHECK_MS}. */
async function answers(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), STORE_CHECK_MS)
  })
  const read = store.getSession('toolgate-readiness-check').then(
    () => true,
    () => false,
  )
  try {
    return await Promise.race([read, late])
  } finally {
    clearTimeout(timer)
  }
}

/** The paths answered here. */
export const HEALTH_PATHS: readonly string[] = ['/healthz', '/readyz']

/**
 * Answer `/healthz` (200 while the process serves) or `/readyz` (200, or 503 naming what is not
 * ready); false when `pathname` is neither.
 */
export function serveHealth(
  pathname: string,
  req: IncomingMessage,
  res: ServerResponse,
  readiness: () => Promise<Readiness>,
): boolean {
  if (!HEALTH_PATHS.includes(pathname)) return false
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n')
    return true
  }
  if (pathname === '/healthz') {
    send(res, req, 200, { ok: true })
    return true
  }
  readiness().then(
    (state) => send(res, req, state.ready ? 200 : 503, state),
    () => send(res, req, 503, { ready: false, notReady: [] }),
  )
  return true
}

function send(res: ServerResponse, req: IncomingMessage, status: number, body: unknown): void {
  // Never cached: a probe must see the state of now.
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body))
}
