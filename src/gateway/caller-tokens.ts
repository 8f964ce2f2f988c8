// The OAuth access tokens callers authenticated with, by subject, kept in memory only for the
// upstreams that exchange them (RFC 8693). Handlers and logs never see a caller's token: only the
// token exchange asks this table, and only for the subject of the call it makes.

/** Subjects remembered at most; past this the least recently seen is forgotten. */
const MAX_SUBJECTS = 10_000

interface Remembered {
  readonly token: string
  /** Seconds since the epoch. */
  readonly exp: number
}

const tokens = new Map<string, Remembered>()

/** A verified OAuth caller's token (the newest one of the subject wins). */
export function rememberCallerToken(subject: string, token: string, exp: number): void {
  const known = tokens.get(subject)
  if (known !== undefined && known.exp > exp) return
  tokens.delete(subject)
  tokens.set(subject, { token, exp })
  if (tokens.size > MAX_SUBJECTS) {
    const [oldest] = tokens.keys()
    if (oldest !== undefined) tokens.delete(oldest)
  }
}

/** The subject's OAuth token when it is still valid, or undefined (never one, or expired). */
export function callerTokenOf(subject: string, nowSec = Date.now() / 1000): string | undefined {
  const known = tokens.get(subject)
  if (known === undefined) return undefined
  if (known.exp <= nowSec) {
    tokens.delete(subject)
    return undefined
  }
  return known.token
}
