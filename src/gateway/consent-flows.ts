// Consent by URL: a person without a credential for an upstream signs in to its authorization
// server in their browser (authorization code + PKCE S256), run by the gateway itself. A flow is
// bound to one subject and one server on the gateway's side (nothing of either is in a URL), its
// start link and its state are random and good once, it expires, and the browser that returns to
// the callback must be the one that opened the start link (a cookie set there). The tokens go to
// the vault of that subject and server only.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { escapeHtml } from '../viewer/page.js'
import { CONSENT_CALLBACK_PATH, type ConsentOAuthConfig } from './config-caller-auth.js'
import type { ConsentTokens } from './consent-secret.js'
import { postTokenForm, shown } from './token-endpoint.js'
import { UpstreamCredentialError } from './upstream-credential-error.js'

export const CONSENT_START_PATH = '/oauth/start'
/** How long a sign-in link and its state are good (ms). */
export const CONSENT_TTL_MS = 10 * 60_000
/** Flows waiting at once at most (all callers), and per subject and server. */
const MAX_FLOWS = 1000
const MAX_PER_TARGET = 5
const COOKIE_PREFIX = 'toolgate_consent_'

/** What a flow signs in to, and where its tokens go. */
export interface ConsentTarget {
  readonly server: string
  readonly subject: string
  readonly config: ConsentOAuthConfig
  /** The client secret, read from `clientSecretFile`; none for a public client. */
  readonly clientSecret?: string
  /** Keep the tokens (in the vault, for this subject and server). */
  store(tokens: ConsentTokens): void | Promise<void>
}

/** A sign-in the gateway started: the link to show, and its outcome. */
export interface ConsentFlow {
  /** The link the person opens: the gateway's start path, which sends the browser on. */
  readonly url: string
  /** For the elicitation; unrelated to any secret of the flow. */
  readonly elicitationId: string
  readonly expiresAt: number
  /** Settles when the callback stored the tokens (or any flow of the same subject and server did); rejects when it failed or expired. */
  readonly done: Promise<void>
  /** Give the flow up (the person declined). */
  cancel(): void
}

interface Pending {
  readonly target: ConsentTarget
  readonly start: string
  readonly state: string
  readonly verifier: string
  readonly redirectUri: string
  readonly expiresAt: number
  /** The hash of the browser's cookie, once the start link was opened. */
  browser?: Buffer
  readonly settle: { resolve(): void; reject(error: Error): void }
  readonly timer: NodeJS.Timeout
}

/** A log line the flows write; never given a secret. */
export type ConsentLog = (line: string) => void

const random = () => randomBytes(32).toString('base64url')
const sha256 = (text: string) => createHash('sha256').update(text).digest()

export class ConsentFlows {
  /** By start link id, until opened; then by state. */
  private readonly byStart = new Map<string, Pending>()
  private readonly byState = new Map<string, Pending>()
  /** The gateway's own origin, known once `serve --http` listens. */
  origin: string | undefined

  constructor(private readonly now: () => number = Date.now) {}

