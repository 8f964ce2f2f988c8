// Issue 24 (items 1, 3, 4, 6): `serve --http` for a team: bearer tokens and an OAuth 2.1 resource
// server, sessions bound to the identity that opened them, per-identity limits, a trusted proxy.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { base64url } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, runCli, tempDir, textOf, writeConfig } from './helpers.js'
import { type HttpUpstream, startHttpUpstream } from './http-upstream.js'
import { type AuthServer, startAuthServer } from './oauth-server.js'

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(() => cleanup())

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

interface Gateway {
  url: string
  port: number
  stderr: () => string
  close: () => Promise<void>
}

/** A port nobody listens on right now (the OAuth audience must name the gateway's port up front). */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

async function startGateway(args: string[], env: Record<string, string> = {}, port = 0): Promise<Gateway> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', String(port), '--root', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  let err = ''
  const actual = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const match = /serving MCP at http:\/\/[^\s]+:(\d+)\/mcp/.exec(err)
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  return {
    url: `http://127.0.0.1:${actual}/mcp`,
    port: actual,
    stderr: () => err,
    close: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One raw HTTP request to the gateway. */
function send(
  url: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Reply> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        path: options.path ?? '/mcp',
        method: options.method ?? 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...options.headers,
        },
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          body += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}

/** Open a session with raw requests as the bearer of `token`; its id. */
async function openSession(url: string, token: string): Promise<string> {
  const headers = { authorization: `Bearer ${token}` }
  const init = await send(url, { headers, body: INITIALIZE })
  expect(init.status).toBe(200)
  const session = init.headers['mcp-session-id'] as string
  const done = await send(url, {
    headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
  })
  expect(done.status).toBe(202)
  return session
}

