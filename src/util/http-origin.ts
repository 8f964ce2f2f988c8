// Who may talk to a loopback HTTP server (the viewer, `toolgate serve --http`): a web page the user
// visits can make the browser send requests to 127.0.0.1 under a name it controls (DNS rebinding)
// or from its own origin, so the Host and Origin headers are checked before anything is served.
import type { IncomingHttpHeaders } from 'node:http'

/** Names that always reach this machine; with the bound port they are accepted by default. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['127.0.0.1', 'localhost', '[::1]']

/** What a loopback server accepts beyond the defaults; entries are checked by {@link checkAllowedHost} / {@link checkAllowedOrigin}. */
export interface LoopbackAccess {
  /** Extra `Host` values: `name` (accepted with any port or none) or `name:port` (exactly). */
  readonly allowedHosts?: readonly string[]
  /** Extra `Origin` values: `scheme://host[:port]`. */
  readonly allowedOrigins?: readonly string[]
}

/** Why a request was refused: which header, and a sentence that says what is accepted. */
export interface AccessRefusal {
  readonly header: 'host' | 'origin'
  readonly message: string
}

const HOST_ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?$/

/** The normalized (lowercase) form of an allowed-host entry, or undefined when it is not `name` or `name:port`. */
export function checkAllowedHost(entry: string): string | undefined {
  const value = entry.trim().toLowerCase()
  const match = HOST_ENTRY.exec(value)
  if (match === null) return undefined
  if (match[2] !== undefined && Number(match[2]) > 65_535) return undefined
  return value
}

/** The normalized form of an allowed-origin entry (`http(s)://host[:port]`), or undefined when it is not an origin. */
export function checkAllowedOrigin(entry: string): string | undefined {
  const value = entry.trim().replace(/\/$/, '')
  if (!URL.canParse(value)) return undefined
  const url = new URL(value)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined
  return url.origin
}

/** The accepted Host values: exact `name:port` values, and names accepted with any port or none. */
function hostsFor(port: number, access: LoopbackAccess): { exact: Set<string>; names: Set<string> } {
  const exact = new Set(LOOPBACK_HOST_NAMES.map((name) => `${name}:${port}`))
  const names = new Set<string>()
  for (const entry of access.allowedHosts ?? []) {
    const host = checkAllowedHost(entry)
    if (host === undefined) continue
    if (/:\d+$/.test(host)) exact.add(host)
    else names.add(host)
  }
  return { exact, names }
}

/** The Host header without its port (an IPv6 literal keeps its brackets). */
function hostName(host: string): string {
  return host.replace(/:\d*$/, '')
}

function hostAccepted(host: string, accepted: { exact: Set<string>; names: Set<string> }): boolean {
  const value = host.toLowerCase()
  return accepted.exact.has(value) || accepted.names.has(hostName(value))
}

/** The Origin values accepted on `port` (no Origin header at all is accepted too). */
function originsFor(port: number, access: LoopbackAccess): Set<string> {
  const origins = new Set(LOOPBACK_HOST_NAMES.map((name) => `http://${name}:${port}`))
  for (const entry of access.allowedOrigins ?? []) {
    const origin = checkAllowedOrigin(entry)
    if (origin !== undefined) origins.add(origin)
  }
  return origins
}

/** A header value as it may be quoted in a refusal: escaped and bounded. */
function quote(value: string): string {
  return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)
}

/**
 * Build the check for a server bound to `port` on a loopback address: the Host must be a loopback
 * name with that port (or an allowed host), and the Origin, when present, a loopback origin with
 * that port (or an allowed origin). Returns undefined for an accepted request.
 */
export function loopbackAccessCheck(
  port: number,
  access: LoopbackAccess = {},
): (headers: IncomingHttpHeaders) => AccessRefusal | undefined {
  const hosts = hostsFor(port, access)
  const origins = originsFor(port, access)
  const hostList = [...hosts.exact, ...hosts.names].join(', ')
  const originList = [...origins].join(', ')
  return (headers) => {
    const host = headers.host
    if (host === undefined || !hostAccepted(host, hosts))
      return {
        header: 'host',
        message: `Host ${host === undefined ? '(missing)' : quote(host)} is not accepted; accepted: ${hostList}`,
      }
    const origin = headers.origin
    if (origin !== undefined && !origins.has(origin.toLowerCase()))
      return {
        header: 'origin',
        message: `Origin ${quote(origin)} is not accepted; accepted: no Origin, ${originList}`,
      }
    return undefined
  }
}