  /** Start a sign-in for `target`; throws an UpstreamCredentialError when the gateway has no HTTP face to run it on. */
  begin(target: ConsentTarget): ConsentFlow {
    const redirectUri =
      target.config.redirectUri ?? (this.origin === undefined ? undefined : `${this.origin}${CONSENT_CALLBACK_PATH}`)
    if (redirectUri === undefined)
      throw new UpstreamCredentialError(
        `servers.${target.server} needs you to sign in to it in a browser, which the gateway runs only when serving ` +
          'with --http; an operator can set your credential with `toolgate vault set` instead',
      )
    this.bound(target)
    let settle!: Pending['settle']
    const done = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject }
    })
    // Nobody may be waiting: an unhandled rejection must not end the process.
    done.catch(() => {})
    const pending: Pending = {
      target,
      start: random(),
      state: random(),
      verifier: random(),
      redirectUri,
      expiresAt: this.now() + CONSENT_TTL_MS,
      settle,
      timer: setTimeout(() => this.fail(pending, 'the sign-in link expired before it was completed'), CONSENT_TTL_MS),
    }
    pending.timer.unref()
    this.byStart.set(pending.start, pending)
    return {
      url: `${new URL(redirectUri).origin}${CONSENT_START_PATH}?flow=${pending.start}`,
      elicitationId: randomUUID(),
      expiresAt: pending.expiresAt,
      done,
      cancel: () => this.fail(pending, 'the sign-in was declined'),
    }
  }

  /** Answer `/oauth/start` and `/oauth/callback`; false for any other path. */
  serve(pathname: string, req: IncomingMessage, res: ServerResponse, log: ConsentLog): boolean {
    if (pathname !== CONSENT_START_PATH && pathname !== CONSENT_CALLBACK_PATH) return false
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('method not allowed\n')
      return true
    }
    const query = new URL(req.url ?? '/', 'http://gateway').searchParams
    if (pathname === CONSENT_START_PATH) this.open(query, res)
    else void this.callback(query, req, res, log)
    return true
  }

  /** The start link: bind the browser with a cookie, then send it to the authorization endpoint. */
  private open(query: URLSearchParams, res: ServerResponse): void {
    const id = query.get('flow') ?? ''
    const pending = this.byStart.get(id)
    // One use: a second opening (another browser, or someone the link was passed on to) is refused.
    this.byStart.delete(id)
    if (pending === undefined || pending.expiresAt <= this.now()) {
      page(res, 400, 'This sign-in link is unknown, used or expired. Call the tool again for a new one.')
      return
    }
    const nonce = random()
    pending.browser = sha256(nonce)
    this.byState.set(pending.state, pending)
    const { config } = pending.target
    const authorize = new URL(config.authorizationEndpoint)
    authorize.searchParams.set('response_type', 'code')
    authorize.searchParams.set('client_id', config.clientId)
    authorize.searchParams.set('redirect_uri', pending.redirectUri)
    authorize.searchParams.set('state', pending.state)
    authorize.searchParams.set('code_challenge', createHash('sha256').update(pending.verifier).digest('base64url'))
    authorize.searchParams.set('code_challenge_method', 'S256')
    if (config.scope !== undefined) authorize.searchParams.set('scope', config.scope)
    if (config.resource !== undefined) authorize.searchParams.set('resource', config.resource)
    const secure = new URL(pending.redirectUri).protocol === 'https:' ? '; Secure' : ''
    res
      .writeHead(302, {
        location: authorize.href,
        // Lax: the authorization server's redirect back is a top-level GET, which carries it.
        'set-cookie': `${cookieName(pending.state)}=${nonce}; Path=${CONSENT_CALLBACK_PATH}; HttpOnly; SameSite=Lax; Max-Age=${Math.ceil(CONSENT_TTL_MS / 1000)}${secure}`,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      })
      .end()
  }

  private async callback(
    query: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
    log: ConsentLog,
  ): Promise<void> {
    const state = query.get('state') ?? ''
    const pending = this.byState.get(state)
    if (pending === undefined || pending.expiresAt <= this.now())
      return page(res, 400, 'This sign-in is unknown, already completed or expired. Call the tool again to start over.')
    // Good once, whatever happens next: a state seen twice was copied, so it is spent.
    this.byState.delete(state)
    const { target } = pending
    const who = `servers.${target.server}: the sign-in of ${shown(target.subject)}`
    const nonce = cookieOf(req.headers.cookie, cookieName(state))
    const clear = `${cookieName(state)}=; Path=${CONSENT_CALLBACK_PATH}; HttpOnly; SameSite=Lax; Max-Age=0`
    if (nonce === undefined || pending.browser === undefined || !timingSafeEqual(sha256(nonce), pending.browser)) {
      log(`${who} came back in another browser than the one that opened its link; refused`)
      this.fail(pending, 'the sign-in came back in another browser than the one that opened the link')
      return page(res, 400, 'This sign-in was started in another browser. Call the tool again to start over.', clear)
    }
    const error = query.get('error')
    const code = query.get('code')
    if (error !== null || code === null || code === '') {
      const why = error !== null ? `the authorization server answered ${shown(error)}` : 'no code came back'
      log(`${who} failed: ${why}`)
      this.fail(pending, `the sign-in failed: ${why}`)
      return page(res, 400, `The sign-in failed: ${why}.`, clear)
    }
    let tokens: ConsentTokens
    try {
      tokens = await redeem(pending, code)
      await target.store(tokens)
    } catch (caught) {
      const why = caught instanceof UpstreamCredentialError ? caught.message : 'the tokens could not be stored'
      log(`${who} failed: ${why}`)
      this.fail(pending, `the sign-in failed: ${why}`)
      return page(res, 502, `The sign-in failed: ${why}.`, clear)
    }
    clearTimeout(pending.timer)
    log(`${who} succeeded; the credential is in the vault`)
    pending.settle.resolve()
    // Other calls of the same person waiting on their own links go on with this credential.
    for (const map of [this.byStart, this.byState])
      for (const [key, other] of map)
        if (other.target.server === target.server && other.target.subject === target.subject) {
          map.delete(key)
          clearTimeout(other.timer)
          other.settle.resolve()
        }
    page(
      res,
      200,
      `Signed in: ${target.server} is connected for ${target.subject}. You can close this window and go back to your client.`,
      clear,
    )
  }

  private fail(pending: Pending, why: string): void {
    clearTimeout(pending.timer)
    this.byStart.delete(pending.start)
    this.byState.delete(pending.state)
    pending.settle.reject(new UpstreamCredentialError(`servers.${pending.target.server}: ${why}`))
  }

  /** Keep the number of waiting flows bounded: the oldest of the target (then of all) gives way. */
  private bound(target: ConsentTarget): void {
    const all = [...this.byStart.values(), ...this.byState.values()]
    const same = all.filter((p) => p.target.server === target.server && p.target.subject === target.subject)
    if (same.length >= MAX_PER_TARGET) this.fail(same[0] as Pending, 'a newer sign-in link replaced this one')
    else if (all.length >= MAX_FLOWS) this.fail(all[0] as Pending, 'too many sign-ins were waiting')
  }
}

