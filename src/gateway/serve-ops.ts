// What `serve --http` answers for its operator besides MCP: health and readiness (health.ts) and
// metrics (metrics.ts), on the MCP port or, with --metrics-port, the metrics on a port of their own.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Store } from '../journal/store.js'
import type { Gateway } from './gateway.js'
import { HEALTH_PATHS, readinessOf, serveHealth } from './health.js'
import { DEFAULT_HOST } from './http-guard.js'
import type { Log, TextSink } from './log.js'
import { createGatewayMetrics, type GatewayMetrics, type ReloadResult } from './metrics.js'
import type { GatewaySettings } from './settings.js'

export const METRICS_PATH = '/metrics'

export interface ServeOps {
  /** Answer `/healthz` or `/readyz` (before any other check); false for any other path. */
  health(req: IncomingMessage, res: ServerResponse): boolean
  /**
   * Whether `/metrics` is served on the MCP port (no --metrics-port): it is then asked for behind
   * the same Host check and authentication as `/mcp`, and answered with {@link ServeOps.metrics}.
   */
  readonly onMainPort: boolean
  metrics(req: IncomingMessage, res: ServerResponse): Promise<void>
  /** Count a config reload. */
  countReload(result: ReloadResult): void
  /** Take a reloaded config's servers (which are `"required"` for readiness). */
  reconfigure(next: Pick<GatewaySettings, 'servers'>): void
  /** Count a response of the MCP port (health and metrics excluded). */
  count(req: IncomingMessage, res: ServerResponse): void
  /** Count responses of the MCP port sent before the gateway took it (by serve's first script). */
  countSent(statuses: readonly number[]): void
  close(): Promise<void>
}

type OpsSettings = Pick<GatewaySettings, 'servers' | 'metrics' | 'metricsPort' | 'host'>

export async function openServeOps(
  gateway: Pick<Gateway, 'agent' | 'identities' | 'upstreams'>,
  settings: OpsSettings,
  store: Store | undefined,
  log: Log,
  io: { readonly stderr: TextSink },
): Promise<ServeOps> {
  let servers = settings.servers
  const readiness = readinessOf(gateway.upstreams, () => servers, store)
  const metrics = await createGatewayMetrics(gateway, settings.metrics)
  if (store !== undefined) metrics.timeAppends(store)
  const own = settings.metricsPort === undefined ? undefined : await listenMetrics(metrics, settings, log, io)
  return {
    health: (req, res) => serveHealth(pathOf(req), req, res, readiness),
    onMainPort: own === undefined,
    async metrics(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n')
      else await metrics.serve(res)
    },
    countReload: (result) => metrics.countReload(result),
    reconfigure(next) {
      servers = next.servers
    },
    count(req, res) {
      const path = pathOf(req)
      if (!HEALTH_PATHS.includes(path) && path !== METRICS_PATH) metrics.countResponse(res)
    },
    countSent: (statuses) => metrics.countSent(statuses),
    close: async () => {
      if (own !== undefined) await own()
    },
  }
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://127.0.0.1').pathname
}

/**
 * `--metrics-port`: a listener on the same address that answers only `GET /metrics`, without a
 * token (a scraper comes by the pod's address with none). A browser is refused: every browser
 * request carries `Sec-Fetch-*` or `Origin`, a scraper neither, so a page that rebinds its name to
 * this address reads nothing.
 */
async function listenMetrics(
  metrics: GatewayMetrics,
  settings: OpsSettings,
  log: Log,
  io: { readonly stderr: TextSink },
): Promise<() => Promise<void>> {
  const [{ createServer }, keepAlive] = await Promise.all([import('node:http'), import('./http-keep-alive.js')])
  const host = settings.host ?? DEFAULT_HOST
  const server = createServer((req, res) => {
    keepAlive.advertiseKeepAlive(res)
    if (req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden: the metrics port is not for browsers\n')
      return
    }
    if (pathOf(req) !== METRICS_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: the metrics are at ${METRICS_PATH}\n`)
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n')
      return
    }
    metrics.serve(res).catch((error: unknown) => {
      log.info(`metrics failed: ${error instanceof Error ? error.message : String(error)}`)
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  // A scraper keeps its connection between scrapes: it is the scraper's to close, as on the MCP port.
  keepAlive.holdIdleConnections(server)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(settings.metricsPort, host, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : settings.metricsPort
  const shown = host.includes(':') ? `[${host}]` : host
  io.stderr.write(`toolgate: serving metrics at http://${shown}:${port}${METRICS_PATH}\n`)
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
}
