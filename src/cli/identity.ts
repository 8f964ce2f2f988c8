// Who is calling: the identity an authenticated HTTP request carries (the SDK's AuthInfo, set by
// the gateway's authentication), narrowed from untrusted shape to the one policy and audit read.
import { isRecord } from '../util/is-record.js'

/** An authenticated caller, as policy rules and the journal see it. */
export interface Identity {
  /** The stable name of the caller (a token's subject, a JWT's `sub`). */
  readonly subject: string
  readonly groups: readonly string[]
  /** OAuth scopes granted to the token (empty for a static token without scopes). */
  readonly scopes: readonly string[]
  /** Further claims of the token (JWT claims); empty when the authentication has none. */
  readonly claims: Readonly<Record<string, unknown>>
}

/**
 * The identity in an `AuthInfo` (`req.auth`, `extra.authInfo`): `{ clientId, scopes, extra: { subject,
 * groups, claims? } }`. Undefined when there is none or it does not have that shape, so a malformed
 * authentication never becomes a caller with a made-up name.
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
