// The gateway config file: read, checked key by key (unknown keys are errors), every issue reported
// with its path before anything starts.
import path from 'node:path'
import type { ToolPresentationMode } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { McpOAuthOptions } from '../mcp/gateway.js'
import { checkPolicyDocument, type PolicyDocument } from '../policy/index.js'
import { checkAllowedHost, checkAllowedOrigin } from '../util/http-origin.js'
import { isRecord } from '../util/is-record.js'
import { type AuthConfig, checkAuth, checkLimits, type LimitsConfig } from './config-auth.js'
import { type CallerAuthConfig, checkCallerAuth, isCallerAuth, resolveCallerAuthPaths } from './config-caller-auth.js'
import { checkDeferAbove, checkServerDefer, type ServerDefer } from './config-defer.js'
import { checkFiles } from './config-files.js'
import { checkMetricsConfig, checkRequired, type MetricsConfig } from './config-operations.js'
import { readConfigText } from './config-read.js'
import { checkStoreConfig, type StoreConfig } from './config-store.js'
import { checkUpstreamAuth } from './config-upstream-auth.js'
import { checkSandboxShape, resolveSandboxPaths, type UpstreamSandbox } from './upstream-sandbox.js'

export type ServerConfig = (
  | {
      command: string
      args?: string[]
      env?: Record<string, string>
      /** Run the server under bubblewrap (see upstream-sandbox.ts); the paths are absolute after loadConfig. */
      sandbox?: UpstreamSandbox
    }
  | { url: string; headers?: Record<string, string>; auth?: McpOAuthOptions | CallerAuthConfig }
) & {
  /** Put before each of the server's tool names; default `"<name>__"`, `""` keeps the names as they are. */
  prefix?: string
  /** Defer the server's tools (all, or those whose remote names match) behind `search_tools`. */
  defer?: ServerDefer
  /** `serve --http` is not ready (`GET /readyz` answers 503) while this server is down. */
  required?: boolean
}

/** How an upstream server that is down is retried: a delay doubling from `initialDelayMs` to `maxDelayMs`. */
export interface ReconnectConfig {
  initialDelayMs?: number
  maxDelayMs?: number
}

/** The config's `policy`: the policy document the library accepts too (see src/policy). */
export type PolicyConfig = PolicyDocument

/** Who may reach `serve --http` besides loopback names and origins with the bound port. */
export interface HttpConfig {
  /** Extra accepted `Host` values: `name` (any port) or `name:port`. */
  allowedHosts?: string[]
  /** Extra accepted `Origin` values: `http(s)://host[:port]`. */
  allowedOrigins?: string[]
  /** Bounds of each session's resumability event store (defaults: 1000 events, 8 MiB, 5 minutes). */
  eventStore?: { maxEvents?: number; maxBytes?: number; ttlMs?: number }
  /** The SSE `retry` a client waits before resuming a lost stream, in ms (default 1000). */
  retryMs?: number
}

export interface GatewayConfig {
  root?: string
  /** Serve toolgate's own file tools (default true); false serves the upstreams (and bash, if on) alone. */
  files?: boolean
  bash?: boolean
  mode?: ToolPresentationMode
  servers?: Record<string, ServerConfig>
  policy?: PolicyConfig
  http?: HttpConfig
  reconnect?: ReconnectConfig
  /** Largest JSON-RPC message read over stdio, from the client or an upstream server, in bytes. */
  maxMessageBytes?: number
  /** Who may call `serve --http` (static bearer tokens and/or an OAuth issuer). */
  auth?: AuthConfig
  /** Per-identity rate and concurrency limits, session bounds and the upstream call cap of `serve --http`. */
  limits?: LimitsConfig
  /** The audit journal `serve` appends every call, approval and decision to, with who made it. */
  journal?: string
  /** Where journal and shared state live (PostgreSQL); the gateway keeps none without it. */
  store?: StoreConfig
  /** Defer every upstream tool behind `search_tools` when the upstreams list more than this many. */
  deferAbove?: number
  /** What `GET /metrics` of `serve --http` may label calls with. */
  metrics?: MetricsConfig
}

const MODES: readonly string[] = ['native', 'code', 'both']
/** Server names become tool-name prefixes (`name__tool`), so they stay identifier-like. */
const SERVER_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/
/** A prefix is part of every tool name, so it keeps to the characters MCP tool names use. */
const PREFIX = /^[A-Za-z0-9_.-]{0,64}$/

