// Command-line flags merged over the config file: flags win, the file fills in the rest.
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { ToolPresentationMode } from '../contract/execution.js'
import { checkAllowedHost, checkAllowedOrigin } from '../util/http-origin.js'
import { UsageError } from './command.js'
import {
  type GatewayConfig,
  type HttpConfig,
  loadConfig,
  maxMessageBytesProblem,
  type PolicyConfig,
  type ReconnectConfig,
  type ServerConfig,
} from './config.js'

export interface GatewaySettings {
  /** Absolute workspace root of the file tools (and bash's working directory). */
  readonly root: string
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
  /** Defer every upstream tool when the upstreams list more than this many. */
  readonly deferAbove?: number
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
  const file: GatewayConfig = values.config === undefined ? {} : await loadConfig(values.config as string)
  const root = values.root !== undefined ? path.resolve(values.root as string) : (file.root ?? process.cwd())
  return {
    root,
    bash: (values.bash as boolean | undefined) ?? file.bash ?? false,
    mode: (mode as ToolPresentationMode | undefined) ?? file.mode ?? 'native',
    servers: file.servers ?? {},
    policy: file.policy ?? {},
    verbose: values.verbose === true,
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
  }
}
