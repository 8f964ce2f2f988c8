// Issue 23 item 7: connectMcpServer with an OAuthClientProvider for HTTP upstreams, and
// createMcpOAuthProvider for the grants that need no person (client credentials with a secret or a
// private-key JWT, a stored refresh token), against a real authorization server and a real SDK
// server that requires its bearer tokens, both on 127.0.0.1.
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer, createMcpOAuthProvider, type McpOAuthOptions } from '../../src/mcp/index.js'
import { type ProtectedOptions, type ProtectedSetup, startProtected } from './oauth-servers.js'

let setup: ProtectedSetup | undefined
afterEach(async () => {
  await setup?.close()
  setup = undefined
})

const call = (name: string) => ({ callId: `c-${name}`, name, arguments: {}, signal: new AbortController().signal })

async function whoami(options: ProtectedOptions, auth: (s: ProtectedSetup) => McpOAuthOptions) {
  setup = await startProtected(options)
  const { ctx, tools } = await createToolRuntime()
  const connection = await connectMcpServer(
    ctx,
    { url: setup.url, authProvider: createMcpOAuthProvider(auth(setup)) },
    { name: 'protected', prefix: 'p_' },
  )
  const ask = async () => {
    const result = await tools.execute(call('p_whoami'))
    expect(result.isError, JSON.stringify(result)).toBe(false)
    return (result.value as { content: { text: string }[] }).content[0].text
  }
  return { connection, ask, setup }
}

describe('upstream OAuth: client credentials', () => {
  it('discovers the token endpoint, gets a token with client_secret_basic for the server as resource, and calls', async () => {
    const { connection, ask, setup } = await whoami({ clientId: 'gate', clientSecret: 's3cret-value' }, (s) => ({
      grant: 'client_credentials',
      clientId: 'gate',
      clientSecret: 's3cret-value',
      scope: 'tools:read',
      issuer: s.issuer,
    }))
    expect(connection.tools).toEqual(['p_whoami'])
    expect(await ask()).toBe('gate scope=tools:read')
    expect(setup.tokenRequests).toEqual([
      {
        grantType: 'client_credentials',
        auth: 'basic',
        clientId: 'gate',
        scope: 'tools:read',
        resource: setup.url,
        refreshToken: null,
      },
    ])
    // The token is reused, not asked for again per request.
    expect(await ask()).toBe('gate scope=tools:read')
    expect(setup.tokenRequests).toHaveLength(1)
    await connection.close()
  })

  it('asks for a new token when the server stops accepting the old one', async () => {
    const { connection, ask, setup } = await whoami({ clientId: 'gate', clientSecret: 'pw-1234' }, () => ({
      grant: 'client_credentials',
      clientId: 'gate',
      clientSecret: 'pw-1234',
    }))
    expect(await ask()).toBe('gate scope=')
    setup.revokeAccessTokens()
    expect(await ask()).toBe('gate scope=')
    expect(setup.tokenRequests.map((r) => r.grantType)).toEqual(['client_credentials', 'client_credentials'])
    await connection.close()
  })

  it('sends the secret in the form when the server supports only client_secret_post', async () => {
    const { connection, ask, setup } = await whoami(
      { clientId: 'gate', clientSecret: 'pw-post', authMethods: ['client_secret_post'] },
      () => ({ grant: 'client_credentials', clientId: 'gate', clientSecret: 'pw-post' }),
    )
    expect(await ask()).toBe('gate scope=')
    expect(setup.tokenRequests[0].auth).toBe('post')
    await connection.close()
  })

  it('authenticates with a private-key JWT (private_key_jwt)', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
    const key = await exportPKCS8(privateKey)
    const { connection, ask, setup } = await whoami(
      { clientId: 'gate', clientPublicKey: await exportSPKI(publicKey), authMethods: ['private_key_jwt'] },
      () => ({ grant: 'client_credentials', clientId: 'gate', privateKey: { key, algorithm: 'ES256' } }),
    )
    expect(await ask()).toBe('gate scope=')
    expect(setup.tokenRequests.map((r) => [r.grantType, r.auth])).toEqual([['client_credentials', 'jwt']])
    await connection.close()
  })

  it('a wrong secret fails the connection with the server error, and the secret appears in no message', async () => {
    setup = await startProtected({ clientId: 'gate', clientSecret: 'right-secret' })
    const { ctx } = await createToolRuntime()
    const error = await connectMcpServer(
      ctx,
      {
        url: setup.url,
        authProvider: createMcpOAuthProvider({
          grant: 'client_credentials',
          clientId: 'gate',
          clientSecret: 'wrong-secret',
        }),
      },
      { name: 'protected' },
    ).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toMatch(/protected/)
    expect(error?.message).toMatch(/unknown client|invalid_client/i)
    expect(error?.message).not.toContain('wrong-secret')
  })

  it('with an issuer, the credentials never go to another authorization server', async () => {
    setup = await startProtected({ clientId: 'gate', clientSecret: 'pw-x' })
    const { ctx } = await createToolRuntime()
    const error = await connectMcpServer(
      ctx,
      {
        url: setup.url,
        authProvider: createMcpOAuthProvider({
          grant: 'client_credentials',
          clientId: 'gate',
          clientSecret: 'pw-x',
          issuer: 'https://auth.elsewhere.example',
        }),
      },
      { name: 'protected' },
    ).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toMatch(/auth\.elsewhere\.example/)
    expect(setup.tokenRequests).toEqual([])
  })
})

