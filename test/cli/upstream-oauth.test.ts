// Issue 23 item 7: the gateway config's `auth` for HTTP upstreams (client credentials, a stored
// refresh token; secrets inline or from environment variables), checked key by key, and
// `toolgate serve` reaching a server that requires OAuth bearer tokens.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/gateway/config.js'
import { checkUpstreamAuth } from '../../src/gateway/config-upstream-auth.js'
import { type ProtectedSetup, startProtected } from '../mcp/oauth-servers.js'
import { BIN, tempDir, textOf, writeConfig } from './helpers.js'

const url = 'http://127.0.0.1:9/mcp'
const parse = (auth: unknown) => parseConfig(JSON.stringify({ servers: { up: { url, auth } } }), 'toolgate.json')
const issuesOf = (auth: unknown, env: NodeJS.ProcessEnv = {}) => {
  const issues: string[] = []
  const result = checkUpstreamAuth(auth, 'servers.up', issues, env)
  return { result, issues }
}

describe('config: servers.<name>.auth', () => {
  it('resolves client credentials with the secret from an environment variable', () => {
    const { result, issues } = issuesOf(
      { grant: 'client_credentials', clientId: 'gate', clientSecretEnv: 'UP_SECRET', scope: 'a b' },
      { UP_SECRET: 'from-env' },
    )
    expect(issues).toEqual([])
    expect(result).toEqual({ grant: 'client_credentials', clientId: 'gate', clientSecret: 'from-env', scope: 'a b' })
  })

  it('resolves a refresh token given inline, and a private key from the environment', () => {
    expect(
      issuesOf({ grant: 'refresh_token', clientId: 'cli', refreshToken: 'rt-1', issuer: 'https://as.example' }),
    ).toEqual({
      result: { grant: 'refresh_token', clientId: 'cli', refreshToken: 'rt-1', issuer: 'https://as.example' },
      issues: [],
    })
    expect(
      issuesOf(
        { grant: 'client_credentials', clientId: 'k', privateKeyEnv: 'KEY', algorithm: 'ES256' },
        { KEY: '-----BEGIN PRIVATE KEY-----' },
      ).result,
    ).toEqual({
      grant: 'client_credentials',
      clientId: 'k',
      privateKey: { key: '-----BEGIN PRIVATE KEY-----', algorithm: 'ES256' },
    })
  })

  it('reports every problem with its path, in the config file', () => {
    expect(() => parse({ grant: 'password', clientSecretEnv: 'NOPE_NOT_SET_X', extra: 1 })).toThrow(
      /servers\.up\.auth\.extra: unknown key[\s\S]*servers\.up\.auth\.grant: expected "client_credentials" or "refresh_token", got "password"[\s\S]*servers\.up\.auth\.clientId: required[\s\S]*servers\.up\.auth\.clientSecretEnv: the environment variable "NOPE_NOT_SET_X" is not set/,
    )
    expect(() => parse('token')).toThrow(/servers\.up\.auth: expected \{ grant/)
    expect(
      () => parseConfig(JSON.stringify({ servers: { up: { command: 'x', auth: {} } } }), 'toolgate.json'),
      'auth is for HTTP upstreams only',
    ).toThrow(/servers\.up\.auth: unknown key/)
  })

  it('refuses combinations that cannot work', () => {
    const cases: [unknown, RegExp][] = [
      [{ grant: 'client_credentials', clientId: 'a' }, /needs clientSecret, clientSecretEnv or privateKeyEnv/],
      [{ grant: 'client_credentials', clientId: 'a', clientSecret: 's', clientSecretEnv: 'S' }, /not both/],
      [{ grant: 'refresh_token', clientId: 'a' }, /needs refreshToken or refreshTokenEnv/],
      [{ grant: 'client_credentials', clientId: 'a', clientSecret: 's', refreshToken: 'r' }, /grant "refresh_token"/],
      [{ grant: 'client_credentials', clientId: 'a', privateKeyEnv: 'K' }, /algorithm: required with privateKeyEnv/],
      [{ grant: 'client_credentials', clientId: 'a', clientSecret: 's', issuer: 'ftp://x' }, /issuer: expected/],
      [{ grant: 'client_credentials', clientId: '', clientSecret: 's' }, /clientId: expected a non-empty string/],
    ]
    for (const [auth, message] of cases) {
      const { result, issues } = issuesOf(auth, { K: 'key', S: 's' })
      expect(result).toBeUndefined()
      expect(issues.join('\n')).toMatch(message)
    }
  })
})

let setup: ProtectedSetup | undefined
afterEach(async () => {
  await setup?.close()
  setup = undefined
})

describe('toolgate serve with an OAuth upstream', () => {
  it('gets a client credentials token (secret from the environment) and serves the upstream tools', async () => {
    setup = await startProtected({ clientId: 'gate', clientSecret: 'env-secret-value' })
    const { dir, cleanup } = await tempDir()
    try {
      const config = await writeConfig(dir, {
        root: '.',
        servers: {
          prot: {
            url: setup.url,
            auth: {
              grant: 'client_credentials',
              clientId: 'gate',
              clientSecretEnv: 'TOOLGATE_TEST_UP_SECRET',
              scope: 'tools:read',
              issuer: setup.issuer,
            },
          },
        },
      })
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve', '--config', config],
        env: { ...getDefaultEnvironment(), TOOLGATE_TEST_UP_SECRET: 'env-secret-value' },
        stderr: 'pipe',
      })
      const client = new Client({ name: 'test', version: '1.0.0' })
      await client.connect(transport)
      try {
        const { tools } = await client.listTools()
        expect(tools.map((t) => t.name)).toContain('prot__whoami')
        expect(textOf(await client.callTool({ name: 'prot__whoami', arguments: {} }))).toBe('gate scope=tools:read')
        expect(setup.tokenRequests).toMatchObject([
          { grantType: 'client_credentials', auth: 'basic', clientId: 'gate' },
        ])
      } finally {
        await client.close()
      }
    } finally {
      await cleanup()
    }
  })
})
