// The config keys of a gateway a team shares: `auth` (who may call `serve --http`) and `limits`
// (how much each caller may take). Checked key by key like the rest of the config file; every
// problem is reported with its path.

import { NUL_REFUSAL } from '../policy/index.js'
import { isRecord } from '../util/is-record.js'

/** One static bearer token: only the SHA-256 of the token is stored, with who presents it. */
export interface StaticTokenConfig {
  /** Lowercase hex SHA-256 of the token (64 digits). */
  sha256: string
  subject: string
  groups?: string[]
  scopes?: string[]
}

/** The gateway as an OAuth 2.1 resource server: JWT access tokens from one authorization server. */
export interface OAuthConfig {
  /** The authorization server's issuer identifier; the `iss` every token must carry. */
  issuer: string
  /** The gateway's resource URL (e.g. `https://gateway.example/mcp`); the `aud` every token must carry. */
  audience: string
  /** Where the issuer publishes its signing keys (JWKS). */
  jwksUri: string
  /** Signature algorithms accepted (default: the RSA, RSA-PSS, ECDSA and EdDSA ones; never `none`). */
  algorithms?: string[]
  /** Scopes every token must grant to use the gateway at all (default none). */
  requiredScopes?: string[]
  /** Scopes advertised in the protected resource metadata (default: `requiredScopes`). */
  scopesSupported?: string[]
  /** The claim holding the caller's groups (default `"groups"`). */
  groupsClaim?: string
  /** Allowed clock skew when checking `exp` and `nbf`, in seconds (default 5). */
  clockToleranceSec?: number
  /** How long fetched keys are trusted before the JWKS is fetched again, in ms (default 600000). */
  jwksCacheMaxAgeMs?: number
  /** The least time between two JWKS fetches (an unknown key id fetches again after it), in ms (default 30000). */
  jwksCooldownMs?: number
}

export interface AuthConfig {
  tokens?: StaticTokenConfig[]
  /** The name of an environment variable holding more static tokens: a JSON array shaped like `tokens`. */
  tokensEnv?: string
  oauth?: OAuthConfig
}

/** A token bucket: `perSecond` tokens added each second, at most `burst` kept. */
export interface RateConfig {
  perSecond: number
  burst: number
}

/** Limits of one identity; a rule's values override the defaults for the identities it matches. */
export interface IdentityLimits {
  rate?: RateConfig
  /** Requests of one identity in progress at once (default 16). */
  concurrency?: number
}

export interface LimitsRule extends IdentityLimits {
  who: { subject?: string; group?: string }
}

export interface LimitsConfig extends IdentityLimits {
  /** Sessions one identity may hold at once (default 16). */
  sessionsPerIdentity?: number
  /** A session nobody used for this long is closed, in ms (default 1800000, 30 minutes). */
  sessionIdleMs?: number
  /** Calls of upstream servers' tools in progress at once across every caller (default 64); more wait. */
  upstreamConcurrency?: number
  /** Per-identity overrides; the first rule whose `who` matches wins. */
  rules?: LimitsRule[]
}

const SHA256_HEX = /^[0-9a-f]{64}$/
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** Asymmetric JWS algorithms; `none` and the shared-secret HS* ones have no place in a resource server. */
export const JWT_ALGORITHMS: readonly string[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]

function unknownKeys(value: Record<string, unknown>, at: string, known: readonly string[], issues: string[]): void {
  for (const key of Object.keys(value))
    if (!known.includes(key))
      issues.push(`${at}.${key}: unknown key (expected ${known.map((k) => `"${k}"`).join(', ')})`)
}

function stringList(value: unknown, at: string, issues: string[], what = 'non-empty strings'): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item !== '')) {
    issues.push(`${at}: expected an array of ${what}`)
    return undefined
  }
  const nul = value.findIndex((item: string) => item.includes('\u0000'))
  if (nul >= 0) {
    issues.push(`${at}[${nul}]: ${NUL_REFUSAL}`)
    return undefined
  }
  return value as string[]
}

function wholeNumber(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min
}

/**
 * An issuer or JWKS URL: https, or http only on a loopback host (a key set fetched in the clear
 * from the network could be swapped by anyone on the path).
 */
function secureUrl(value: unknown, at: string, issues: string[]): string | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) {
    issues.push(`${at}: expected an https URL, got ${JSON.stringify(value)}`)
    return undefined
  }
  const url = new URL(value)
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    issues.push(
      `${at}: expected an https URL (http only on 127.0.0.1, localhost or [::1]), got ${JSON.stringify(value)}`,
    )
    return undefined
  }
  return value
}

