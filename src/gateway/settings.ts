// Command-line flags merged over the config file: flags win, the file fills in the rest.
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { ToolPresentationMode } from '../contract/execution.js'
import { UsageError } from '../errors/usage-error.js'
import { checkAllowedHost, checkAllowedOrigin } from '../util/http-origin.js'
import {
  type GatewayConfig,
  type HttpConfig,
  loadConfig,
  maxMessageBytesProblem,
  type PolicyConfig,
  type ReconnectConfig,
  type ServerConfig,
} from './config.js'
import type { AuthConfig, LimitsConfig } from './config-auth.js'
import { checkRootUsed } from './config-files.js'
import type { MetricsConfig } from './config-operations.js'
import { type StoreConfig, storeFlag } from './config-store.js'
import { parseTrustProxy } from './http-proxy.js'
import type { LogFormat, LogLevel } from './log.js'
import { readOperationFlags } from './settings-operations.js'
import { sandboxedCommand } from './upstream-sandbox.js'

export interface GatewaySettings {
  /** Absolute workspace root of the file tools (and bash's working directory). */
  readonly root: string
  /** Serve the file tools (the config's `files`); absent means true. */
  readonly files?: boolean
  readonly bash: boolean
  readonly mode: ToolPresentationMode
  readonly servers: Readonly<Record<string, ServerConfig>>
  readonly policy: PolicyConfig
  readonly verbose: boolean
  /** Port of the Streamable HTTP endpoint (`serve --http`); stdio when absent. */
  readonly http?: number
  /** Who may reach the HTTP endpoint besides loopback names and origins (config and flags together). */
  readonly access: { readonly allowedHosts: readonly string[]; readonly allowedOrigins: readonly string[] }
  /** Resumability of `serve --http`: each session's event store bounds and the SSE retry it advertises. */
  readonly resume?: { readonly eventStore: NonNullable<HttpConfig['eventStore']>; readonly retryMs?: number }
  /** Largest JSON-RPC message read over stdio (client and upstream servers); the SDK's default when absent. */
  readonly maxMessageBytes?: number
  /** How upstream servers that are down are retried. */
  readonly reconnect?: ReconnectConfig
  /** `serve --check`: report every upstream's state instead of serving. */
  readonly check?: boolean
  /** The address `serve --http` binds (default 127.0.0.1). */
  readonly host?: string
  /** Reverse proxies whose X-Forwarded-* headers are believed (`--trust-proxy`). */
  readonly trustProxy?: readonly string[]
  /** Who may call `serve --http`; absent: nobody is asked (loopback only). */
  readonly auth?: AuthConfig
  readonly limits?: LimitsConfig
  /** The audit journal's path (absolute), from the config's `journal`. */
  readonly journal?: string
  /** The shared store (`--store URL` or the config's `store`). */
  readonly store?: StoreConfig
  /** Defer every upstream tool when the upstreams list more than this many. */
  readonly deferAbove?: number
  /** `--metrics-port`: serve `GET /metrics` on this port instead of the MCP port. */
  readonly metricsPort?: number
  /** The config's `metrics` (what call metrics may be labelled with). */
  readonly metrics?: MetricsConfig

  /** The key of the per-caller credential vault (`--vault-key-file` or `TOOLGATE_VAULT_KEY_FILE`). */
  readonly vaultKeyFile?: string
  /** The vault file: `toolgate.vault.json` next to the config (or in the working folder). */
  readonly vaultFile?: string

  /** `--drain-timeout`: seconds calls in flight may take after SIGTERM (`serve --http`), or after stdin's end (stdio). */
  readonly drainTimeout?: number
  /** `--log-format` and `--log-level`. */
  readonly logFormat?: LogFormat
  readonly logLevel?: LogLevel
}

const MODES: readonly string[] = ['native', 'code', 'both']

