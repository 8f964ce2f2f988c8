// Issue 39 items 1 and 2: the `auth.tokenExchange` and `auth.perUser` keys of an HTTP server
// entry, checked key by key with their paths, and their files resolved against the config's folder.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, parseConfig } from '../../src/gateway/config.js'
import { tempDir } from './helpers.js'

const url = 'http://127.0.0.1:9/mcp'
const parse = (auth: unknown) => parseConfig(JSON.stringify({ servers: { up: { url, auth } } }), 'toolgate.json')

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => cleanup())

describe('config: servers.<name>.auth.tokenExchange and perUser', () => {
  it('takes a token exchange and resolves its secret file against the config folder', async () => {
    const file = path.join(dir, 'toolgate.json')
    await writeFile(
      file,
      JSON.stringify({
        servers: {
          up: {
            url,
            auth: {
              tokenExchange: {
                tokenEndpoint: 'https://as.example/token',
                clientId: 'gate',
                clientSecretFile: 'secret.txt',
                audience: 'github',
                actor: true,
              },
            },
          },
        },
      }),
    )
    const config = await loadConfig(file)
    expect(config.servers?.up).toEqual({
      url,
      auth: {
        tokenExchange: {
          tokenEndpoint: 'https://as.example/token',
          clientId: 'gate',
          clientSecretFile: path.join(dir, 'secret.txt'),
          audience: 'github',
          actor: true,
        },
      },
    })
  })

  it('takes a per-user header', () => {
    expect(parse({ perUser: { header: 'X-Api-Key' } }).servers?.up).toEqual({
      url,
      auth: { perUser: { header: 'X-Api-Key' } },
    })
  })

  it('reports every problem with its path', () => {
    const cases: [unknown, RegExp][] = [
      [{ tokenExchange: { clientId: 'a', clientSecretFile: 's' } }, /auth\.tokenExchange\.tokenEndpoint: required/],
      [
        { tokenExchange: { tokenEndpoint: 'ftp://x', clientId: 'a', clientSecretFile: 's' } },
        /tokenEndpoint: expected the http\(s\) URL/,
      ],
      [{ tokenExchange: { tokenEndpoint: 'https://x', clientId: 'a' } }, /give clientSecretFile or privateKeyFile/],
      [
        { tokenExchange: { tokenEndpoint: 'https://x', clientId: 'a', clientSecretFile: 's', privateKeyFile: 'k' } },
        /not both/,
      ],
      [
        { tokenExchange: { tokenEndpoint: 'https://x', clientId: 'a', clientSecretFile: 's', actor: 'yes' } },
        /actor: expected true or false/,
      ],
      [
        { tokenExchange: { tokenEndpoint: 'https://x', clientId: 'a', clientSecretFile: 's', extra: 1 } },
        /tokenExchange\.extra: unknown key/,
      ],
      [{ perUser: { header: 'Bad Header' } }, /perUser\.header: expected a header name/],
      [{ perUser: { header: 'Authorization', scheme: '' } }, /perUser\.scheme: expected a scheme name/],
      [{ perUser: { header: 'Authorization' }, tokenExchange: {} }, /give one of tokenExchange or perUser, alone/],
    ]
    for (const [auth, message] of cases) expect(() => parse(auth), JSON.stringify(auth)).toThrow(message)
  })
})

// Issue 39 item 3: auth.perUser.oauth, the upstream's authorization server for consent by URL.
describe('config: servers.<name>.auth.perUser.oauth', () => {
  const oauth = {
    authorizationEndpoint: 'https://github.example/login/oauth/authorize',
    tokenEndpoint: 'https://github.example/login/oauth/access_token',
    clientId: 'toolgate',
  }

  it('takes a sign-in by URL and resolves its client secret file against the config folder', async () => {
    const file = path.join(dir, 'consent.json')
    await writeFile(
      file,
      JSON.stringify({
        servers: {
          up: {
            url,
            auth: {
              perUser: {
                header: 'Authorization',
                scheme: 'Bearer',
                oauth: {
                  ...oauth,
                  clientSecretFile: 'gh.secret',
                  scope: 'repo read:org',
                  redirectUri: 'https://gate.example/oauth/callback',
                },
              },
            },
          },
        },
      }),
    )
    const config = await loadConfig(file)
    expect(config.servers?.up).toEqual({
      url,
      auth: {
        perUser: {
          header: 'Authorization',
          scheme: 'Bearer',
          oauth: {
            ...oauth,
            clientSecretFile: path.join(dir, 'gh.secret'),
            scope: 'repo read:org',
            redirectUri: 'https://gate.example/oauth/callback',
          },
        },
      },
    })
  })

  it('reports every problem of oauth with its path', () => {
    const perUser = (o: unknown) => ({ perUser: { header: 'Authorization', scheme: 'Bearer', oauth: o } })
    const cases: [unknown, RegExp][] = [
      [perUser('yes'), /auth\.perUser\.oauth: expected \{ authorizationEndpoint, tokenEndpoint, clientId/],
      [perUser({ ...oauth, authorizationEndpoint: undefined }), /perUser\.oauth\.authorizationEndpoint: required/],
      [perUser({ ...oauth, tokenEndpoint: 'ftp://x' }), /perUser\.oauth\.tokenEndpoint: expected the http\(s\) URL/],
      [
        perUser({ ...oauth, authorizationEndpoint: 'https://x/a#f' }),
        /perUser\.oauth\.authorizationEndpoint: expected the http\(s\) URL of the authorization endpoint, without a fragment/,
      ],
      [perUser({ ...oauth, clientId: '' }), /perUser\.oauth\.clientId: expected a non-empty string/],
      [perUser({ ...oauth, clientSecretFile: 3 }), /perUser\.oauth\.clientSecretFile: expected a non-empty string/],
      [perUser({ ...oauth, resource: 'not a uri' }), /perUser\.oauth\.resource: expected an absolute URI/],
      [
        perUser({ ...oauth, redirectUri: 'https://gate.example/callback' }),
        /perUser\.oauth\.redirectUri: the gateway receives the redirect at \/oauth\/callback/,
      ],
      [perUser({ ...oauth, pkce: false }), /perUser\.oauth\.pkce: unknown key/],
    ]
    for (const [auth, message] of cases) expect(() => parse(auth), JSON.stringify(auth)).toThrow(message)
  })
})
