// A small OAuth 2.1 authorization server for the tests, on 127.0.0.1: RFC 8414 metadata, a JWKS
// whose signing key can be rotated, and a token endpoint for the client_credentials grant that
// mints JWT access tokens with jose (audience = the RFC 8707 `resource` the client asks for).
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'

type Key = Awaited<ReturnType<typeof generateKeyPair>> & { kid: string; alg: string }

export interface TestClient {
  secret: string
  scope?: string
  groups?: string[]
}

export interface AuthServer {
  readonly issuer: string
  readonly jwksUri: string
  /** How many times the JWKS was fetched. */
  jwksFetches(): number
  /** A new signing key; the old one leaves the JWKS unless `keepOld`. */
  rotate(keepOld?: boolean): Promise<void>
  /** Mint a token with the current key (claims override the defaults; `key` signs with another key, same kid). */
  mint(claims: JWTPayload, options?: { key?: Key; alg?: string; expiresIn?: string | number }): Promise<string>
  /** A key not in the JWKS, for badly signed tokens. */
  strangerKey(): Promise<Key>
  /** The resource each issued token was minted for. */
  readonly issued: { clientId: string; resource: string | null; scope: string | null }[]
  close(): Promise<void>
}

async function newKey(alg = 'ES256'): Promise<Key> {
  return { ...(await generateKeyPair(alg, { extractable: true })), kid: randomUUID(), alg }
}

export async function startAuthServer(options: {
  clients: Record<string, TestClient>
  audience: () => string
}): Promise<AuthServer> {
  let keys: Key[] = [await newKey()]
  let fetches = 0
  const issued: AuthServer['issued'] = []
  let issuer = ''
  const publicJwks = async () => ({
    keys: await Promise.all(
      keys.map(async (k): Promise<JWK> => ({ ...(await exportJWK(k.publicKey)), kid: k.kid, alg: k.alg, use: 'sig' })),
    ),
  })
  const sign = (claims: JWTPayload, key: Key, alg: string, expiresIn: string | number) =>
    new SignJWT({ iss: issuer, ...claims })
      .setProtectedHeader({ alg, kid: key.kid, typ: 'at+jwt' })
      .setIssuedAt()
      .setExpirationTime(expiresIn)
      .setJti(randomUUID())
      .sign(key.privateKey)

  const server: Server = createServer((req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    const url = new URL(req.url ?? '/', issuer)
    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server')
      return json(200, {
        issuer,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        authorization_endpoint: `${issuer}/authorize`,
        response_types_supported: ['code'],
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        code_challenge_methods_supported: ['S256'],
      })
    if (req.method === 'GET' && url.pathname === '/jwks') {
      fetches++
      return void publicJwks().then((body) => json(200, body))
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      let text = ''
      req.setEncoding('utf8')
      req.on('data', (chunk: string) => {
        text += chunk
      })
      req.on('end', () => {
        const form = new URLSearchParams(text)
        let clientId = form.get('client_id')
        let secret = form.get('client_secret')
        const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
        if (basic) {
          const [id, pass] = Buffer.from(basic[1], 'base64').toString('utf8').split(':')
          clientId = decodeURIComponent(id)
          secret = decodeURIComponent(pass)
        }
        const client = clientId === null ? undefined : options.clients[clientId]
        if (client === undefined || client.secret !== secret) return json(401, { error: 'invalid_client' })
        if (form.get('grant_type') !== 'client_credentials') return json(400, { error: 'unsupported_grant_type' })
        const resource = form.get('resource')
        const scope = client.scope ?? form.get('scope') ?? ''
        issued.push({ clientId: clientId as string, resource, scope: form.get('scope') })
        void sign(
          { sub: clientId as string, aud: resource ?? options.audience(), scope, groups: client.groups ?? [] },
          keys[0],
          keys[0].alg,
          '10m',
        ).then((token) => json(200, { access_token: token, token_type: 'Bearer', expires_in: 600, scope }))
      })
      return
    }
    json(404, { error: 'not_found' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    jwksFetches: () => fetches,
    async rotate(keepOld = false) {
      const fresh = await newKey()
      keys = keepOld ? [fresh, ...keys] : [fresh]
    },
    mint: (claims, o = {}) =>
      sign(
        { sub: 'alice', aud: options.audience(), scope: '', groups: [], ...claims },
        o.key ?? keys[0],
        o.alg ?? (o.key ?? keys[0]).alg,
        o.expiresIn ?? '10m',
      ),
    async strangerKey() {
      const key = await newKey()
      return { ...key, kid: keys[0].kid }
    },
    issued,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
