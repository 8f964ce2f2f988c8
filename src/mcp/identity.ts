// Who is calling over the gateway's HTTP face. The HTTP layer authenticates a request and hangs an
// AuthInfo on it; the MCP SDK hands that to every request handler as `extra.authInfo`, and this
// file is the one place that turns it into an Identity (and back), so both sides agree on the shape.
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'

/** An authenticated caller: who (subject), the groups it belongs to, the scopes its token grants, and its token's claims. */
export interface Identity {
  readonly subject: string
  readonly groups: readonly string[]
  readonly scopes: readonly string[]
  /** The verified claims of an OAuth access token; empty for a static token. */
  readonly claims: Readonly<Record<string, unknown>>
}

/**
 * The AuthInfo an authenticated request carries. `tokenId` is a stable id that is not the secret
 * (a hash prefix or the token's `jti`): handlers and logs never see the bearer token itself.
 */
export function authInfoFor(identity: Identity, tokenId: string, expiresAt?: number): AuthInfo {
  const info: AuthInfo = {
    token: tokenId,
    clientId: identity.subject,
    scopes: [...identity.scopes],
    extra: { subject: identity.subject, groups: [...identity.groups], claims: identity.claims },
  }
  if (expiresAt !== undefined) info.expiresAt = expiresAt
  return info
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The identity behind a request's AuthInfo, or undefined when the request was not authenticated
 * (a loopback gateway without `auth`) or the AuthInfo was not made by {@link authInfoFor}'s shape.
 */
export function identityOf(authInfo: AuthInfo | undefined): Identity | undefined {
  if (authInfo === undefined) return undefined
  const extra: unknown = authInfo.extra
  if (!isRecord(extra)) return undefined
  const subject = extra.subject
  const groups = strings(extra.groups)
  if (typeof subject !== 'string' || groups === undefined) return undefined
  const claims = isRecord(extra.claims) ? extra.claims : {}
  return Object.freeze({
    subject,
    groups: Object.freeze([...groups]),
    scopes: Object.freeze([...(strings(authInfo.scopes) ?? [])]),
    claims: Object.freeze({ ...claims }),
  })
}
