// A small OAuth authorization server and an MCP server that requires its bearer tokens, both on
// 127.0.0.1 and speaking the real wire formats: RFC 9728 protected resource metadata, RFC 8414
// authorization server metadata, a token endpoint (client credentials with client_secret_basic,
// client_secret_post or private_key_jwt; refresh tokens, rotated on use), and JWT access tokens
// minted with jose.
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { importSPKI, jwtVerify, SignJWT } from 'jose'

export interface TokenRequest {
  grantType: string | null
  /** How the client authenticated: 'basic', 'post', 'jwt' or 'none'. */
  auth: 'basic' | 'post' | 'jwt' | 'none'
  clientId: string | undefined
  scope: string | null
  resource: string | null
  refreshToken: string | null
}

export interface ProtectedSetup {
  /** The MCP endpoint. */
  url: string
  /** The authorization server's issuer URL. */
  issuer: string
  tokenRequests: TokenRequest[]
  /** Requests the MCP endpoint refused for want of a valid token. */
  unauthorized: () => number
  /** Make every access token issued so far invalid (as if they had expired). */
  revokeAccessTokens: () => void
  close: () => Promise<void>
}

export interface ProtectedOptions {
  clientId: string
  clientSecret?: string
  /** The PEM public key of a private_key_jwt client (ES256). */
  clientPublicKey?: string
  /** Refresh tokens that are valid now; each use replaces it with a new one. */
  refreshTokens?: string[]
  authMethods?: string[]
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  })
}

async function body(req: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of req) text += chunk
  return text
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(value))
}

export async function startProtected(options: ProtectedOptions): Promise<ProtectedSetup> {
  const signingKey = new TextEncoder().encode(randomUUID() + randomUUID())
  const tokenRequests: TokenRequest[] = []
  const refreshTokens = new Set(options.refreshTokens ?? [])
  let generation = 0
  let unauthorized = 0

  const auth = createServer()
  const issuer = await listen(auth)
  const mcp = createServer()
  const base = await listen(mcp)
  const url = `${base}/mcp`

  auth.on('request', async (req, res) => {
    if (req.url === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer,
        token_endpoint: `${issuer}/token`,
        authorization_endpoint: `${issuer}/authorize`,
        response_types_supported: ['code'],
        grant_types_supported: ['client_credentials', 'refresh_token'],
        token_endpoint_auth_methods_supported: options.authMethods ?? ['client_secret_basic'],
      })
    if (req.url !== '/token' || req.method !== 'POST') return json(res, 404, { error: 'not_found' })
    const form = new URLSearchParams(await body(req))
    const header = req.headers.authorization
    let clientId: string | undefined
    let secret: string | undefined
    let how: TokenRequest['auth'] = 'none'
    if (header?.startsWith('Basic ')) {
      how = 'basic'
      const [id, pass] = Buffer.from(header.slice(6), 'base64').toString().split(':')
      clientId = decodeURIComponent(id)
      secret = decodeURIComponent(pass ?? '')
    } else if (form.has('client_assertion')) {
      how = 'jwt'
      try {
        const key = await importSPKI(options.clientPublicKey ?? '', 'ES256')
        const { payload } = await jwtVerify(form.get('client_assertion') ?? '', key)
        clientId = payload.sub
      } catch {
        clientId = undefined
      }
    } else if (form.has('client_secret')) {
      how = 'post'
      clientId = form.get('client_id') ?? undefined
      secret = form.get('client_secret') ?? undefined
    } else clientId = form.get('client_id') ?? undefined
    const grantType = form.get('grant_type')
    tokenRequests.push({
      grantType,
      auth: how,
      clientId,
      scope: form.get('scope'),
      resource: form.get('resource'),
      refreshToken: form.get('refresh_token'),
    })
    const clientOk =
      clientId === options.clientId &&
      (how === 'jwt' ? options.clientPublicKey !== undefined : secret === options.clientSecret)
    if (!clientOk) return json(res, 401, { error: 'invalid_client', error_description: 'unknown client' })
    let refresh: string | undefined
    if (grantType === 'refresh_token') {
      const presented = form.get('refresh_token') ?? ''
      if (!refreshTokens.delete(presented))
        return json(res, 400, { error: 'invalid_grant', error_description: 'unknown refresh token' })
      refresh = `rt-${randomUUID()}`
      refreshTokens.add(refresh)
    } else if (grantType !== 'client_credentials') return json(res, 400, { error: 'unsupported_grant_type' })
    const scope = form.get('scope') ?? ''
    const token = await new SignJWT({ scope, gen: generation })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(clientId ?? '')
      .setIssuer(issuer)
      .setAudience(form.get('resource') ?? url)
      .setExpirationTime('1h')
      .sign(signingKey)
    json(res, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_in: 3600,
      ...(scope ? { scope } : {}),
      ...(refresh ? { refresh_token: refresh } : {}),
    })
  })

  const resourceMetadata = `${base}/.well-known/oauth-protected-resource/mcp`
  mcp.on('request', async (req, res) => {
    if (req.url === '/.well-known/oauth-protected-resource/mcp')
      return json(res, 200, { resource: url, authorization_servers: [issuer], scopes_supported: ['tools:read'] })
    if (req.url !== '/mcp') return json(res, 404, { error: 'not_found' })
    const header = req.headers.authorization ?? ''
    let claims: { sub?: string; scope?: unknown } | undefined
    try {
      const { payload } = await jwtVerify(header.replace(/^Bearer /, ''), signingKey, { issuer, audience: url })
      if (payload.gen === generation) claims = payload
    } catch {
      claims = undefined
    }
    if (!header.startsWith('Bearer ') || claims === undefined) {
      unauthorized++
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': `Bearer error="invalid_token", resource_metadata="${resourceMetadata}"` },
      )
    }
    const server = new McpServer({ name: 'protected', version: '1.0.0' })
    const who = claims
    server.registerTool('whoami', { description: 'Who the token names.' }, async () => ({
      content: [{ type: 'text', text: `${who.sub} scope=${String(who.scope)}` }],
    }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    res.on('close', () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })

  return {
    url,
    issuer,
    tokenRequests,
    unauthorized: () => unauthorized,
    revokeAccessTokens: () => {
      generation++
    },
    close: async () => {
      auth.closeAllConnections()
      mcp.closeAllConnections()
      await Promise.all([new Promise((resolve) => auth.close(resolve)), new Promise((resolve) => mcp.close(resolve))])
    },
  }
}