/** The flows of this process: the upstream calls start them, `serve --http` answers their links. */
export const consentFlows = new ConsentFlows()

function cookieName(state: string): string {
  return `${COOKIE_PREFIX}${createHash('sha256').update(state).digest('hex').slice(0, 16)}`
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

/** Trade the code for tokens at the token endpoint, with the flow's PKCE verifier. */
function redeem(pending: Pending, code: string): Promise<ConsentTokens> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: pending.redirectUri,
    code_verifier: pending.verifier,
  })
  return tokenRequest(pending.target, form, 'refused the code')
}

/** New tokens for a stored refresh token (RFC 6749 section 6); the old refresh token is kept when no new one comes. */
export async function refreshTokens(
  target: Pick<ConsentTarget, 'server' | 'config' | 'clientSecret'>,
  refreshToken: string,
): Promise<ConsentTokens> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken })
  if (target.config.scope !== undefined) form.set('scope', target.config.scope)
  const fresh = await tokenRequest(target, form, 'refused the refresh token')
  return fresh.refreshToken === undefined ? { ...fresh, refreshToken } : fresh
}

/** One request to the token endpoint, authenticated as the client; never redirected. */
async function tokenRequest(
  target: Pick<ConsentTarget, 'server' | 'config' | 'clientSecret'>,
  form: URLSearchParams,
  refusal: string,
): Promise<ConsentTokens> {
  const { config, clientSecret, server } = target
  if (config.resource !== undefined) form.set('resource', config.resource)
  if (clientSecret === undefined) form.set('client_id', config.clientId)
  const failed = (why: string) => new UpstreamCredentialError(`the token endpoint of servers.${server} ${why}`)
  const { status, ok, fields } = await postTokenForm(
    config.tokenEndpoint,
    form,
    clientSecret !== undefined ? { clientId: config.clientId, secret: clientSecret } : undefined,
    (failure) =>
      failed(
        typeof failure === 'object' ? `answered HTTP ${failure.status} without a JSON body` : 'could not be reached',
      ),
  )
  if (!ok) throw failed(`${refusal}: HTTP ${status} ${shown(fields.error ?? 'error')}`)
  const printable = (value: unknown) => typeof value === 'string' && /^[\x21-\x7e]+$/.test(value)
  if (!printable(fields.access_token)) throw failed('answered without a usable access_token')
  const expiresIn = fields.expires_in
  return {
    accessToken: fields.access_token as string,
    ...(printable(fields.refresh_token) ? { refreshToken: fields.refresh_token as string } : {}),
    ...(typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
      ? { expiresAt: Date.now() + expiresIn * 1000 }
      : {}),
  }
}

/** A small page for the browser: the text escaped, nothing loaded, nothing framed, no referrer. */
function page(res: ServerResponse, status: number, text: string, cookie?: string): void {
  res
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      ...(cookie !== undefined ? { 'set-cookie': cookie } : {}),
    })
    .end(
      `<!doctype html>\n<html><head><meta charset="utf-8"><title>toolgate sign-in</title></head>` +
        `<body><p>${escapeHtml(text)}</p></body></html>\n`,
    )
}
