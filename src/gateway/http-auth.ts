// Who is calling `serve --http`: a static bearer token (matched by its SHA-256) or a JWT access
// token from the configured OAuth issuer (the gateway is an OAuth 2.1 resource server). The answer
// is an Identity, or the 401/403 the MCP authorization spec prescribes with its WWW-Authenticate.
import { createHash, timingSafeEqual } from 'node:crypto'
import { createRemoteJWKSet, type JWTPayload, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from 'jose'
import { ConfigError } from '../errors/config-error.js'
import { type AuthInfo, authInfoFor, type Identity, identityOf } from '../mcp/gateway.js'
import { rememberCallerToken } from './caller-tokens.js'
import { type AuthConfig, checkTokenList, JWT_ALGORITHMS, type OAuthConfig } from './config-auth.js'

export type AuthOutcome =
  | { readonly ok: true; readonly identity: Identity; readonly info: AuthInfo }
  | {
      readonly ok: false
      readonly status: 401 | 403 | 503
      /** The WWW-Authenticate header value (absent for 503). */
      readonly challenge?: string
      readonly error: string
      readonly description: string
    }

/** RFC 9728 protected resource metadata, served unauthenticated. */
export interface ResourceMetadata {
  readonly resource: string
  readonly authorization_servers: readonly string[]
  readonly bearer_methods_supported: readonly string[]
  readonly scopes_supported?: readonly string[]
  readonly resource_name: string
}

export interface Authenticator {
  /** Check the request's Authorization header. */
  authenticate(authorization: string | undefined): Promise<AuthOutcome>
  /** The protected resource metadata and the paths it is served at, when OAuth is configured. */
  readonly metadata?: { readonly document: ResourceMetadata; readonly paths: readonly string[]; readonly url: string }
}

interface StaticEntry {
  readonly digest: Buffer
  readonly identity: Identity
  readonly tokenId: string
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource'
/** Seconds; a clock a little off must not turn every fresh token away. */
const DEFAULT_CLOCK_TOLERANCE_SEC = 5
const DEFAULT_JWKS_MAX_AGE_MS = 600_000
const DEFAULT_JWKS_COOLDOWN_MS = 30_000
/** Verified JWTs remembered, keyed by their hash, so a session's next request skips the signature check. */
const VERIFIED_CACHE_SIZE = 1024

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/** A value quoted in a WWW-Authenticate parameter: printable ASCII without quotes or backslashes. */
function quoted(text: string): string {
  return `"${text.replace(/[^\x20-\x7e]|["\\]/g, ' ').slice(0, 300)}"`
}

/** The static tokens of the config and of the environment variable it names. */
function staticTokens(config: AuthConfig, env: NodeJS.ProcessEnv): StaticEntry[] {
  const entries = [...(config.tokens ?? [])]
  if (config.tokensEnv !== undefined) {
    const name = config.tokensEnv
    const text = env[name]
    if (text === undefined || text === '')
      throw new ConfigError(`auth.tokensEnv`, `the environment variable ${name} is not set`)
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new ConfigError(`$${name}`, `not valid JSON: ${(error as Error).message}`)
    }
    const issues: string[] = []
    entries.push(...checkTokenList(value, `$${name}`, issues))
    if (issues.length) throw new ConfigError(`$${name}`, issues)
  }
  const seen = new Set<string>()
  return entries.flatMap((entry) => {
    // The same hash in the file and the environment would make one token two people.
    if (seen.has(entry.sha256))
      throw new ConfigError('auth.tokens', `the token with sha256 ${entry.sha256.slice(0, 12)}… is listed twice`)
    seen.add(entry.sha256)
    return [
      {
        digest: Buffer.from(entry.sha256, 'hex'),
        tokenId: `sha256:${entry.sha256.slice(0, 16)}`,
        identity: Object.freeze({
          subject: entry.subject,
          groups: Object.freeze([...(entry.groups ?? [])]),
          scopes: Object.freeze([...(entry.scopes ?? [])]),
          claims: Object.freeze({}),
        }),
      },
    ]
  })
}

/** The bearer token of an Authorization header, or undefined (missing, another scheme, or malformed). */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)
  return match?.[1]
}

/** A claim that must be a string list: absent is empty; a string is split by `split`; anything else is refused. */
function stringClaim(value: unknown, split: (text: string) => string[]): string[] | undefined {
  if (value === undefined) return []
  if (typeof value === 'string') return split(value)
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' && item !== '')) return [...value]
  return undefined
}

/**
 * The identity a verified token's payload names, or why it names none: a token that authenticates
 * must name a caller (a non-empty `sub`) with string groups and scopes. Quietly dropping a claim of
 * the wrong type would turn a malformed token into "no identity" or a caller with fewer groups.
 */