/** Read and check a config file; a relative `root`, `journal` or sandbox path is resolved against the file's directory. */
export async function loadConfig(file: string): Promise<GatewayConfig> {
  let text: string
  try {
    text = readConfigText(file)
  } catch (error) {
    throw new ConfigError(file, `cannot read the file: ${(error as Error).message}`)
  }
  const config = parseConfig(text, file)
  if (config.root !== undefined) config.root = path.resolve(path.dirname(path.resolve(file)), config.root)
  if (config.journal !== undefined) config.journal = path.resolve(path.dirname(path.resolve(file)), config.journal)
  for (const server of Object.values(config.servers ?? {}))
    if ('command' in server && server.sandbox !== undefined)
      server.sandbox = resolveSandboxPaths(server.sandbox, path.dirname(path.resolve(file)))
    else if ('url' in server && server.auth !== undefined && isCallerAuth(server.auth))
      server.auth = resolveCallerAuthPaths(server.auth as CallerAuthConfig, path.dirname(path.resolve(file)))
  return config
}

/** Parse and check config text. */
export function parseConfig(text: string, source: string): GatewayConfig {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(source, `not valid JSON: ${(error as Error).message}`)
  }
  const issues = duplicateKeys(text)
  const config = checkConfig(value, issues)
  if (issues.length) throw new ConfigError(source, issues)
  return config
}

/** The tool-name prefix of an upstream server: its `prefix`, or one made from its name. */
export function serverPrefix(name: string, server?: ServerConfig): string {
  return server?.prefix ?? `${name.replace(/-/g, '_')}__`
}

function checkConfig(value: unknown, issues: string[]): GatewayConfig {
  if (!isRecord(value)) {
    issues.push('(root): expected an object')
    return {}
  }
  unknownKeys(
    value,
    '',
    [
      'root',
      'files',
      'bash',
      'mode',
      'servers',
      'policy',
      'http',
      'reconnect',
      'maxMessageBytes',
      'auth',
      'limits',
      'journal',
      'store',
      'deferAbove',
      'metrics',
    ],
    issues,
  )
  const config: GatewayConfig = {}
  if (value.root !== undefined) {
    if (typeof value.root === 'string' && value.root !== '') config.root = value.root
    else issues.push('root: expected a non-empty directory path')
  }
  if (value.bash !== undefined) {
    if (typeof value.bash === 'boolean') config.bash = value.bash
    else issues.push('bash: expected true or false')
  }
  if (value.mode !== undefined) {
    if (typeof value.mode === 'string' && MODES.includes(value.mode)) config.mode = value.mode as ToolPresentationMode
    else issues.push(`mode: expected "native", "code" or "both", got ${JSON.stringify(value.mode)}`)
  }
  if (value.journal !== undefined) {
    if (typeof value.journal === 'string' && value.journal !== '') config.journal = value.journal
    else issues.push('journal: expected a non-empty file path')
  }
  if (value.servers !== undefined) config.servers = checkServers(value.servers, issues)
  if (value.policy !== undefined) config.policy = checkPolicyDocument(value.policy, issues)
  if (value.http !== undefined) config.http = checkHttp(value.http, issues)
  if (value.reconnect !== undefined) config.reconnect = checkReconnect(value.reconnect, issues)
  if (value.auth !== undefined) config.auth = checkAuth(value.auth, issues)
  if (value.limits !== undefined) config.limits = checkLimits(value.limits, issues)
  if (value.store !== undefined) config.store = checkStoreConfig(value.store, issues)
  if (value.metrics !== undefined) config.metrics = checkMetricsConfig(value.metrics, issues)
  const files = checkFiles(value.files, issues)
  if (files !== undefined) config.files = files
  const deferAbove = checkDeferAbove(value.deferAbove, issues)
  if (deferAbove !== undefined) config.deferAbove = deferAbove
  if (value.maxMessageBytes !== undefined) {
    const problem = maxMessageBytesProblem(value.maxMessageBytes)
    if (problem === undefined) config.maxMessageBytes = value.maxMessageBytes as number
    else issues.push(`maxMessageBytes: ${problem}`)
  }
  return config
}

/** The smallest stdio message limit: an initialize exchange must always fit. */
export const MIN_MESSAGE_BYTES = 64 * 1024

/** Why a `maxMessageBytes` value is unusable, or undefined when it is fine. */
export function maxMessageBytesProblem(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= MIN_MESSAGE_BYTES) return undefined
  return `expected a whole number of bytes, at least ${MIN_MESSAGE_BYTES}, got ${JSON.stringify(value)}`
}