function ping(url: string, token: string, session: string, id: number | string = 'p'): Promise<Reply> {
  return send(url, {
    headers: { authorization: `Bearer ${token}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    body: { jsonrpc: '2.0', id, method: 'ping' },
  })
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('serve --http --host: exposure needs authentication (issue 24, item 1)', () => {
  it('refuses to bind a non-loopback address without auth, with a clear error', async () => {
    const result = await runCli(['serve', '--http', '0', '--host', '0.0.0.0', '--root', dir])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/--host: 0\.0\.0\.0 is not a loopback address.*add "auth" to the config/)
  })

  it('--host and --trust-proxy only apply with --http, and --trust-proxy takes IP addresses', async () => {
    expect((await runCli(['serve', '--host', '0.0.0.0'])).stderr).toMatch(/--host only applies with --http/)
    const bad = await runCli(['serve', '--http', '0', '--trust-proxy', '10.0.0.1,proxy.example'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--trust-proxy: expected IP addresses separated by commas, got "proxy.example"/)
  })

  it('binds 0.0.0.0 once auth is configured, and still asks every request for a token', async () => {
    const config = await writeConfig(dir, { auth: { tokens: [{ sha256: sha256('t0'), subject: 'svc' }] } }, 'bind.json')
    const gateway = await startGateway(['--host', '0.0.0.0', '--config', config])
    try {
      expect(gateway.stderr()).toMatch(/serving MCP at http:\/\/0\.0\.0\.0:\d+\/mcp/)
      expect((await send(gateway.url, { body: INITIALIZE })).status).toBe(401)
      expect((await send(gateway.url, { headers: { authorization: 'Bearer t0' }, body: INITIALIZE })).status).toBe(200)
    } finally {
      await gateway.close()
    }
  })
})

describe('static bearer tokens (issue 24, item 1)', () => {
  let gateway: Gateway
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      {
        auth: {
          tokens: [
            { sha256: sha256('alice-token'), subject: 'alice', groups: ['dev'] },
            { sha256: sha256('bob-token'), subject: 'bob', groups: ['ops'] },
          ],
          tokensEnv: 'TEST_TOOLGATE_TOKENS',
        },
        limits: { sessionIdleMs: 400, sessionsPerIdentity: 2 },
      },
      'static.json',
    )
    gateway = await startGateway(['--config', config], {
      TEST_TOOLGATE_TOKENS: JSON.stringify([{ sha256: sha256('ci-token'), subject: 'ci', groups: ['ci'] }]),
    })
  })
  afterAll(() => gateway.close())

  it('serves the SDK client with a configured token, or one from the environment variable', async () => {
    for (const token of ['alice-token', 'ci-token']) {
      const client = new Client({ name: 'test', version: '1' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(gateway.url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      )
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toContain('read_file')
      await client.close()
    }
  })

  it('answers a missing, malformed or unknown token with 401 and a Bearer challenge', async () => {
    for (const authorization of [undefined, 'Basic YWxpY2U6eA==', 'Bearer not-a-token']) {
      const reply = await send(gateway.url, {
        headers: authorization === undefined ? {} : { authorization },
        body: INITIALIZE,
      })
      expect(reply.status).toBe(401)
      expect(reply.headers['www-authenticate']).toMatch(/^Bearer realm="toolgate"/)
      expect(reply.headers['mcp-session-id']).toBeUndefined()
    }
  })

  it('refuses a session id presented by another identity with 404, as if it did not exist (issue 24, item 3)', async () => {
    const session = await openSession(gateway.url, 'alice-token')
    const stolen = await ping(gateway.url, 'bob-token', session)
    expect(stolen.status).toBe(404)
    expect(JSON.parse(stolen.body).error.message).toBe('Session not found')
    const deleted = await send(gateway.url, {
      method: 'DELETE',
      headers: { authorization: 'Bearer bob-token', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    })
    expect(deleted.status).toBe(404)
    // The owner still has it: neither the ping nor the DELETE of the other identity touched it.
    expect((await ping(gateway.url, 'alice-token', session)).status).toBe(200)
    expect(session).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('closes a session left idle past limits.sessionIdleMs (issue 24, item 3)', async () => {
    const session = await openSession(gateway.url, 'bob-token')
    // Each ping is a use of the session, so the next one waits longer than the idle limit.
    await until(async () => {
      await new Promise((resolve) => setTimeout(resolve, 600))
      return (await ping(gateway.url, 'bob-token', session)).status === 404
    }, 'the idle session to close')
  })

  it("bounds each identity's sessions: at the cap its least recently used idle session is closed", async () => {
    const first = await openSession(gateway.url, 'ci-token')
    const second = await openSession(gateway.url, 'ci-token')
    const third = await openSession(gateway.url, 'ci-token')
    expect((await ping(gateway.url, 'ci-token', first)).status).toBe(404)
    expect((await ping(gateway.url, 'ci-token', second)).status).toBe(200)
    expect((await ping(gateway.url, 'ci-token', third)).status).toBe(200)
  })
})

describe('limits (issue 24, item 4)', () => {
  let gateway: Gateway
  let upstream: HttpUpstream
  beforeAll(async () => {
    upstream = await startHttpUpstream()
    const config = await writeConfig(
      dir,
      {
        servers: { web: { url: upstream.url } },
        auth: {
          tokens: [
            { sha256: sha256('crowd'), subject: 'crowd' },
            { sha256: sha256('slow'), subject: 'slow', groups: ['narrow'] },
            { sha256: sha256('other'), subject: 'other' },
          ],
        },
        limits: {
          rate: { perSecond: 2, burst: 100 },
          upstreamConcurrency: 1,
          rules: [{ who: { group: 'narrow' }, concurrency: 2, rate: { perSecond: 100, burst: 100 } }],
        },
      },
      'limits.json',
    )
    gateway = await startGateway(['--config', config])
  })
  afterAll(async () => {
    await gateway.close()
    await upstream.close()
  })

  it('holds the rate limit under 1,000 concurrent requests, answering the rest 429 with Retry-After', async () => {
    const session = await openSession(gateway.url, 'crowd')
    const started = Date.now()
    const replies = await Promise.all(Array.from({ length: 1000 }, (_, i) => ping(gateway.url, 'crowd', session, i)))
    const seconds = (Date.now() - started) / 1000
    const ok = replies.filter((r) => r.status === 200)
    const limited = replies.filter((r) => r.status === 429)
    expect(ok.length + limited.length).toBe(1000)
    // The bucket held 100 at most, 2 went to opening the session, and it refills 2 a second.
    expect(ok.length).toBeLessThanOrEqual(98 + Math.ceil(seconds * 2) + 1)
    expect(ok.length).toBeGreaterThanOrEqual(90)
    const sample = limited[0]
    expect(Number(sample.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    const error = JSON.parse(sample.body)
    expect(error.error.message).toMatch(/^Too Many Requests: rate limit of 2 requests per second/)
    expect(typeof error.id).toBe('number')
  })

  it("bounds an identity's requests in progress (its rule's concurrency) and caps upstream calls for everyone", async () => {
    const slow = new Client({ name: 'slow', version: '1' })
    await slow.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: 'Bearer slow' } },
      }),
    )
    const other = new Client({ name: 'other', version: '1' })
    await other.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: 'Bearer other' } },
      }),
    )
    const calls = [
      slow.callTool({ name: 'web__hold', arguments: {} }),
      slow.callTool({ name: 'web__hold', arguments: {} }),
      other.callTool({ name: 'web__hold', arguments: {} }),
    ]
    // Once both of slow's calls are in progress, any further request of slow carrying a call (a
    // ping here, which would otherwise be answered at once) is refused with 429.
    const probe = await openSession(gateway.url, 'slow')
    let refused: Reply | undefined
    await until(async () => {
      const reply = await ping(gateway.url, 'slow', probe)
      if (reply.status === 429) refused = reply
      return refused !== undefined
    }, "slow's concurrency limit to refuse a request")
    expect(refused?.headers['retry-after']).toBe('1')
    expect(JSON.parse(refused?.body ?? '{}').error.message).toMatch(/concurrency limit of 2 requests in progress/)
    await expect(slow.callTool({ name: 'web__hold', arguments: {} })).rejects.toThrow(/429|Too Many Requests/)
    for (let released = 0; released < 3; released++) {
      await until(() => upstream.holds.arrived > released, `hold ${released + 1} to arrive`)
      expect(upstream.holds.inFlight).toBe(1)
      upstream.release()
    }
    const results = await Promise.all(calls)
    expect(results.map(textOf)).toEqual(['released', 'released', 'released'])
    expect(upstream.holds.max).toBe(1)
    await slow.close()
    await other.close()
  })

  it("never passes a client's token to an upstream server (issue 24, item 1)", async () => {
    const client = new Client({ name: 'other', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: 'Bearer other' } },
      }),
    )
    expect(textOf(await client.callTool({ name: 'web__whoami', arguments: {} }))).toBe('hello from upstream')
    await client.close()
    expect(upstream.authorizations.length).toBeGreaterThan(0)
    expect(upstream.authorizations.every((a) => a === undefined)).toBe(true)
  })
})

describe('OAuth 2.1 resource server (issue 24, item 1)', () => {
  let as: AuthServer
  let gateway: Gateway
  let upstream: HttpUpstream
  let audience = ''
  beforeAll(async () => {
    as = await startAuthServer({
      clients: {
        agent: { secret: 's3cret', groups: ['dev'] },
        narrow: { secret: 'n', scope: 'other:read' },
      },
      audience: () => audience,
    })
    upstream = await startHttpUpstream()
    const port = await freePort()
    audience = `http://127.0.0.1:${port}/mcp`
    const config = await writeConfig(
      dir,
      {
        servers: { web: { url: upstream.url, headers: { authorization: 'Bearer upstream-credential' } } },
        auth: {
          oauth: {
            issuer: as.issuer,
            audience,
            jwksUri: as.jwksUri,
            requiredScopes: ['mcp:tools'],
            jwksCooldownMs: 0,
            clockToleranceSec: 0,
          },
        },
      },
      'oauth.json',
    )
    gateway = await startGateway(['--config', config], {}, port)
  })
  afterAll(async () => {
    await gateway.close()
    await upstream.close()
    await as.close()
  })

  const bearer = (token: string) =>
    send(gateway.url, { headers: { authorization: `Bearer ${token}` }, body: INITIALIZE })

  it('serves RFC 9728 protected resource metadata at the well-known paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const reply = await send(gateway.url, { method: 'GET', path })
      expect(reply.status).toBe(200)
      expect(JSON.parse(reply.body)).toMatchObject({
        resource: audience,
        authorization_servers: [as.issuer],
        scopes_supported: ['mcp:tools'],
        bearer_methods_supported: ['header'],
      })
    }
  })

  it('answers no token with 401 and WWW-Authenticate naming the resource metadata', async () => {
    const reply = await send(gateway.url, { body: INITIALIZE })
    expect(reply.status).toBe(401)
    expect(reply.headers['www-authenticate']).toBe(
      `Bearer realm="toolgate", scope="mcp:tools", resource_metadata="http://127.0.0.1:${gateway.port}/.well-known/oauth-protected-resource/mcp"`,
    )
  })

  it("connects the SDK client through the SDK's own OAuth flow, and no upstream sees its token", async () => {
    const provider = new ClientCredentialsProvider({
      clientId: 'agent',
      clientSecret: 's3cret',
      expectedIssuer: as.issuer,
      scope: 'mcp:tools',
    })
    const client = new Client({ name: 'oauth', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url), { authProvider: provider }))
    const token = provider.tokens()?.access_token
    expect(token).toBeTypeOf('string')
    // The SDK asked for the gateway as the resource (RFC 8707) and the scope the metadata named.
    expect(as.issued.at(-1)).toMatchObject({ clientId: 'agent', resource: audience, scope: 'mcp:tools' })
    expect(textOf(await client.callTool({ name: 'web__whoami', arguments: {} }))).toBe('hello from upstream')
    await client.close()
    expect(upstream.authorizations.length).toBeGreaterThan(0)
    expect(upstream.authorizations.every((a) => a === 'Bearer upstream-credential')).toBe(true)
  })

  it('runs auth() from the SDK directly with an OAuthClientProvider', async () => {
    const provider = new ClientCredentialsProvider({
      clientId: 'agent',
      clientSecret: 's3cret',
      expectedIssuer: as.issuer,
      scope: 'mcp:tools',
    })
    const result = await auth(provider, {
      serverUrl: gateway.url,
      resourceMetadataUrl: new URL(`http://127.0.0.1:${gateway.port}/.well-known/oauth-protected-resource/mcp`),
    })
    expect(result).toBe('AUTHORIZED')
    expect((await bearer(provider.tokens()?.access_token as string)).status).toBe(200)
  })

  it('refuses expired, wrong-audience, wrong-issuer, badly signed and alg none tokens with 401 invalid_token', async () => {
    const scope = 'mcp:tools'
    const now = Math.floor(Date.now() / 1000)
    const good = await as.mint({ scope })
    expect((await bearer(good)).status).toBe(200)
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))
    const payload = base64url.encode(
      JSON.stringify({ iss: as.issuer, aud: audience, sub: 'mallory', scope, exp: now + 600, iat: now }),
    )
    const cases: [string, string, RegExp][] = [
      ['expired', await as.mint({ scope }, { expiresIn: now - 60 }), /expired/],
      ['wrong audience', await as.mint({ scope, aud: 'http://127.0.0.1:1/mcp' }), /audience/],
      ['wrong issuer', await as.mint({ scope, iss: 'http://127.0.0.1:2' }), /issuer/],
      ['badly signed', await as.mint({ scope }, { key: await as.strangerKey() }), /signature/],
      ['alg none', `${header}.${payload}.`, /not a valid signed JWT|algorithm/],
      ['tampered', `${good.split('.')[0]}.${payload}.${good.split('.')[2]}`, /signature/],
    ]
    for (const [name, token, reason] of cases) {
      const reply = await bearer(token)
      expect(reply.status, name).toBe(401)
      const challenge = String(reply.headers['www-authenticate'])
      expect(challenge, name).toMatch(/^Bearer realm="toolgate", error="invalid_token", error_description="/)
      expect(challenge, name).toMatch(
        /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/,
      )
      expect(JSON.parse(reply.body).error_description, name).toMatch(reason)
      expect(reply.headers['mcp-session-id'], name).toBeUndefined()
    }
  })

  it('refuses a token without the required scope with 403 insufficient_scope', async () => {
    const reply = await bearer(await as.mint({ scope: 'other:read' }))
    expect(reply.status).toBe(403)
    expect(reply.headers['www-authenticate']).toMatch(/error="insufficient_scope".*scope="mcp:tools"/)
    // One space between words, as written: no quote turned into a blank (issue 37, from the trial).
    expect(reply.headers['www-authenticate']).toContain('error_description="the token lacks the scope mcp:tools"')
    // The SDK client with a client the authorization server grants only another scope gets no session.
    const provider = new ClientCredentialsProvider({ clientId: 'narrow', clientSecret: 'n', expectedIssuer: as.issuer })
    const client = new Client({ name: 'narrow', version: '1' })
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL(gateway.url), { authProvider: provider })),
    ).rejects.toThrow()
  })

  it('follows a key rotation: a token signed by a new key is accepted after the JWKS is fetched again', async () => {
    const before = as.jwksFetches()
    await as.rotate()
    const reply = await bearer(await as.mint({ scope: 'mcp:tools' }))
    expect(reply.status).toBe(200)
    expect(as.jwksFetches()).toBeGreaterThan(before)
  })
})

