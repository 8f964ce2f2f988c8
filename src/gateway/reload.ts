// `serve` on SIGHUP: read the config file again, as at startup (flags still win), and swap it into
// the running gateway. A config that does not validate is refused whole and the old one serves on;
// what only a restart can change (the listening address, the store, the journal, the log) is kept
// as it was, and the log says so.
import { ConfigError } from '../errors/config-error.js'
import { takeEarlyHangups } from './early-hangup.js'
import type { Gateway } from './gateway.js'
import type { GatewayReloadSummary } from './gateway-reload.js'
import type { Log } from './log.js'
import type { ReloadResult } from './metrics.js'
import type { GatewaySettings } from './settings.js'

/** Settings a reload does not change: they are bound once the process serves. */
export const RESTART_ONLY: readonly (keyof GatewaySettings)[] = [
  'root',
  'files',
  'bash',
  'mode',
  'http',
  'host',
  'access',
  'trustProxy',
  'resume',
  'maxMessageBytes',
  'reconnect',
  'journal',
  'store',
  'metricsPort',
  'metrics',
  'drainTimeout',
  'logFormat',
  'logLevel',
  'verbose',
]

/** The config's own names for settings that are read from it under another name. */
const SHOWN_AS: Partial<Record<keyof GatewaySettings, string>> = {
  access: 'http.allowedHosts/allowedOrigins',
  resume: 'http.eventStore/retryMs',
}

export interface ReloadOptions {
  /** The settings served now. */
  readonly current: GatewaySettings
  /** Read and validate the config (and flags) again; throws a ConfigError for one that does not validate. */
  read(): Promise<GatewaySettings>
  readonly gateway: Pick<Gateway, 'reconfigure'>
  /**
   * Check what else the new settings need (e.g. the authenticator its `auth` makes) without
   * applying anything: throws a ConfigError to refuse them, or returns how to apply them.
   */
  prepare?(next: GatewaySettings): () => void
  /** Count each reload (`toolgate_config_reloads_total`). */
  count?(result: ReloadResult): void
  readonly log: Log
  /** The config file, for the log; undefined without --config. */
  readonly configPath: string | undefined
}

export interface Reloader {
  /** Reload now (what SIGHUP does); resolves once applied or refused. A reload asked during one runs after it. */
  reload(): Promise<ReloadResult>
  /** Stop listening for SIGHUP. */
  stop(): void
}

/** The new settings with every {@link RESTART_ONLY} one as it was, and the names of those the file changed. */
export function keepRestartOnly(
  current: GatewaySettings,
  next: GatewaySettings,
): { settings: GatewaySettings; kept: string[] } {
  const merged: Record<string, unknown> = { ...next }
  const kept: string[] = []
  for (const key of RESTART_ONLY) {
    if (JSON.stringify(current[key]) !== JSON.stringify(next[key])) kept.push(SHOWN_AS[key] ?? key)
    if (current[key] === undefined) delete merged[key]
    else merged[key] = current[key]
  }
  // The cap on upstream calls is a semaphore whose slots are in use: only a restart resizes it.
  const cap = current.limits?.upstreamConcurrency
  if (cap !== next.limits?.upstreamConcurrency) {
    kept.push('limits.upstreamConcurrency')
    const { upstreamConcurrency: _dropped, ...rest } = next.limits ?? {}
    merged.limits = cap === undefined ? rest : { ...rest, upstreamConcurrency: cap }
  }
  return { settings: merged as unknown as GatewaySettings, kept }
}

/** Reload on every SIGHUP (see {@link ReloadOptions}); one reload runs at a time. */
export function reloadOnHangup(options: ReloadOptions): Reloader {
  const { log } = options
  let current = options.current
  let running: Promise<ReloadResult> | undefined
  let again = false
  const from = options.configPath === undefined ? 'the command line (no --config)' : options.configPath

  const once = async (): Promise<ReloadResult> => {
    let applied: GatewaySettings
    let kept: string[]
    let apply: () => void
    try {
      const read = keepRestartOnly(current, await options.read())
      applied = read.settings
      kept = read.kept
      apply = options.prepare?.(applied) ?? (() => {})
    } catch (error) {
      // A ConfigError's message names the file and each key at fault; anything else is named here.
      const reason = error instanceof ConfigError ? error.message : `${from}: ${messageOf(error)}`
      log.info(`config reload refused, still serving the previous config: ${reason}`)
      options.count?.('refused')
      return 'refused'
    }
    apply()
    // Named only: `auth` holds tokens, which never reach the log.
    const others = (['auth', 'limits', 'deferAbove'] as const).filter(
      (key) => JSON.stringify(current[key]) !== JSON.stringify(applied[key]),
    )
    const summary = await options.gateway.reconfigure(applied)
    current = applied
    options.count?.('ok')
    log.info(
      `config reloaded from ${from}: ${describe(summary)}${others.length ? `; ${others.join(', ')} changed` : ''}`,
    )
    if (kept.length > 0)
      log.info(`config reload: ${kept.join(', ')} changed in ${from} but take a restart; kept as they were`)
    return 'ok'
  }
  const reload = async (): Promise<ReloadResult> => {
    if (running !== undefined) {
      again = true
      return running
    }
    log.info(`SIGHUP: reloading the config from ${from}`)
    running = once()
    try {
      return await running
    } finally {
      running = undefined
      if (again) {
        again = false
        void reload()
      }
    }
  }
  const onHangup = () => {
    reload().catch((error: unknown) => log.info(`config reload failed: ${messageOf(error)}`))
  }
  process.on('SIGHUP', onHangup)
  // SIGHUPs that came while the CLI loaded (held by the first script) ask for one reload now.
  if (takeEarlyHangups() > 0) onHangup()
  return { reload, stop: () => void process.off('SIGHUP', onHangup) }
}

function describe(summary: GatewayReloadSummary): string {
  const parts = [summary.policy ? 'policy changed' : 'policy unchanged']
  if (summary.added.length) parts.push(`servers added: ${summary.added.join(', ')}`)
  if (summary.removed.length) parts.push(`servers removed: ${summary.removed.join(', ')}`)
  if (summary.changed.length) parts.push(`servers reconnected: ${summary.changed.join(', ')}`)
  return parts.join('; ')
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The `--config` file named in `argv`, if any. */
export function configPathOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--config') return argv[i + 1]
    if (arg.startsWith('--config=')) return arg.slice('--config='.length)
  }
  return undefined
}
