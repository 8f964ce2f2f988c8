// For the consent-by-URL tests (issue 39, item 3): on 127.0.0.1, an upstream's OAuth authorization
// server that runs the authorization code grant with PKCE (S256 only) and checks the state it was
// given comes back with its code; and a browser that follows the sign-in link with its own cookies.
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

interface Issued {
  readonly clientId: string
  readonly redirectUri: string
  readonly challenge: string
  readonly user: string
  readonly state: string
}

export interface FakeAuthorizationServer {
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  /** The upstream account the next browser signs in as. */
  user: string
  /** Hostile: bind the next code to another PKCE challenge than the one the gateway sent. */
  tamperChallenge: boolean
  /** Each authorization request's query. */
  readonly authorizations: URLSearchParams[]
  /** Each token request: its outcome, and every request's raw Authorization and body. */
  readonly tokenRequests: { ok: boolean; error?: string; grant?: string }[]
  /** Forget every refresh token of `user` (revoked). */
  revokeRefresh(user: string): void
  readonly received: string[]
  /** Access and refresh tokens issued, by the upstream user. */
  readonly issued: Map<string, { access: string; refresh: string }>
  close(): Promise<void>
}

const b64url = (buf: Buffer) => buf.toString('base64url')

async function readBody(req: IncomingMessage): Promise<string> {
  let text = ''
  req.setEncoding('utf8')
  for await (const chunk of req) text += chunk
  return text
}

export async function startAuthorizationServer(client: {
  id: string
  secret: string
}): Promise<FakeAuthorizationServer> {
  const codes = new Map<string, Issued>()
  /** Live refresh tokens, by the user they refresh; each works once (rotated). */
  const refreshes = new Map<string, string>()
  const state = {
    user: 'someone',
    tamperChallenge: false,
    authorizations: [] as URLSearchParams[],
    tokenRequests: [] as { ok: boolean; error?: string; grant?: string }[],
    revokeRefresh: (user: string) => {
      for (const [token, u] of refreshes) if (u === user) refreshes.delete(token)
    },
    received: [] as string[],
    issued: new Map<string, { access: string; refresh: string }>(),
  }
  const server: Server = createServer(async (req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    const url = new URL(req.url ?? '/', 'http://as')
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const q = url.searchParams
      state.authorizations.push(q)
      const redirect = q.get('redirect_uri') ?? ''
      if (q.get('response_type') !== 'code' || q.get('client_id') !== client.id || !redirect)
        return json(400, { error: 'invalid_request' })
      // PKCE is required, and only S256.
      if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? ''))
        return json(400, { error: 'invalid_request', error_description: 'PKCE S256 required' })
      const returnState = q.get('state')
      if (returnState === null || returnState.length < 32) return json(400, { error: 'invalid_request' })
      const code = b64url(randomBytes(24))
      const challenge = state.tamperChallenge
        ? b64url(randomBytes(32)).slice(0, 43)
        : (q.get('code_challenge') as string)
      state.tamperChallenge = false
      codes.set(code, { clientId: client.id, redirectUri: redirect, challenge, user: state.user, state: returnState })
      const back = new URL(redirect)
      back.searchParams.set('code', code)
      back.searchParams.set('state', returnState)
      return void res.writeHead(302, { location: back.href }).end()
    }
    if (req.method !== 'POST' || url.pathname !== '/token') return json(404, { error: 'not_found' })
    const text = await readBody(req)
    state.received.push(`${req.headers.authorization ?? ''} ${text}`)
    const refuse = (status: number, error: string) => {
      state.tokenRequests.push({ ok: false, error })
      return json(status, { error })
    }
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
    const [id, secret] = basic
      ? Buffer.from(basic[1], 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : []
    if (id !== client.id || secret !== client.secret) return refuse(401, 'invalid_client')
    const form = new URLSearchParams(text)
    if (form.get('grant_type') === 'refresh_token') {
      const user = refreshes.get(form.get('refresh_token') ?? '')
      if (user === undefined) return refuse(400, 'invalid_grant')
      refreshes.delete(form.get('refresh_token') ?? '')
      const tokens = { access: `at-${user}-${b64url(randomBytes(12))}`, refresh: `rt-${b64url(randomBytes(12))}` }
      refreshes.set(tokens.refresh, user)
      state.issued.set(user, tokens)
      state.tokenRequests.push({ ok: true, grant: 'refresh_token' })
      return json(200, {
        access_token: tokens.access,
        refresh_token: tokens.refresh,
        token_type: 'Bearer',
        expires_in: 3600,
      })
    }
    if (form.get('grant_type') !== 'authorization_code') return refuse(400, 'unsupported_grant_type')
    const code = form.get('code') ?? ''
    const issued = codes.get(code)
    codes.delete(code)
    if (issued === undefined) return refuse(400, 'invalid_grant')
    if (form.get('redirect_uri') !== issued.redirectUri) return refuse(400, 'invalid_grant')
    const verifier = form.get('code_verifier') ?? ''
    if (b64url(createHash('sha256').update(verifier).digest()) !== issued.challenge) return refuse(400, 'invalid_grant')
    const tokens = { access: `at-${issued.user}-${b64url(randomBytes(12))}`, refresh: `rt-${b64url(randomBytes(12))}` }
    state.issued.set(issued.user, tokens)
    refreshes.set(tokens.refresh, issued.user)
    state.tokenRequests.push({ ok: true, grant: 'authorization_code' })
    return json(200, {
      access_token: tokens.access,
      refresh_token: tokens.refresh,
      token_type: 'Bearer',
      expires_in: 3600,
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return Object.assign(state, {
    authorizationEndpoint: `${origin}/authorize`,
    tokenEndpoint: `${origin}/token`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  })
}

/** What a browser saw of one sign-in. */
export interface Visit {
  readonly status: number
  readonly page: string
  /** The callback URL the authorization server sent the browser to (holds the code and the state). */
  readonly callback?: string
}

/** A browser: keeps the cookies it is given, follows redirects one by one. */
export class Browser {
  readonly cookies = new Map<string, string>()

  async get(url: string): Promise<Response> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} })
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair.indexOf('=')
      const value = pair.slice(at + 1)
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(pair.slice(0, at))
      else this.cookies.set(pair.slice(0, at), value)
    }
    return res
  }

  /** Open a sign-in link and follow it to the page the gateway shows at the end. */
  async signIn(link: string): Promise<Visit> {
    let url = link
    let callback: string | undefined
    for (let hop = 0; hop < 5; hop++) {
      const res = await this.get(url)
      const location = res.headers.get('location')
      if (res.status !== 302 || location === null) {
        return { status: res.status, page: await res.text(), ...(callback ? { callback } : {}) }
      }
      await res.arrayBuffer()
      url = new URL(location, url).href
      if (new URL(url).pathname === '/oauth/callback') callback = url
    }
    throw new Error('too many redirects')
  }

  /** Open a sign-in link but stop before the callback (the code and state it would carry are returned). */
  async stopBeforeCallback(link: string): Promise<string> {
    let url = link
    for (let hop = 0; hop < 5; hop++) {
      const res = await this.get(url)
      const location = res.headers.get('location')
      await res.arrayBuffer()
      if (res.status !== 302 || location === null) throw new Error(`no redirect from ${url}: ${res.status}`)
      url = new URL(location, url).href
      if (new URL(url).pathname === '/oauth/callback') return url
    }
    throw new Error('too many redirects')
  }
}