function identityOfPayload(payload: JWTPayload, groupsClaim: string): { identity: Identity } | { reason: string } {
  const sub: unknown = payload.sub
  if (typeof sub !== 'string' || sub === '' || sub.includes('\u0000'))
    return { reason: "the token's sub claim is not a non-empty string" }
  const groups = stringClaim(payload[groupsClaim], (text) => (text === '' ? [] : [text]))
  if (groups === undefined)
    return { reason: `the token's ${groupsClaim} claim is not a string or an array of non-empty strings` }
  // RFC 9068 section 2.2.3: `scope` is a space-separated string; `scp` (a list) is read when it is absent.
  const scopeName = payload.scope !== undefined ? 'scope' : 'scp'
  const scopes = stringClaim(payload[scopeName], (text) => text.split(' ').filter((s) => s !== ''))
  if (scopes === undefined)
    return { reason: `the token's ${scopeName} claim is not a string or an array of non-empty strings` }
  return {
    identity: Object.freeze({
      subject: sub,
      groups: Object.freeze(groups),
      scopes: Object.freeze(scopes),
      claims: Object.freeze({ ...payload }),
    }),
  }
}

/** The URL of the metadata for `audience` (RFC 9728 section 3.1: the well-known prefix before the path). */
function metadataUrl(audience: string): { url: string; paths: string[] } {
  const resource = new URL(audience)
  const path = resource.pathname === '/' ? '' : resource.pathname.replace(/\/$/, '')
  const paths = path === '' ? [WELL_KNOWN] : [`${WELL_KNOWN}${path}`, WELL_KNOWN]
  return { url: `${resource.origin}${paths[0]}`, paths }
}

