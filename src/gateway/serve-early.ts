// The entry of the executable's first script (dist/cli/serve-early.cjs, a small bundle of its own):
// for `toolgate serve`, read the flags and the config and spawn the stdio upstream servers before
// the CLI's big bundle is read, compiled and run, so that their start overlaps all of that. It
// uses the CLI's own flag and config checks, spawns only when they pass, and says nothing: the CLI
// then reads the same flags and config text again, reports any problem as it always does, and
// takes the processes over (or stops them) instead of spawning its own.
import { preloadUpstreamClient } from './client-preload.js'
import { keepConfigTexts } from './config-read.js'
import { holdHangupsEarly } from './early-hangup.js'
import { isLoopbackHost } from './http-proxy.js'
import { createLog } from './log.js'
import { listBeforeLoad } from './raw-first.js'
import { listenBeforeLoad } from './raw-first-http.js'
import { SERVE_FLAGS, spawnUpstreamsEarly } from './serve-spawn.js'
import { type GatewaySettings, readSettings } from './settings.js'

/** The address `serve --http` binds when --host does not say (http-guard's DEFAULT_HOST, not imported: it loads jose). */
const HTTP_DEFAULT_HOST = '127.0.0.1'

/**
 * Whether the CLI will get as far as starting the upstreams. Over stdio, yes once the flags and
 * config pass. Over HTTP, only when its exposure check passes without loading token verification:
 * a loopback address and no `auth` (checkExposure's first case). A config with `auth` waits for
 * the CLI, which builds the authenticator (and may refuse it) before spawning anything.
 */
export function spawnsEarly(settings: Pick<GatewaySettings, 'http' | 'auth' | 'host'>): boolean {
  if (settings.http === undefined) return true
  return settings.auth === undefined && isLoopbackHost(settings.host ?? HTTP_DEFAULT_HOST)
}

/**
 * Spawn the upstream servers of a `serve` run now, when its flags and config are good, and answer
 * the client's first listing when that applies (given what the gateway calls itself); never throws.
 */
export async function spawnBeforeLoad(
  argv: readonly string[],
  serverInfo?: { readonly name: string; readonly version: string },
): Promise<void> {
  const [name, ...rest] = argv
  if (name !== 'serve' || rest.includes('--help') || rest.includes('-h')) return
  // From here until the gateway's reloader listens, a SIGHUP asks for a reload instead of ending the process.
  holdHangupsEarly()
  try {
    keepConfigTexts()
    const settings = await readSettings(rest, SERVE_FLAGS)
    // Serving HTTP first checks who may reach it (and may refuse to start): only a start that check
    // cannot refuse spawns early (and may open the port here, see raw-first-http.ts).
    if (!spawnsEarly(settings)) return
    spawnUpstreamsEarly(settings)
    // The first listing, when it applies, is answered before the bundle and the SDK load: their
    // evaluation would hold the main thread while the upstream's answers wait (raw-first.ts).
    // Which way it went, at debug level (`--verbose`, `--log-level debug`), as the CLI logs.
    const log = createLog(process.stderr, settings.verbose, { format: settings.logFormat, level: settings.logLevel })
    const note = (outcome: string) => log.debug(`first listing: ${outcome}`)
    const listing =
      serverInfo === undefined
        ? undefined
        : settings.http === undefined
          ? listBeforeLoad(settings, serverInfo, note)
          : listenBeforeLoad(settings, settings.host ?? HTTP_DEFAULT_HOST, serverInfo, log, note)
    if (listing !== undefined) await listing
    // Every upstream session needs the SDK v2 client: it loads while the upstreams boot instead
    // of after the bundle. A serve with no upstream never loads it.
    if (Object.keys(settings.servers).length > 0) void preloadUpstreamClient()
  } catch {
    // The CLI finds the same problem and reports it.
  }
}
