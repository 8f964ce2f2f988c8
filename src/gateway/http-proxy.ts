// `serve --http` behind a reverse proxy that terminates TLS: X-Forwarded-For, -Proto and -Host are
// believed only when the TCP peer is one of the configured proxy addresses; from anyone else they
// are ignored, since any client can write them.
import { isIP } from 'node:net'

/** What a request says about its client once the trusted proxies in front of it are accounted for. */
export interface ForwardedView {
  /** The client's address: the nearest untrusted hop (the TCP peer when no trusted proxy is involved). */
  readonly client: string
  /** The Host the client asked for (X-Forwarded-Host from a trusted proxy, else the Host header). */
  readonly host: string | undefined
  /** The scheme the client used (X-Forwarded-Proto from a trusted proxy, else "http"). */
  readonly proto: string
  /** Whether the TCP peer is a trusted proxy. */
  readonly viaProxy: boolean
}

/** An address as compared: IPv4-mapped IPv6 (`::ffff:10.0.0.1`) as plain IPv4, IPv6 lowercase. */
export function normalizeAddress(address: string): string {
  const value = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
  return value.startsWith('::ffff:') && isIP(value.slice(7)) === 4 ? value.slice(7) : value
}

/** The addresses of a `--trust-proxy` value (comma-separated IPs), or the entry that is not an IP address. */
export function parseTrustProxy(values: readonly string[]): { addresses: string[] } | { bad: string } {
  const addresses: string[] = []
  for (const value of values)
    for (const entry of value.split(',')) {
      const address = normalizeAddress(entry)
      if (isIP(address) === 0) return { bad: entry.trim() }
      addresses.push(address)
    }
  return { addresses }
}

function first(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value
  const head = text?.split(',')[0]?.trim()
  return head === undefined || head === '' ? undefined : head
}

/** The view of a request from `peer` with `headers`, trusting the proxies in `trusted`. */
export function forwardedView(
  peer: string | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  trusted: ReadonlySet<string>,
): ForwardedView {
  const direct = normalizeAddress(peer ?? '')
  const host = typeof headers.host === 'string' ? headers.host : undefined
  if (!trusted.has(direct)) return { client: direct, host, proto: 'http', viaProxy: false }
  // X-Forwarded-For lists the client first and each proxy after it; walking back from the peer,
  // the first address that is not a trusted proxy is the client.
  const forwardedFor = headers['x-forwarded-for']
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? ''))
    .split(',')
    .map((hop) => normalizeAddress(hop))
    .filter((hop) => hop !== '')
  let client = direct
  for (let i = hops.length - 1; i >= 0; i--) {
    client = hops[i]
    if (!trusted.has(client)) break
  }
  const proto = first(headers['x-forwarded-proto'])?.toLowerCase()
  return {
    client,
    host: first(headers['x-forwarded-host']) ?? host,
    proto: proto === 'https' || proto === 'http' ? proto : 'http',
    viaProxy: true,
  }
}

/** Whether `host` (a bind address or host name) reaches only this machine. */
export function isLoopbackHost(host: string): boolean {
  const value = normalizeAddress(host)
  if (value === 'localhost') return true
  if (isIP(value) === 4) return value.startsWith('127.')
  return value === '::1'
}