/** Build the authenticator of `config`; throws a ConfigError when its environment variable is missing or bad. */
export function createAuthenticator(config: AuthConfig, env: NodeJS.ProcessEnv = process.env): Authenticator {
  const tokens = staticTokens(config, env)
  const oauth = config.oauth
  const meta = oauth ? metadataUrl(oauth.audience) : undefined
  const resourceParam = meta ? `, resource_metadata=${quoted(meta.url)}` : ''
  // The scopes to ask the authorization server for, named in the challenge to a caller without a token.
  const required = oauth?.requiredScopes?.length ? `, scope=${quoted(oauth.requiredScopes.join(' '))}` : ''
  const verify = oauth ? jwtVerifier(oauth) : undefined

  const refuse = (status: 401 | 403, error: string, description: string, scope?: string): AuthOutcome => ({
    ok: false,
    status,
    error,
    description,
    challenge:
      `Bearer realm="toolgate", error=${quoted(error)}, error_description=${quoted(description)}` +
      (scope !== undefined ? `, scope=${quoted(scope)}` : '') +
      resourceParam,
  })

  // What the request carries must read back as the same caller (identityOf), or an authenticated
  // request would be served as "no identity": the top-level policy without `policy.rules`.
  const accepted = (identity: Identity, info: AuthInfo): AuthOutcome =>
    identityOf(info)?.subject === identity.subject
      ? { ok: true, identity, info }
      : refuse(401, 'invalid_token', 'the token does not name a caller')

  const matchStatic = (token: string): StaticEntry | undefined => {
    const digest = sha256(token)
    let found: StaticEntry | undefined
    // Every entry is compared, each in constant time, so the time taken says nothing about which matched.
    for (const entry of tokens) if (timingSafeEqual(entry.digest, digest)) found = entry
    return found
  }

  return {
    metadata:
      oauth && meta
        ? {
            url: meta.url,
            paths: meta.paths,
            document: {
              resource: oauth.audience,
              authorization_servers: [oauth.issuer],
              bearer_methods_supported: ['header'],
              ...(oauth.scopesSupported || oauth.requiredScopes
                ? { scopes_supported: oauth.scopesSupported ?? oauth.requiredScopes }
                : {}),
              resource_name: 'toolgate',
            },
          }
        : undefined,
    async authenticate(authorization) {
      const token = bearerToken(authorization)
      if (token === undefined) {
        return {
          ok: false,
          status: 401,
          error: 'invalid_request',
          description:
            authorization === undefined ? 'no bearer token' : 'the Authorization header is not "Bearer <token>"',
          challenge: `Bearer realm="toolgate"${required}${resourceParam}`,
        }
      }
      const entry = tokens.length > 0 ? matchStatic(token) : undefined
      if (entry) return accepted(entry.identity, authInfoFor(entry.identity, entry.tokenId))
      if (!verify) return refuse(401, 'invalid_token', 'the token is not known')
      const verified = await verify(token)
      if (!verified.ok) {
        if (verified.unavailable)
          return { ok: false, status: 503, error: 'temporarily_unavailable', description: verified.reason }
        return refuse(401, 'invalid_token', verified.reason)
      }
      const missing = (oauth?.requiredScopes ?? []).filter((s) => !verified.identity.scopes.includes(s))
      if (missing.length > 0)
        return refuse(
          403,
          'insufficient_scope',
          // No quotes: RFC 6750 section 3 keeps `"` out of error_description, and quoted() would turn each into a space.
          `the token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
          (oauth?.requiredScopes ?? []).join(' '),
        )
      const outcome = accepted(verified.identity, verified.info)
      // Kept for the upstreams that exchange the caller's token for one of their own.
      if (outcome.ok) rememberCallerToken(verified.identity.subject, token, verified.exp)
      return outcome
    },
  }
}

type Verified =
  | { ok: true; identity: Identity; info: AuthInfo; exp: number }
  | { ok: false; reason: string; unavailable?: boolean }

/** The JWKS could not be fetched or read: the token may well be good, so the caller is told to retry. */
class KeysUnavailable extends Error {}

/** Whether an error of the key set lookup is a failure to fetch the keys (rather than a verdict on the token). */
function fetchFailure(error: unknown): boolean {
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return true
  // A failed fetch is a TypeError; a non-200 answer or a body that is not JSON is jose's generic error.
  return !(error instanceof joseErrors.JOSEError) || Object.getPrototypeOf(error) === joseErrors.JOSEError.prototype
}

/** Why jose refused a token, in words a client can act on. */
function refusalOf(error: unknown): { reason: string; unavailable?: boolean } {
  if (error instanceof joseErrors.JWTExpired) return { reason: 'the token has expired' }
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = error.claim
    if (claim === 'aud') return { reason: "the token's audience is not this gateway" }
    if (claim === 'iss') return { reason: "the token's issuer is not the configured one" }
    if (claim === 'nbf') return { reason: 'the token is not valid yet' }
    return { reason: `the token's "${claim}" claim is missing or wrong` }
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return { reason: "the token's signature algorithm is not accepted" }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed)
    return { reason: "the token's signature is not valid" }
  if (error instanceof joseErrors.JWKSNoMatchingKey)
    return { reason: 'the token was not signed by a key of the issuer' }
  if (error instanceof KeysUnavailable) return { reason: "the issuer's keys could not be fetched", unavailable: true }
  return { reason: 'the token is not a valid signed JWT' }
}

/** JWT validation against the issuer's JWKS (fetched once, cached, fetched again for an unknown key id). */
function jwtVerifier(oauth: OAuthConfig): (token: string) => Promise<Verified> {
  const remote = createRemoteJWKSet(new URL(oauth.jwksUri), {
    cacheMaxAge: oauth.jwksCacheMaxAgeMs ?? DEFAULT_JWKS_MAX_AGE_MS,
    cooldownDuration: oauth.jwksCooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS,
    timeoutDuration: 5000,
  })
  const keys: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token)
    } catch (error) {
      throw fetchFailure(error) ? new KeysUnavailable('the JWKS could not be fetched', { cause: error }) : error
    }
  }
  const algorithms = oauth.algorithms ?? [...JWT_ALGORITHMS]
  const clockTolerance = oauth.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC
  const groupsClaim = oauth.groupsClaim ?? 'groups'
  // A verified token stays valid until it expires, so the signature need not be checked on every
  // request of a session; entries leave at their expiry or when the cache is full (oldest first).
  const verifiedCache = new Map<string, Verified & { ok: true }>()
  return async (token) => {
    const key = sha256(token).toString('base64url')
    const now = Date.now() / 1000
    const known = verifiedCache.get(key)
    if (known) {
      if (known.exp + clockTolerance > now) return known
      verifiedCache.delete(key)
    }
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, keys, {
        issuer: oauth.issuer,
        audience: oauth.audience,
        algorithms,
        clockTolerance,
        requiredClaims: ['exp', 'sub'],
      }))
    } catch (error) {
      return { ok: false, ...refusalOf(error) }
    }
    const named = identityOfPayload(payload, groupsClaim)
    if (!('identity' in named)) return { ok: false, reason: named.reason }
    const { identity } = named
    const exp = payload.exp as number
    const tokenId =
      typeof payload.jti === 'string' && payload.jti !== '' ? `jti:${payload.jti}` : `sha256:${key.slice(0, 16)}`
    const verified = { ok: true as const, identity, info: authInfoFor(identity, tokenId, exp), exp }
    if (verifiedCache.size >= VERIFIED_CACHE_SIZE) {
      const oldest = verifiedCache.keys().next()
      if (!oldest.done) verifiedCache.delete(oldest.value)
    }
    verifiedCache.set(key, verified)
    return verified
  }
}