describe('upstream OAuth: a stored refresh token', () => {
  it('gets access tokens with the refresh token and keeps the rotated one', async () => {
    const { connection, ask, setup } = await whoami(
      { clientId: 'gate', clientSecret: 'pw-r', refreshTokens: ['rt-initial'] },
      () => ({ grant: 'refresh_token', clientId: 'gate', clientSecret: 'pw-r', refreshToken: 'rt-initial' }),
    )
    expect(await ask()).toBe('gate scope=')
    setup.revokeAccessTokens()
    expect(await ask()).toBe('gate scope=')
    const [first, second] = setup.tokenRequests
    expect([first.grantType, first.refreshToken]).toEqual(['refresh_token', 'rt-initial'])
    // The server rotated the token on first use: the second request presents the new one.
    expect(second.grantType).toBe('refresh_token')
    expect(second.refreshToken).toMatch(/^rt-/)
    expect(second.refreshToken).not.toBe('rt-initial')
    expect(setup.tokenRequests).toHaveLength(2)
    await connection.close()
  })

  it('a public client (no secret) sends its client id', async () => {
    const { connection, ask, setup } = await whoami({ clientId: 'cli', refreshTokens: ['rt-pub'] }, () => ({
      grant: 'refresh_token',
      clientId: 'cli',
      refreshToken: 'rt-pub',
    }))
    expect(await ask()).toBe('cli scope=')
    expect(setup.tokenRequests[0]).toMatchObject({ auth: 'none', clientId: 'cli' })
    await connection.close()
  })
})

describe('createMcpOAuthProvider and connectMcpServer check their options', () => {
  const bad: [string, unknown, RegExp][] = [
    ['no grant', { clientId: 'x' }, /options\.grant: expected "client_credentials" or "refresh_token"/],
    ['no client id', { grant: 'client_credentials' }, /options\.clientId: expected a non-empty string/],
    ['no refresh token', { grant: 'refresh_token', clientId: 'x' }, /options\.refreshToken/],
    ['issuer not a URL', { grant: 'client_credentials', clientId: 'x', issuer: 'nope' }, /options\.issuer/],
    [
      'bad algorithm',
      { grant: 'client_credentials', clientId: 'x', privateKey: { key: 'k', algorithm: 'none' } },
      /options\.privateKey\.algorithm/,
    ],
    [
      'secret and key',
      { grant: 'client_credentials', clientId: 'x', clientSecret: 's', privateKey: { key: 'k', algorithm: 'ES256' } },
      /clientSecret or privateKey, not both/,
    ],
  ]
  for (const [what, options, message] of bad)
    it(`refuses ${what}`, () => {
      expect(() => createMcpOAuthProvider(options as McpOAuthOptions)).toThrow(ConfigError)
      expect(() => createMcpOAuthProvider(options as McpOAuthOptions)).toThrow(message)
    })

  it('connectMcpServer refuses an authProvider that is not a provider', async () => {
    const { ctx } = await createToolRuntime()
    await expect(connectMcpServer(ctx, { url: 'http://127.0.0.1:9/mcp', authProvider: {} as never })).rejects.toThrow(
      /server\.authProvider: expected an OAuthClientProvider/,
    )
  })
})