describe('--trust-proxy (issue 24, item 6)', () => {
  const config = () => writeConfig(dir, { auth: { tokens: [{ sha256: sha256('p'), subject: 'p' }] } }, 'proxy.json')

  it('checks X-Forwarded-Host from a trusted proxy against the accepted hosts', async () => {
    const gateway = await startGateway([
      '--config',
      await config(),
      '--trust-proxy',
      '127.0.0.1',
      '--allow-host',
      'gateway.example',
    ])
    try {
      const headers = { authorization: 'Bearer p', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' }
      const proxied = await send(gateway.url, {
        headers: { ...headers, 'x-forwarded-host': 'gateway.example', origin: 'https://gateway.example' },
        body: INITIALIZE,
      })
      expect(proxied.status).toBe(200)
      const forged = await send(gateway.url, {
        headers: { ...headers, 'x-forwarded-host': 'evil.example' },
        body: INITIALIZE,
      })
      expect(forged.status).toBe(403)
      expect(JSON.parse(forged.body).error.message).toMatch(/Host "evil\.example" is not accepted/)
    } finally {
      await gateway.close()
    }
  })

  it('ignores X-Forwarded-* from a peer that is not a trusted proxy', async () => {
    const gateway = await startGateway(['--config', await config(), '--trust-proxy', '10.9.9.9'])
    try {
      const reply = await send(gateway.url, {
        headers: { authorization: 'Bearer p', 'x-forwarded-host': 'evil.example' },
        body: INITIALIZE,
      })
      expect(reply.status).toBe(200)
    } finally {
      await gateway.close()
    }
  })
})