function checkHttp(value: unknown, issues: string[]): HttpConfig {
  const http: HttpConfig = {}
  if (!isRecord(value)) {
    issues.push('http: expected an object { allowedHosts?, allowedOrigins?, eventStore?, retryMs? }')
    return http
  }
  unknownKeys(value, 'http', ['allowedHosts', 'allowedOrigins', 'eventStore', 'retryMs'], issues)
  if (value.retryMs !== undefined) {
    if (wholeNumber(value.retryMs, 0)) http.retryMs = value.retryMs
    else issues.push(`http.retryMs: expected a whole number of ms, at least 0, got ${JSON.stringify(value.retryMs)}`)
  }
  if (value.eventStore !== undefined) http.eventStore = checkEventStore(value.eventStore, issues)
  const lists = [
    [
      'allowedHosts',
      checkAllowedHost,
      'a host name with an optional port, e.g. "gateway.local" or "gateway.local:8080"',
    ],
    ['allowedOrigins', checkAllowedOrigin, 'an origin, e.g. "https://app.example" or "http://gateway.local:8080"'],
  ] as const
  for (const [key, check, expected] of lists) {
    const list = value[key]
    if (list === undefined) continue
    if (!Array.isArray(list)) {
      issues.push(`http.${key}: expected an array of strings`)
      continue
    }
    list.forEach((entry, i) => {
      if (typeof entry !== 'string' || check(entry) === undefined)
        issues.push(`http.${key}[${i}]: expected ${expected}, got ${JSON.stringify(entry)}`)
    })
    http[key] = list as string[]
  }
  return http
}

function wholeNumber(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min
}

function checkEventStore(value: unknown, issues: string[]): NonNullable<HttpConfig['eventStore']> {
  const limits: NonNullable<HttpConfig['eventStore']> = {}
  if (!isRecord(value)) {
    issues.push('http.eventStore: expected an object { maxEvents?, maxBytes?, ttlMs? }')
    return limits
  }
  unknownKeys(value, 'http.eventStore', ['maxEvents', 'maxBytes', 'ttlMs'], issues)
  for (const key of ['maxEvents', 'maxBytes', 'ttlMs'] as const) {
    const limit = value[key]
    if (limit === undefined) continue
    if (wholeNumber(limit, 1)) limits[key] = limit
    else issues.push(`http.eventStore.${key}: expected a whole number above 0, got ${JSON.stringify(limit)}`)
  }
  return limits
}

function checkReconnect(value: unknown, issues: string[]): ReconnectConfig {
  const reconnect: ReconnectConfig = {}
  if (!isRecord(value)) {
    issues.push('reconnect: expected an object { initialDelayMs?, maxDelayMs? }')
    return reconnect
  }
  unknownKeys(value, 'reconnect', ['initialDelayMs', 'maxDelayMs'], issues)
  for (const key of ['initialDelayMs', 'maxDelayMs'] as const) {
    const ms = value[key]
    if (ms === undefined) continue
    if (typeof ms === 'number' && ms > 0 && Number.isFinite(ms)) reconnect[key] = ms
    else issues.push(`reconnect.${key}: expected a positive number of milliseconds, got ${JSON.stringify(ms)}`)
  }
  const { initialDelayMs = 1000, maxDelayMs = 60_000 } = reconnect
  if (maxDelayMs < initialDelayMs)
    issues.push(`reconnect.maxDelayMs: expected at least initialDelayMs (${initialDelayMs}), got ${maxDelayMs}`)
  return reconnect
}