/** Check the static token entries at `at` (the config's `auth.tokens` or the environment variable's array). */
export function checkTokenList(value: unknown, at: string, issues: string[]): StaticTokenConfig[] {
  if (!Array.isArray(value)) {
    issues.push(`${at}: expected an array of { sha256, subject, groups?, scopes? }`)
    return []
  }
  const tokens: StaticTokenConfig[] = []
  const seen = new Set<string>()
  value.forEach((entry, i) => {
    const here = `${at}[${i}]`
    if (!isRecord(entry)) {
      issues.push(`${here}: expected { sha256, subject, groups?, scopes? }`)
      return
    }
    unknownKeys(entry, here, ['sha256', 'subject', 'groups', 'scopes'], issues)
    const before = issues.length
    if (typeof entry.sha256 !== 'string' || !SHA256_HEX.test(entry.sha256))
      issues.push(`${here}.sha256: expected the token's SHA-256 as 64 lowercase hex digits (not the token itself)`)
    else if (seen.has(entry.sha256)) issues.push(`${here}.sha256: the same token is listed twice`)
    else seen.add(entry.sha256)
    if (typeof entry.subject !== 'string' || entry.subject === '')
      issues.push(`${here}.subject: expected a non-empty string`)
    else if (entry.subject.includes('\u0000')) issues.push(`${here}.subject: ${NUL_REFUSAL}`)
    const groups = stringList(entry.groups, `${here}.groups`, issues)
    const scopes = stringList(entry.scopes, `${here}.scopes`, issues)
    if (issues.length > before) return
    tokens.push({
      sha256: entry.sha256 as string,
      subject: entry.subject as string,
      ...(groups ? { groups } : {}),
      ...(scopes ? { scopes } : {}),
    })
  })
  return tokens
}

const OAUTH_KEYS = [
  'issuer',
  'audience',
  'jwksUri',
  'algorithms',
  'requiredScopes',
  'scopesSupported',
  'groupsClaim',
  'clockToleranceSec',
  'jwksCacheMaxAgeMs',
  'jwksCooldownMs',
] as const

function checkOAuth(value: unknown, issues: string[]): OAuthConfig | undefined {
  if (!isRecord(value)) {
    issues.push('auth.oauth: expected an object { issuer, audience, jwksUri, ... }')
    return undefined
  }
  unknownKeys(value, 'auth.oauth', OAUTH_KEYS, issues)
  const before = issues.length
  const issuer = secureUrl(value.issuer, 'auth.oauth.issuer', issues)
  const jwksUri = secureUrl(value.jwksUri, 'auth.oauth.jwksUri', issues)
  let audience: string | undefined
  if (
    typeof value.audience === 'string' &&
    URL.canParse(value.audience) &&
    /^https?:$/.test(new URL(value.audience).protocol)
  )
    audience = value.audience
  else
    issues.push(
      `auth.oauth.audience: expected the gateway's resource URL, e.g. "https://gateway.example/mcp", got ${JSON.stringify(value.audience)}`,
    )
  const algorithms = stringList(value.algorithms, 'auth.oauth.algorithms', issues)
  algorithms?.forEach((alg, i) => {
    if (!JWT_ALGORITHMS.includes(alg))
      issues.push(
        `auth.oauth.algorithms[${i}]: expected one of ${JWT_ALGORITHMS.join(', ')}, got ${JSON.stringify(alg)}`,
      )
  })
  const requiredScopes = stringList(value.requiredScopes, 'auth.oauth.requiredScopes', issues)
  const scopesSupported = stringList(value.scopesSupported, 'auth.oauth.scopesSupported', issues)
  if (value.groupsClaim !== undefined && (typeof value.groupsClaim !== 'string' || value.groupsClaim === ''))
    issues.push('auth.oauth.groupsClaim: expected a claim name')
  if (value.clockToleranceSec !== undefined && !wholeNumber(value.clockToleranceSec, 0))
    issues.push(`auth.oauth.clockToleranceSec: expected a whole number of seconds, at least 0`)
  for (const key of ['jwksCacheMaxAgeMs', 'jwksCooldownMs'] as const)
    if (value[key] !== undefined && !wholeNumber(value[key], 0))
      issues.push(`auth.oauth.${key}: expected a whole number of ms, at least 0`)
  if (issues.length > before || issuer === undefined || jwksUri === undefined || audience === undefined)
    return undefined
  return {
    issuer,
    audience,
    jwksUri,
    ...(algorithms ? { algorithms } : {}),
    ...(requiredScopes ? { requiredScopes } : {}),
    ...(scopesSupported ? { scopesSupported } : {}),
    ...(value.groupsClaim !== undefined ? { groupsClaim: value.groupsClaim as string } : {}),
    ...(value.clockToleranceSec !== undefined ? { clockToleranceSec: value.clockToleranceSec as number } : {}),
    ...(value.jwksCacheMaxAgeMs !== undefined ? { jwksCacheMaxAgeMs: value.jwksCacheMaxAgeMs as number } : {}),
    ...(value.jwksCooldownMs !== undefined ? { jwksCooldownMs: value.jwksCooldownMs as number } : {}),
  }
}

