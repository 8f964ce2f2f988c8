// Issue 24: the pieces of `serve --http` for a team, checked on their own: the `auth` and `limits`
// config keys, the token bucket and concurrency bound, the upstream cap's semaphore, and which
// X-Forwarded-* headers are believed.
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { parseConfig } from '../../src/gateway/config.js'
import { bearerToken } from '../../src/gateway/http-auth.js'
import { checkExposure } from '../../src/gateway/http-guard.js'
import { IdentityLimiter, Semaphore } from '../../src/gateway/http-limits.js'
import { forwardedView, isLoopbackHost, parseTrustProxy } from '../../src/gateway/http-proxy.js'

const HASH = 'a'.repeat(64)
const issuesOf = (config: unknown): readonly string[] => {
  try {
    parseConfig(JSON.stringify(config), 'toolgate.json')
  } catch (error) {
    if (error instanceof ConfigError) return error.issues
    throw error
  }
  return []
}
const who = (subject: string, groups: string[] = []) => ({ subject, groups, scopes: [], claims: {} })

describe('config: auth and limits', () => {
  it('accepts the shapes the issue names', () => {
    const config = parseConfig(
      JSON.stringify({
        auth: {
          tokens: [{ sha256: HASH, subject: 'alice', groups: ['dev'] }],
          oauth: {
            issuer: 'https://as.example',
            audience: 'https://gw.example/mcp',
            jwksUri: 'https://as.example/jwks',
          },
        },
        limits: {
          rate: { perSecond: 5, burst: 10 },
          concurrency: 4,
          rules: [{ who: { group: 'ci' }, concurrency: 1 }],
        },
      }),
      'toolgate.json',
    )
    expect(config.auth?.tokens?.[0]).toEqual({ sha256: HASH, subject: 'alice', groups: ['dev'] })
    expect(config.auth?.oauth?.audience).toBe('https://gw.example/mcp')
    expect(config.limits?.rules).toEqual([{ who: { group: 'ci' }, concurrency: 1 }])
  })

  it('reports every problem with its path, and unknown keys stay errors', () => {
    expect(
      issuesOf({
        auth: {
          tokens: [
            { sha256: 'secret-token', subject: '' },
            { sha256: HASH, subject: 'a', role: 'x' },
          ],
          tokensEnv: 'not a name',
          oauth: {
            issuer: 'http://as.example',
            audience: 'gw',
            jwksUri: 'https://as.example/jwks',
            algorithms: ['none'],
          },
          extra: true,
        },
        limits: { rate: { perSecond: 0, burst: 1.5 }, sessionIdleMs: -1, rules: [{ who: {} }], other: 1 },
      }),
    ).toEqual([
      'auth.extra: unknown key (expected "tokens", "tokensEnv", "oauth")',
      "auth.tokens[0].sha256: expected the token's SHA-256 as 64 lowercase hex digits (not the token itself)",
      'auth.tokens[0].subject: expected a non-empty string',
      'auth.tokens[1].role: unknown key (expected "sha256", "subject", "groups", "scopes")',
      'auth.tokensEnv: expected an environment variable name, got "not a name"',
      'auth.oauth.issuer: expected an https URL (http only on 127.0.0.1, localhost or [::1]), got "http://as.example"',
      'auth.oauth.audience: expected the gateway\'s resource URL, e.g. "https://gateway.example/mcp", got "gw"',
      expect.stringMatching(/^auth\.oauth\.algorithms\[0\]: expected one of RS256, .*, got "none"$/),
      'limits.other: unknown key (expected "rate", "concurrency", "sessionsPerIdentity", "sessionIdleMs", "upstreamConcurrency", "rules")',
      'limits.rate.perSecond: expected a positive number, got 0',
      'limits.rate.burst: expected a whole number, at least 1, got 1.5',
      'limits.sessionIdleMs: expected a whole number, at least 1, got -1',
      'limits.rules[0].who: expected { subject?, group? } with at least one non-empty string',
    ])
    expect(issuesOf({ auth: {} })).toEqual(['auth: expected at least one of "tokens", "tokensEnv" or "oauth"'])
  })
})