/** Parse `argv` (flags only) for a command that accepts `flags`, then merge the config file. */
export async function readSettings(argv: readonly string[], flags: readonly string[]): Promise<GatewaySettings> {
  const all = {
    root: { type: 'string' },
    bash: { type: 'boolean' },
    mode: { type: 'string' },
    config: { type: 'string' },
    http: { type: 'string' },
    verbose: { type: 'boolean' },
    'allow-host': { type: 'string', multiple: true },
    'allow-origin': { type: 'string', multiple: true },
    'max-message-bytes': { type: 'string' },
    check: { type: 'boolean' },
    host: { type: 'string' },
    'trust-proxy': { type: 'string', multiple: true },
    store: { type: 'string' },
    'metrics-port': { type: 'string' },

    'drain-timeout': { type: 'string' },
    'log-format': { type: 'string' },
    'log-level': { type: 'string' },
    'vault-key-file': { type: 'string' },
  } as const
  const options = Object.fromEntries(Object.entries(all).filter(([name]) => flags.includes(name)))
  let values: Record<string, string | boolean | string[] | undefined>
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | string[] | undefined
    >
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const mode = values.mode as string | undefined
  if (mode !== undefined && !MODES.includes(mode))
    throw new UsageError(`--mode: expected native, code or both, got "${mode}"`)
  let http: number | undefined
  if (values.http !== undefined) {
    const port = Number(values.http)
    if (!/^\d+$/.test(String(values.http)) || port > 65535)
      throw new UsageError(`--http: expected a port number (0-65535), got "${values.http}"`)
    http = port
  }
  const metricsPort = readMetricsPort(values['metrics-port'], http)
  const hosts = (values['allow-host'] as string[] | undefined) ?? []
  const origins = (values['allow-origin'] as string[] | undefined) ?? []
  if ((hosts.length > 0 || origins.length > 0) && http === undefined)
    throw new UsageError(`--${hosts.length > 0 ? 'allow-host' : 'allow-origin'} only applies with --http`)
  for (const host of hosts)
    if (checkAllowedHost(host) === undefined)
      throw new UsageError(
        `--allow-host: expected a host name with an optional port (e.g. gateway.local:8080), got "${host}"`,
      )
  for (const origin of origins)
    if (checkAllowedOrigin(origin) === undefined)
      throw new UsageError(`--allow-origin: expected an origin (e.g. https://app.example), got "${origin}"`)
  let maxMessageBytes: number | undefined
  if (values['max-message-bytes'] !== undefined) {
    const text = String(values['max-message-bytes'])
    const problem = /^\d+$/.test(text) ? maxMessageBytesProblem(Number(text)) : maxMessageBytesProblem(text)
    if (problem !== undefined) throw new UsageError(`--max-message-bytes: ${problem}`)
    maxMessageBytes = Number(text)
  }
  const { host, trustProxy } = readBindFlags(values, http)
  const operations = readOperationFlags(values)
  const store = values.store === undefined ? undefined : storeFlag(String(values.store))
  if (typeof store === 'string') throw new UsageError(store)
  const file: GatewayConfig = values.config === undefined ? {} : await loadConfig(values.config as string)
  const root = values.root !== undefined ? path.resolve(values.root as string) : (file.root ?? process.cwd())
  const files = file.files ?? true
  const bash = (values.bash as boolean | undefined) ?? file.bash ?? false
  const rootGiven =
    values.root !== undefined ? { flag: true } : file.root !== undefined ? { file: String(values.config) } : undefined
  checkRootUsed({ files, bash }, rootGiven)
  return {
    root,
    files,
    bash,
    mode: (mode as ToolPresentationMode | undefined) ?? file.mode ?? 'native',
    servers: sandboxedServers(file.servers ?? {}),
    policy: file.policy ?? {},
    verbose: values.verbose === true,
    ...operations,
    http,
    // Both lists are explicit grants, so the flags add to the file's rather than replacing them.
    access: {
      allowedHosts: [...(file.http?.allowedHosts ?? []), ...hosts],
      allowedOrigins: [...(file.http?.allowedOrigins ?? []), ...origins],
    },
    resume: { eventStore: file.http?.eventStore ?? {}, retryMs: file.http?.retryMs },
    maxMessageBytes: maxMessageBytes ?? file.maxMessageBytes,
    reconnect: file.reconnect ?? {},
    ...(file.deferAbove === undefined ? {} : { deferAbove: file.deferAbove }),
    check: values.check === true,
    ...(host !== undefined ? { host } : {}),
    ...(trustProxy !== undefined ? { trustProxy } : {}),
    ...(file.auth !== undefined ? { auth: file.auth } : {}),
    ...(file.limits !== undefined ? { limits: file.limits } : {}),
    ...(file.journal === undefined ? {} : { journal: file.journal }),
    // --store names the database; the config's other store keys (pool, retention, lease) still apply.
    store: store === undefined ? file.store : { ...file.store, ...store },
    ...(metricsPort === undefined ? {} : { metricsPort }),
    ...(file.metrics === undefined ? {} : { metrics: file.metrics }),
    ...vaultSettings(values, process.env),
  }
}

