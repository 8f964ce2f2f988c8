// For the per-caller credential tests (issue 39): on 127.0.0.1, an authorization server that mints
// the callers' tokens and exchanges them (RFC 8693), and an MCP upstream (the official SDK server,
// one session per client) whose `whoami` tool echoes the Authorization its call carried.
import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { exportJWK, generateKeyPair, type JWTPayload, jwtVerify, SignJWT } from 'jose'

export interface ExchangeServer {
  readonly issuer: string
  readonly jwksUri: string
  readonly tokenEndpoint: string
  /** A caller's token for the gateway (audience `audience`). */
  mint(sub: string, audience: string): Promise<string>
  /** Each exchange asked for: whose token, with which actor, what audience; and client-credentials grants. */
  readonly exchanges: { subject: string; actor?: string; audience: string | null }[]
  readonly clientGrants: number[]
  /** Seconds an exchanged token lives. */
  ttl: number
  /** Answer an exchange of `subject` with a token of another subject (hostile). */
  readonly impostor: Map<string, string>
  /** Every request body and Authorization header the endpoint received. */
  readonly received: string[]
  close(): Promise<void>
}

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'

async function readBody(req: IncomingMessage): Promise<string> {
  let text = ''
  req.setEncoding('utf8')
  for await (const chunk of req) text += chunk
  return text
}

export async function startExchangeServer(client: { id: string; secret: string }): Promise<ExchangeServer> {
  const key = await generateKeyPair('ES256', { extractable: true })
  const kid = randomUUID()
  let issuer = ''
  const sign = (claims: JWTPayload, ttl: number) =>
    new SignJWT({ iss: issuer, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttl)
      .setJti(randomUUID())
      .sign(key.privateKey)
  const state: Omit<ExchangeServer, 'issuer' | 'jwksUri' | 'tokenEndpoint' | 'mint' | 'close'> = {
    exchanges: [],
    clientGrants: [],
    ttl: 600,
    impostor: new Map(),
    received: [],
  }
  const server: Server = createServer(async (req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (req.method === 'GET' && req.url === '/jwks')
      return json(200, { keys: [{ ...(await exportJWK(key.publicKey)), kid, alg: 'ES256', use: 'sig' }] })
    if (req.method !== 'POST' || req.url !== '/token') return json(404, { error: 'not_found' })
    const text = await readBody(req)
    state.received.push(`${req.headers.authorization ?? ''} ${text}`)
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
    const [id, secret] = basic
      ? Buffer.from(basic[1], 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : []
    if (id !== client.id || secret !== client.secret) return json(401, { error: 'invalid_client' })
    const form = new URLSearchParams(text)
    if (form.get('grant_type') === 'client_credentials') {
      state.clientGrants.push(Date.now())
      return json(200, { access_token: await sign({ sub: client.id }, 600), token_type: 'Bearer', expires_in: 600 })
    }
    if (form.get('grant_type') !== EXCHANGE) return json(400, { error: 'unsupported_grant_type' })
    let subject: string
    try {
      const { payload } = await jwtVerify(form.get('subject_token') ?? '', key.publicKey, { issuer })
      subject = payload.sub as string
    } catch {
      return json(400, { error: 'invalid_grant', error_description: 'the subject token is not valid' })
    }
    let actor: string | undefined
    const actorToken = form.get('actor_token')
    if (actorToken !== null) {
      const { payload } = await jwtVerify(actorToken, key.publicKey, { issuer })
      actor = payload.sub as string
    }
    const audience = form.get('audience')
    state.exchanges.push({ subject, audience, ...(actor ? { actor } : {}) })
    const sub = state.impostor.get(subject) ?? subject
    const token = await sign({ sub, aud: audience ?? 'upstream', ...(actor ? { act: { sub: actor } } : {}) }, state.ttl)
    return json(200, {
      access_token: token,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: state.ttl,
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return Object.assign(state, {
    issuer,
    jwksUri: `${issuer}/jwks`,
    tokenEndpoint: `${issuer}/token`,
    mint: (sub: string, audience: string) => sign({ sub, aud: audience, scope: '', groups: [] }, 600),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  })
}

export interface EchoUpstream {
  readonly url: string
  /** Authorization values answered 401 (a revoked token). */
  readonly revoked: Set<string>
  /** How many requests were answered 401. */
  refusals: number
  /** The Authorization of each session's initialize, by session id. */
  readonly sessions: Map<string, string | undefined>
  /** Each Authorization seen, by the digest `whoami` answers with (so no credential is in a result). */
  readonly seen: Map<string, string>
  close(): Promise<void>
}

/**
 * The upstream: each `whoami` answers "<digest of its request's Authorization> | <digest of the
 * session's first Authorization>"; `seen` maps a digest back to the header.
 */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const state = {
    revoked: new Set<string>(),
    refusals: 0,
    sessions: new Map<string, string | undefined>(),
    seen: new Map<string, string>(),
  }
  const digest = (value: string | undefined) => {
    if (value === undefined) return 'none'
    const hash = createHash('sha256').update(value).digest('hex').slice(0, 16)
    state.seen.set(hash, value)
    return hash
  }
  const http: Server = createServer(async (req, res) => {
    const authorization = req.headers.authorization
    if (authorization !== undefined && state.revoked.has(authorization)) {
      state.refusals++
      return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end()
    }
    const text = await readBody(req)
    const body = text === '' ? undefined : JSON.parse(text)
    const id = req.headers['mcp-session-id']
    let transport = typeof id === 'string' ? transports.get(id) : undefined
    if (transport === undefined) {
      if (typeof id === 'string') return void res.writeHead(404).end()
      const mcp = new McpServer({ name: 'echo-upstream', version: '1.0.0' })
      let opener: string | undefined
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid) => {
          transports.set(sid, fresh)
          opener = authorization
          state.sessions.set(sid, authorization)
        },
      })
      mcp.registerTool('whoami', { description: 'Echo the Authorization of this call.' }, async (extra) => ({
        content: [
          {
            type: 'text' as const,
            text: `${digest(extra.requestInfo?.headers.authorization as string | undefined)} | ${digest(opener)}`,
          },
        ],
      }))
      await mcp.connect(fresh)
      transport = fresh
    }
    await transport.handleRequest(req, res, body)
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return Object.assign(state, {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close().catch(() => {})))
      await new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      })
    },
  })
}