describe('checkExposure', () => {
  it('refuses a non-loopback bind without auth and allows loopback ones', () => {
    expect(() => checkExposure({ host: '0.0.0.0' })).toThrow(/--host: 0\.0\.0\.0 is not a loopback address/)
    expect(() => checkExposure({ host: '192.168.1.4' })).toThrow(ConfigError)
    for (const host of [undefined, '127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(checkExposure({ host })).toBeUndefined()
    expect(isLoopbackHost('::ffff:127.0.0.1')).toBe(true)
  })

  it('reads static tokens from the named environment variable, and says when it is missing or bad', () => {
    const auth = { tokensEnv: 'TOKENS' }
    expect(() => checkExposure({ auth }, {})).toThrow(/auth\.tokensEnv: the environment variable TOKENS is not set/)
    expect(() => checkExposure({ auth }, { TOKENS: '[{"sha256":"x","subject":"a"}]' })).toThrow(
      /\$TOKENS\[0\]\.sha256: expected the token's SHA-256/,
    )
    expect(
      checkExposure({ host: '0.0.0.0', auth }, { TOKENS: JSON.stringify([{ sha256: HASH, subject: 'a' }]) }),
    ).toBeDefined()
  })
})

describe('bearerToken', () => {
  it('takes only the Bearer scheme with a token68 value', () => {
    expect(bearerToken('Bearer abc.def-_~+/=')).toBe('abc.def-_~+/=')
    expect(bearerToken('bearer   tok')).toBe('tok')
    expect(bearerToken('Basic abc')).toBeUndefined()
    expect(bearerToken('Bearer a b')).toBeUndefined()
    expect(bearerToken(undefined)).toBeUndefined()
  })
})

describe('IdentityLimiter', () => {
  it('is a token bucket per identity with a Retry-After that says when the next token comes', () => {
    let now = 0
    const limiter = new IdentityLimiter({ rate: { perSecond: 0.5, burst: 2 } }, () => now)
    expect(limiter.admit(who('a'), false).ok).toBe(true)
    expect(limiter.admit(who('a'), false).ok).toBe(true)
    const refused = limiter.admit(who('a'), false)
    expect(refused).toMatchObject({ ok: false, retryAfterSec: 2 })
    // Another identity has its own bucket.
    expect(limiter.admit(who('b'), false).ok).toBe(true)
    now = 2000
    expect(limiter.admit(who('a'), false).ok).toBe(true)
    expect(limiter.admit(who('a'), false).ok).toBe(false)
  })

  it('bounds requests in progress, per the first matching rule, until each is released once', () => {
    const limiter = new IdentityLimiter({ concurrency: 3, rules: [{ who: { group: 'ci' }, concurrency: 1 }] })
    const first = limiter.admit(who('bot', ['ci']), true)
    expect(first.ok).toBe(true)
    expect(limiter.admit(who('bot', ['ci']), true)).toMatchObject({ ok: false, retryAfterSec: 1 })
    if (first.ok) {
      first.release()
      first.release()
    }
    expect(limiter.admit(who('bot', ['ci']), true).ok).toBe(true)
    expect(limiter.admit(who('bot', ['ci']), true).ok).toBe(false)
    expect([1, 2, 3].map(() => limiter.admit(who('dev'), true).ok)).toEqual([true, true, true])
    expect(limiter.admit(who('dev'), true).ok).toBe(false)
  })
})

describe('Semaphore', () => {
  it('hands slots out in order and lets a cancelled waiter leave the queue', async () => {
    const slots = new Semaphore(1)
    const first = await slots.acquire()
    const cancel = new AbortController()
    const gaveUp = slots.acquire(cancel.signal)
    const next = slots.acquire()
    cancel.abort()
    expect(await gaveUp).toBeUndefined()
    first?.()
    const second = await next
    expect(second).toBeTypeOf('function')
    second?.()
    second?.()
    // One slot, not two: a double release frees it once.
    const a = await slots.acquire()
    const late = new AbortController()
    const waiting = slots.acquire(late.signal)
    late.abort()
    expect(await waiting).toBeUndefined()
    a?.()
  })
})

describe('forwardedView', () => {
  const parsed = parseTrustProxy(['10.0.0.1, ::1'])
  const trusted = new Set<string>('addresses' in parsed ? parsed.addresses : [])
  it('parses comma-separated addresses', () => expect(trusted).toEqual(new Set(['10.0.0.1', '::1'])))
  it('believes X-Forwarded-* only from a trusted peer, and finds the client behind the proxies', () => {
    const headers = {
      host: '10.0.0.5:8080',
      'x-forwarded-for': '198.51.100.7, 203.0.113.9, 10.0.0.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'gw.example',
    }
    expect(forwardedView('::ffff:10.0.0.1', headers, trusted)).toEqual({
      client: '203.0.113.9',
      host: 'gw.example',
      proto: 'https',
      viaProxy: true,
    })
    expect(forwardedView('203.0.113.50', headers, trusted)).toEqual({
      client: '203.0.113.50',
      host: '10.0.0.5:8080',
      proto: 'http',
      viaProxy: false,
    })
    expect(parseTrustProxy(['10.0.0.1,nope'])).toEqual({ bad: 'nope' })
  })
})

describe('createAuthenticator: the issuer unreachable', () => {
  it('answers 503 when the JWKS cannot be fetched or read, and still 401 for a token that is not a JWT', async () => {
    const { createServer } = await import('node:http')
    const { SignJWT, generateKeyPair } = await import('jose')
    const { createAuthenticator } = await import('../../src/gateway/http-auth.js')
    const broken = createServer((_req, res) => res.writeHead(500).end('oops'))
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve))
    const port = (broken.address() as { port: number }).port
    try {
      const { privateKey } = await generateKeyPair('ES256')
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'k' })
        .setIssuer(`http://127.0.0.1:${port}`)
        .setAudience('https://gw.example/mcp')
        .setSubject('a')
        .setExpirationTime('5m')
        .sign(privateKey)
      for (const jwksUri of [`http://127.0.0.1:${port}/jwks`, 'http://127.0.0.1:1/jwks']) {
        const auth = createAuthenticator({
          oauth: { issuer: `http://127.0.0.1:${port}`, audience: 'https://gw.example/mcp', jwksUri },
        })
        expect(await auth.authenticate(`Bearer ${token}`)).toMatchObject({ ok: false, status: 503 })
        expect(await auth.authenticate('Bearer garbage')).toMatchObject({ ok: false, status: 401 })
      }
    } finally {
      broken.close()
    }
  })
})