/** Check the config's `auth` key. */
export function checkAuth(value: unknown, issues: string[]): AuthConfig {
  const auth: AuthConfig = {}
  if (!isRecord(value)) {
    issues.push('auth: expected an object { tokens?, tokensEnv?, oauth? }')
    return auth
  }
  unknownKeys(value, 'auth', ['tokens', 'tokensEnv', 'oauth'], issues)
  if (value.tokens !== undefined) auth.tokens = checkTokenList(value.tokens, 'auth.tokens', issues)
  if (value.tokensEnv !== undefined) {
    if (typeof value.tokensEnv === 'string' && ENV_NAME.test(value.tokensEnv)) auth.tokensEnv = value.tokensEnv
    else issues.push(`auth.tokensEnv: expected an environment variable name, got ${JSON.stringify(value.tokensEnv)}`)
  }
  if (value.oauth !== undefined) {
    const oauth = checkOAuth(value.oauth, issues)
    if (oauth) auth.oauth = oauth
  }
  if (value.tokens === undefined && value.tokensEnv === undefined && value.oauth === undefined)
    issues.push('auth: expected at least one of "tokens", "tokensEnv" or "oauth"')
  return auth
}

function checkRate(value: unknown, at: string, issues: string[]): RateConfig | undefined {
  if (!isRecord(value)) {
    issues.push(`${at}: expected { perSecond, burst }`)
    return undefined
  }
  unknownKeys(value, at, ['perSecond', 'burst'], issues)
  const { perSecond, burst } = value
  const ok = typeof perSecond === 'number' && perSecond > 0 && Number.isFinite(perSecond)
  if (!ok) issues.push(`${at}.perSecond: expected a positive number, got ${JSON.stringify(perSecond)}`)
  if (!wholeNumber(burst, 1))
    issues.push(`${at}.burst: expected a whole number, at least 1, got ${JSON.stringify(burst)}`)
  return ok && wholeNumber(burst, 1) ? { perSecond: perSecond as number, burst } : undefined
}

function checkIdentityLimits(value: Record<string, unknown>, at: string, into: IdentityLimits, issues: string[]): void {
  if (value.rate !== undefined) {
    const rate = checkRate(value.rate, `${at}.rate`, issues)
    if (rate) into.rate = rate
  }
  if (value.concurrency !== undefined) {
    if (wholeNumber(value.concurrency, 1)) into.concurrency = value.concurrency
    else issues.push(`${at}.concurrency: expected a whole number, at least 1, got ${JSON.stringify(value.concurrency)}`)
  }
}

/** Check the config's `limits` key. */
export function checkLimits(value: unknown, issues: string[]): LimitsConfig {
  const limits: LimitsConfig = {}
  if (!isRecord(value)) {
    issues.push('limits: expected an object')
    return limits
  }
  const keys = ['rate', 'concurrency', 'sessionsPerIdentity', 'sessionIdleMs', 'upstreamConcurrency', 'rules'] as const
  unknownKeys(value, 'limits', keys, issues)
  checkIdentityLimits(value, 'limits', limits, issues)
  for (const key of ['sessionsPerIdentity', 'sessionIdleMs', 'upstreamConcurrency'] as const) {
    const n = value[key]
    if (n === undefined) continue
    if (wholeNumber(n, 1)) limits[key] = n
    else issues.push(`limits.${key}: expected a whole number, at least 1, got ${JSON.stringify(n)}`)
  }
  if (value.rules !== undefined) {
    if (!Array.isArray(value.rules)) issues.push('limits.rules: expected an array of { who, rate?, concurrency? }')
    else
      limits.rules = value.rules.flatMap((entry: unknown, i) => {
        const at = `limits.rules[${i}]`
        if (!isRecord(entry)) {
          issues.push(`${at}: expected { who, rate?, concurrency? }`)
          return []
        }
        unknownKeys(entry, at, ['who', 'rate', 'concurrency'], issues)
        const who = entry.who
        if (
          !isRecord(who) ||
          (who.subject === undefined && who.group === undefined) ||
          Object.keys(who).some((k) => k !== 'subject' && k !== 'group') ||
          [who.subject, who.group].some((v) => v !== undefined && (typeof v !== 'string' || v === ''))
        ) {
          issues.push(`${at}.who: expected { subject?, group? } with at least one non-empty string`)
          return []
        }
        for (const key of ['subject', 'group'] as const)
          if (typeof who[key] === 'string' && (who[key] as string).includes('\u0000')) {
            issues.push(`${at}.who.${key}: ${NUL_REFUSAL}`)
            return []
          }
        const rule: LimitsRule = {
          who: {
            ...(who.subject !== undefined ? { subject: who.subject as string } : {}),
            ...(who.group !== undefined ? { group: who.group as string } : {}),
          },
        }
        checkIdentityLimits(entry, at, rule, issues)
        return [rule]
      })
  }
  return limits
}