/** Where the vault's key and file are (see GatewaySettings.vaultKeyFile). */
export function vaultSettings(
  values: Record<string, string | boolean | string[] | undefined>,
  env: NodeJS.ProcessEnv,
): { vaultKeyFile?: string; vaultFile: string } {
  const key = (values['vault-key-file'] as string | undefined) ?? (env.TOOLGATE_VAULT_KEY_FILE || undefined)
  const dir = values.config === undefined ? process.cwd() : path.dirname(path.resolve(String(values.config)))
  return {
    ...(key !== undefined ? { vaultKeyFile: path.resolve(key) } : {}),
    vaultFile: path.join(dir, 'toolgate.vault.json'),
  }
}

/** `--metrics-port N`: only with --http, and not the MCP port itself. */
function readMetricsPort(value: unknown, http: number | undefined): number | undefined {
  if (value === undefined) return undefined
  if (http === undefined) throw new UsageError('--metrics-port only applies with --http')
  const port = Number(value)
  if (!/^\d+$/.test(String(value)) || port > 65535)
    throw new UsageError(`--metrics-port: expected a port number (0-65535), got "${String(value)}"`)
  if (port !== 0 && port === http) throw new UsageError('--metrics-port: expected a port other than the --http port')
  return port
}

/** `--host` and `--trust-proxy`: both only with --http. */
function readBindFlags(
  values: Record<string, string | boolean | string[] | undefined>,
  http: number | undefined,
): { host?: string; trustProxy?: string[] } {
  const host = values.host as string | undefined
  const proxies = values['trust-proxy'] as string[] | undefined
  if ((host !== undefined || proxies !== undefined) && http === undefined)
    throw new UsageError(`--${host !== undefined ? 'host' : 'trust-proxy'} only applies with --http`)
  if (host !== undefined && (host === '' || /[\s/]/.test(host)))
    throw new UsageError(`--host: expected an address to bind, e.g. 127.0.0.1 or 0.0.0.0, got "${host}"`)
  if (proxies === undefined) return { host }
  const parsed = parseTrustProxy(proxies)
  if ('bad' in parsed)
    throw new UsageError(`--trust-proxy: expected IP addresses separated by commas, got "${parsed.bad}"`)
  return { host, trustProxy: parsed.addresses }
}

/** Each server with a `sandbox` becomes the bubblewrap command that runs it. */
function sandboxedServers(servers: Record<string, ServerConfig>): Record<string, ServerConfig> {
  const out: Record<string, ServerConfig> = {}
  for (const [name, server] of Object.entries(servers)) {
    if (!('command' in server) || server.sandbox === undefined) {
      out[name] = server
      continue
    }
    const { sandbox, command, args, env, ...rest } = server
    out[name] = {
      ...rest,
      ...sandboxedCommand({ command, ...(args ? { args } : {}), ...(env ? { env } : {}) }, sandbox, `servers.${name}`),
    }
  }
  return out
}