describe('HttpGuard.authenticate: the AuthInfo the MCP SDK hands to handlers', () => {
  it('hangs AuthInfo on the request (never the token itself), and identityOf reads the identity back', async () => {
    const { HttpGuard } = await import('../../src/gateway/http-guard.js')
    const { createAuthenticator } = await import('../../src/gateway/http-auth.js')
    const { identityOf } = await import('../../src/mcp/protocol/identity.js')
    const { createHash } = await import('node:crypto')
    const hash = createHash('sha256').update('alice-secret').digest('hex')
    const log = { info: () => {}, debug: () => {} }
    const guard = new HttpGuard(
      {},
      createAuthenticator({ tokens: [{ sha256: hash, subject: 'alice', groups: ['dev'], scopes: ['tools'] }] }),
      log,
    )
    const req = { headers: { authorization: 'Bearer alice-secret' }, socket: { remoteAddress: '127.0.0.1' } }
    const res = {}
    type Req = Parameters<InstanceType<typeof HttpGuard>['authenticate']>[0]
    type Res = Parameters<InstanceType<typeof HttpGuard>['authenticate']>[1]
    const view = guard.view(req as unknown as Req)
    const identity = await guard.authenticate(req as unknown as Req, res as unknown as Res, view)
    expect(identity).toEqual({ subject: 'alice', groups: ['dev'], scopes: ['tools'], claims: {} })
    const info = (req as { auth?: unknown }).auth
    expect(info).toEqual({
      token: `sha256:${hash.slice(0, 16)}`,
      clientId: 'alice',
      scopes: ['tools'],
      extra: { subject: 'alice', groups: ['dev'], claims: {} },
    })
    expect(JSON.stringify(info)).not.toContain('alice-secret')
    expect(identityOf(info as Parameters<typeof identityOf>[0])).toEqual(identity)
  })
})

describe('createAuthenticator: a JWT access token', () => {
  it('maps sub, groups (groupsClaim), scope and jti into the identity, remembers a verified token, and checks nbf', async () => {
    const { createServer } = await import('node:http')
    const { SignJWT, exportJWK, generateKeyPair } = await import('jose')
    const { createAuthenticator } = await import('../../src/gateway/http-auth.js')
    const { publicKey, privateKey } = await generateKeyPair('RS256')
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] }
    let fetches = 0
    const server = createServer((_req, res) => {
      fetches++
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`
    const audience = 'https://gw.example/mcp'
    try {
      const auth = createAuthenticator({
        oauth: { issuer, audience, jwksUri: `${issuer}/jwks`, groupsClaim: 'roles', clockToleranceSec: 0 },
      })
      const exp = Math.floor(Date.now() / 1000) + 300
      const sign = (claims: Record<string, unknown>) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer(issuer)
          .setAudience(audience)
          .setSubject('carol')
          .setExpirationTime(exp)
          .sign(privateKey)
      const token = await sign({ roles: ['admin', 'dev'], scope: 'a b', jti: 'id-1' })
      const first = await auth.authenticate(`Bearer ${token}`)
      expect(first).toMatchObject({
        ok: true,
        identity: { subject: 'carol', groups: ['admin', 'dev'], scopes: ['a', 'b'] },
        info: { token: 'jti:id-1', clientId: 'carol', scopes: ['a', 'b'], expiresAt: exp },
      })
      expect(first.ok && first.identity.claims.jti).toBe('id-1')
      const fetched = fetches
      expect(await auth.authenticate(`Bearer ${token}`)).toEqual(first)
      expect(fetches).toBe(fetched)
      const early = await sign({ nbf: Math.floor(Date.now() / 1000) + 120 })
      expect(await auth.authenticate(`Bearer ${early}`)).toMatchObject({
        ok: false,
        status: 401,
        description: 'the token is not valid yet',
      })
      const noSubject = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setExpirationTime(exp)
        .sign(privateKey)
      expect(await auth.authenticate(`Bearer ${noSubject}`)).toMatchObject({ ok: false, status: 401 })
    } finally {
      server.close()
    }
  })
})
