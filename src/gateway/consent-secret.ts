// What a sign-in by URL keeps in the vault: the tokens the upstream's authorization server gave,
// as one sealed value (the vault stores one secret per person and server). A secret set by hand
// (`toolgate vault set`) is sent as it is.
import { isRecord } from '../util/is-record.js'

/** The tokens of a completed sign-in. */
export interface ConsentTokens {
  readonly accessToken: string
  readonly refreshToken?: string
  /** Milliseconds since the epoch. */
  readonly expiresAt?: number
}

const FORMAT = 'toolgate-oauth-tokens-1'

/** The vault value of `tokens`. */
export function sealTokens(tokens: ConsentTokens): string {
  return JSON.stringify({ format: FORMAT, ...tokens })
}

/** The tokens of a sign-in kept in a vault value; undefined for a secret set by hand. */
export function tokensOf(stored: string): ConsentTokens | undefined {
  if (!stored.startsWith('{')) return undefined
  let value: unknown
  try {
    value = JSON.parse(stored)
  } catch {
    return undefined
  }
  if (!isRecord(value) || value.format !== FORMAT || typeof value.accessToken !== 'string') return undefined
  return {
    accessToken: value.accessToken,
    ...(typeof value.refreshToken === 'string' ? { refreshToken: value.refreshToken } : {}),
    ...(typeof value.expiresAt === 'number' ? { expiresAt: value.expiresAt } : {}),
  }
}

/**
 * The credential a stored vault value sends: the access token of a sign-in, or the value itself.
 * Undefined when it is a sign-in's token that has expired (the person signs in again).
 */
export function credentialOf(stored: string, now = Date.now()): string | undefined {
  const tokens = tokensOf(stored)
  if (tokens === undefined) return stored
  if (tokens.expiresAt !== undefined && tokens.expiresAt <= now) return undefined
  return tokens.accessToken
}