function checkServers(value: unknown, issues: string[]): Record<string, ServerConfig> {
  const servers: Record<string, ServerConfig> = {}
  if (!isRecord(value)) {
    issues.push(
      'servers: expected an object of { name: { command, args?, env?, prefix?, sandbox? } | { url, headers?, prefix? } }',
    )
    return servers
  }
  const prefixes = new Map<string, string>()
  for (const [name, entry] of Object.entries(value)) {
    const at = `servers.${name}`
    if (!SERVER_NAME.test(name)) {
      issues.push(`${at}: a server name starts with a letter and holds only letters, digits, "_" and "-"`)
      continue
    }
    if (!isRecord(entry)) {
      issues.push(`${at}: expected { command, args?, env? } or { url, headers? }`)
      continue
    }
    let prefix = serverPrefix(name)
    if (entry.prefix !== undefined) {
      if (typeof entry.prefix === 'string' && PREFIX.test(entry.prefix)) prefix = entry.prefix
      else
        issues.push(
          `${at}.prefix: expected up to 64 letters, digits, "_", "-" or ".", or "" for none, got ${JSON.stringify(entry.prefix)}`,
        )
    }
    // Two servers that share a prefix are most likely a slip; several without one may well serve
    // different names, and any name they share is reported when they start.
    const clash = prefixes.get(prefix)
    if (clash !== undefined && prefix !== '')
      issues.push(
        `${at}: its tool prefix "${prefix}" duplicates the prefix of servers.${clash}; rename one of them or set its "prefix"`,
      )
    prefixes.set(prefix, name)
    const defer = checkServerDefer(entry.defer, at, issues)
    const required = checkRequired(entry.required, at, issues)
    const prefixed = {
      ...(typeof entry.prefix === 'string' ? { prefix: entry.prefix } : {}),
      ...(defer === undefined ? {} : { defer }),
      ...(required === undefined ? {} : { required }),
    }
    if ('command' in entry && 'url' in entry) {
      issues.push(`${at}: give either command (stdio) or url (Streamable HTTP), not both`)
      continue
    }
    if ('url' in entry) {
      unknownKeys(entry, at, ['url', 'headers', 'prefix', 'auth', 'defer', 'required'], issues)
      if (typeof entry.url !== 'string' || !URL.canParse(entry.url)) issues.push(`${at}.url: expected an http(s) URL`)
      else if (!/^https?:$/.test(new URL(entry.url).protocol)) issues.push(`${at}.url: expected an http(s) URL`)
      const headers = stringRecord(entry.headers, `${at}.headers`, issues)
      const auth =
        entry.auth === undefined
          ? undefined
          : isCallerAuth(entry.auth)
            ? checkCallerAuth(entry.auth as Record<string, unknown>, at, issues)
            : checkUpstreamAuth(entry.auth, at, issues)
      servers[name] = {
        url: entry.url as string,
        ...(headers ? { headers } : {}),
        ...(auth ? { auth } : {}),
        ...prefixed,
      }
    } else if ('command' in entry) {
      unknownKeys(entry, at, ['command', 'args', 'env', 'prefix', 'defer', 'sandbox', 'required'], issues)
      if (typeof entry.command !== 'string' || entry.command === '')
        issues.push(`${at}.command: expected a non-empty string`)
      let args: string[] | undefined
      if (entry.args !== undefined) {
        if (Array.isArray(entry.args)) {
          entry.args.forEach((arg, i) => {
            if (typeof arg !== 'string') issues.push(`${at}.args[${i}]: expected a string`)
          })
          args = entry.args as string[]
        } else issues.push(`${at}.args: expected an array of strings`)
      }
      const env = stringRecord(entry.env, `${at}.env`, issues)
      const sandbox = checkSandboxShape(entry.sandbox, `${at}.sandbox`, issues)
      servers[name] = {
        command: entry.command as string,
        ...(args ? { args } : {}),
        ...(env ? { env } : {}),
        ...(sandbox ? { sandbox } : {}),
        ...prefixed,
      }
    } else {
      issues.push(`${at}: expected command (a stdio server) or url (a Streamable HTTP server)`)
    }
  }
  return servers
}

function stringRecord(value: unknown, at: string, issues: string[]): Record<string, string> | undefined {
  if (value === undefined) return undefined
  if (!isRecord(value)) {
    issues.push(`${at}: expected an object of strings`)
    return undefined
  }
  for (const [key, v] of Object.entries(value))
    if (typeof v !== 'string') issues.push(`${at}.${key}: expected a string`)
  return value as Record<string, string>
}

function unknownKeys(value: Record<string, unknown>, at: string, known: readonly string[], issues: string[]): void {
  for (const key of Object.keys(value))
    if (!known.includes(key))
      issues.push(`${at ? `${at}.` : ''}${key}: unknown key (expected ${known.map((k) => `"${k}"`).join(', ')})`)
}

/**
 * JSON.parse keeps the last of two equal keys silently; a config that names a server twice would
 * lose one without a word, so duplicates are reported with their path. `text` is valid JSON.
 */
function duplicateKeys(text: string): string[] {
  const issues: string[] = []
  const stack: { keys: Set<string> | undefined; path: string; key: string | undefined; index: number }[] = []
  const pathOf = () => {
    const top = stack[stack.length - 1]
    return top ? (top.keys ? joinPath(top.path, top.key ?? '') : `${top.path}[${top.index}]`) : ''
  }
  let i = 0
  let expectKey = false
  while (i < text.length) {
    const ch = text[i]
    if (ch === '"') {
      let j = i + 1
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      const top = stack[stack.length - 1]
      if (expectKey && top?.keys) {
        const key = JSON.parse(text.slice(i, j + 1)) as string
        if (top.keys.has(key)) issues.push(`${joinPath(top.path, key)}: duplicate key (JSON keeps only the last one)`)
        top.keys.add(key)
        top.key = key
        expectKey = false
      }
      i = j + 1
      continue
    }
    if (ch === '{') {
      stack.push({ keys: new Set(), path: pathOf(), key: undefined, index: 0 })
      expectKey = true
    } else if (ch === '[') {
      stack.push({ keys: undefined, path: pathOf(), key: undefined, index: 0 })
    } else if (ch === '}' || ch === ']') {
      stack.pop()
    } else if (ch === ',') {
      const top = stack[stack.length - 1]
      if (top?.keys) expectKey = true
      else if (top) top.index++
    }
    i++
  }
  return issues
}

function joinPath(base: string, key: string): string {
  return base ? `${base}.${key}` : key
}
