// `toolgate serve` once its settings are read: the gateway started, wired to its store, its
// operations endpoints, its reloads and its clients (stdio or Streamable HTTP), until it stops.

import type { JSONRPCMessage, McpServerHandle } from '../mcp/gateway.js'
import type { UpstreamReport } from './gateway.js'
import type { TextSink } from './log.js'
import { createLog } from './log.js'
import { takeRawFirst } from './raw-first-record.js'
import { reloadOnHangup } from './reload.js'
import type { HttpReload } from './serve-http.js'
import { spawnUpstreamsEarly } from './serve-spawn.js'
import type { GatewaySettings } from './settings.js'

/** What `serveGateway` needs beside the settings. */
export interface ServeGatewayOptions {
  readonly io: { readonly stdout: TextSink; readonly stderr: TextSink }
  /** What the gateway calls itself to its clients. */
  readonly serverInfo: { readonly name: string; readonly version: string }
  /** Reads the settings again (on SIGHUP). */
  readonly reread: () => Promise<GatewaySettings>
  /** The config file a reload re-reads, if any. */
  readonly configPath: string | undefined
  /** `serve --check`: report the upstreams once started, and return the exit code. */
  readonly check: (upstreams: readonly UpstreamReport[]) => number
}

/** Serve until the gateway stops; resolves with the exit code. */
export async function serveGateway(settings: GatewaySettings, options: ServeGatewayOptions): Promise<number> {
  const { io } = options
  // A gateway others can reach must know who is calling: refused before anything starts. Over
  // stdio nothing of HTTP (nor its token verification) is loaded.
  const exposure = settings.http === undefined ? undefined : await import('./http-guard.js')
  let authenticator = exposure?.checkExposure(settings)
  const discardEarly = spawnUpstreamsEarly(settings)
  const log = createLog(io.stderr, settings.verbose, { format: settings.logFormat, level: settings.logLevel })
  // The runtime and the MCP SDK load only once the flags and the config are known to be good.
  const [{ openGateway, refuseCollisions }, { sessionServers, modernLeg, modernOptions }, early] = await Promise.all([
    import('./gateway.js'),
    import('./serve-session.js'),
    // Over stdio the client is read while the upstreams start.
    settings.http === undefined && !settings.check
      ? import('./serve-stdio.js').then(({ openStdio }) => openStdio(settings, log, options.serverInfo))
      : undefined,
  ])
  const failed = async (error: unknown): Promise<never> => {
    await early?.gate.close()
    // A port the first script opened (raw-first-http.ts) is closed with the gateway that did not open.
    await takeRawFirst().http?.close()
    throw error
  }
  // Over HTTP nothing reads the client until the port opens: what opening it loads is loaded while
  // the upstreams boot, one step per idle turn, until the gateway is open.
  const warming =
    settings.http !== undefined && !settings.check && Object.keys(settings.servers).length > 0
      ? await import('./startup-warmups.js')
      : undefined
  const stopWarming = warming?.warmWhileIdle(warming.httpWarmUps())
  const gateway = await openGateway(settings, log, early?.startup)
    .finally(() => {
      stopWarming?.()
      discardEarly()
    })
    .catch(failed)
  if (settings.check) {
    try {
      return options.check(gateway.upstreams())
    } finally {
      await gateway.close()
    }
  }
  await refuseCollisions(gateway).catch(failed)
  if (settings.verbose || settings.logLevel === 'debug' || settings.logFormat === 'json')
    (await import('./log-calls.js')).logCalls(gateway, log)
  if (settings.http !== undefined) (await import('./http-guard.js')).installUpstreamCap(gateway, settings)
  const shared = settings.store
    ? await (await import('./serve-store.js')).attachStore(gateway, settings.store, log).catch(async (error) => {
        await gateway.close()
        return failed(error)
      })
    : undefined
  // Without a shared store, "always" answers are kept by agent id beside the bounded identity scopes.
  if (shared === undefined)
    gateway.agent.ctx.tools.host.installStandingStore((await import('./memory-standing.js')).memoryStandingApprovals())
  const ops =
    settings.http === undefined
      ? undefined
      : await (await import('./serve-ops.js'))
          .openServeOps(gateway, settings, shared?.store, log, io)
          .catch(async (error) => {
            await gateway.close()
            await shared?.close()
            return failed(error)
          })
  // SIGHUP re-reads the config; the HTTP guard takes its tokens and limits once it exists.
  const http: HttpReload = {}
  const reloader = reloadOnHangup({
    current: settings,
    read: options.reread,
    gateway,
    log,
    configPath: options.configPath,
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
  const acknowledging = shared
    ? {
        server: (server: McpServerHandle) => shared.acknowledging(server),
        answer: (message: JSONRPCMessage) => shared.acknowledged(message),
      }
    : undefined
  const make = sessionServers(gateway, options.serverInfo, () => authenticator, acknowledging?.server, shared?.keeper)
  try {
    if (settings.http !== undefined)
      await (await import('./serve-http.js')).serveHttp(
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
        modernLeg(gateway, options.serverInfo, () => authenticator, log, acknowledging, shared?.approvalStates),
      )
    else if (early !== undefined) {
      // The calls still running when stdin's end grace (--drain-timeout) runs out end as cancelled,
      // answered and journaled, as the HTTP drain's do.
      early.transport.cancelCalls = (await import('./drain.js')).cancellableCalls(gateway.ctx).cancelAll
      early.transport.serving()
      await (await import('./serve-stdio.js')).serveStdio(make, early, log, {
        ctx: gateway.agent.ctx,
        // A 2026 client's run_code programs are kept between its rounds: in the store, or in memory.
        open: async () => {
          const programs = (await import('./stdio-programs.js')).stdioPrograms(gateway, shared, log)
          return {
            options: {
              ...modernOptions(gateway, options.serverInfo, () => authenticator, log, acknowledging),
              ...programs.options,
            },
            close: () => programs.close(),
          }
        },
      })
    }
    return 0
  } finally {
    // The first script's port, if serving never took it (raw-first-http.ts).
    await takeRawFirst().http?.close()
    reloader.stop()
    await ops?.close()
    // Kept programs stop before the upstreams close: a resume the stop interrupts must not see its
    // sub-calls fail as their upstreams go (that failure would be saved as their outcome).
    await shared?.keeper?.close()
    await gateway.close()
    await shared?.close()
  }
}
