// Who is calling over the gateway's HTTP face. The HTTP layer authenticates a request and hangs an
// AuthInfo on it; the MCP SDK hands that to every request handler as `extra.authInfo`, and this
// file is the one place that turns it into an Identity (and back), so both sides agree on the shape.

import { isRecord } from '../../util/is-record.js'
import type { AuthInfo } from './wire-types.js'

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

/**
 * The identity behind a request's AuthInfo, or undefined when the request was not authenticated
 * (a loopback gateway without `auth`) or the AuthInfo does not have {@link authInfoFor}'s shape, so
 * a malformed authentication never becomes a caller with a made-up name.
 */
export function identityOf(authInfo: unknown): Identity | undefined {
  if (!isRecord(authInfo)) return undefined
  const extra = authInfo.extra
  if (!isRecord(extra)) return undefined
  const subject = typeof extra.subject === 'string' && extra.subject !== '' ? extra.subject : undefined
  if (subject === undefined) return undefined
  const groups = stringList(extra.groups)
  const scopes = stringList(authInfo.scopes)
  if (groups === undefined || scopes === undefined) return undefined
  const claims = isRecord(extra.claims) ? Object.freeze({ ...extra.claims }) : Object.freeze({})
  return Object.freeze({ subject, groups: Object.freeze(groups), scopes: Object.freeze(scopes), claims })
}

function stringList(value: unknown): string[] | undefined {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return undefined
  return [...value]
}
