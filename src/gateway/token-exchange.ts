// RFC 8693 token exchange for one upstream: the caller's validated OAuth token goes to the
// configured token endpoint (and nowhere else), which answers with a token for the upstream that
// carries the caller's own rights. Tokens are cached by subject until shortly before they expire,
// never shared across subjects, and renewed once when the upstream refuses one.
import { createPrivateKey, type KeyObject, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { decodeJwt, SignJWT } from 'jose'
import { ConfigError } from '../errors/config-error.js'
import type { TokenExchangeConfig } from './config-caller-auth.js'
import { postTokenForm, shown } from './token-endpoint.js'
import { UpstreamCredentialError } from './upstream-credential-error.js'

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token'
/** A token without `expires_in` is used this long (ms) before it is exchanged again. */
const DEFAULT_LIFETIME_MS = 60_000
/** Renewed this long before it expires at most (ms); a short-lived token a tenth of its lifetime before. */
const RENEW_MARGIN_MS = 30_000

interface Cached {
  readonly token: string
  readonly renewAt: number
}

/** How the gateway authenticates to the token endpoint. */
type ClientAuth = { readonly secret: string } | { readonly key: KeyObject; readonly alg: string }

/** The JWS algorithm for a private key. */
function algorithmOf(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS256'
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA'
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve
    return curve === 'prime256v1'
      ? 'ES256'
      : curve === 'secp384r1'
        ? 'ES384'
        : curve === 'secp521r1'
          ? 'ES512'
          : undefined
  }
  return undefined
}

/** Read the client's secret or key file; a ConfigError names the config key. */
function clientAuthOf(config: TokenExchangeConfig, at: string): ClientAuth {
  const read = (file: string, key: string) => {
    try {
      return readFileSync(file, 'utf8').trim()
    } catch (error) {
      throw new ConfigError(`${at}.${key}`, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
    }
  }
  if (config.clientSecretFile !== undefined) {
    const secret = read(config.clientSecretFile, 'clientSecretFile')
    if (secret === '') throw new ConfigError(`${at}.clientSecretFile`, `${config.clientSecretFile} is empty`)
    return { secret }
  }
  const file = config.privateKeyFile as string
  let key: KeyObject
  try {
    key = createPrivateKey(read(file, 'privateKeyFile'))
  } catch (error) {
    if (error instanceof ConfigError) throw error
    throw new ConfigError(`${at}.privateKeyFile`, `${file} is not a PEM private key`)
  }
  const alg = algorithmOf(key)
  if (alg === undefined)
    throw new ConfigError(`${at}.privateKeyFile`, `${file}: expected an RSA, EC (P-256/384/521) or Ed25519 key`)
  return { key, alg }
}

export class TokenExchanger {
  private readonly cache = new Map<string, Cached>()
  private readonly pending = new Map<string, Promise<Cached>>()
  private readonly client: ClientAuth
  private actor: { cached?: Cached; pending?: Promise<Cached> } = {}

  /** Reads the client's secret or key now: a missing file stops the gateway before it serves. */
  constructor(
    private readonly server: string,
    private readonly config: TokenExchangeConfig,
  ) {
    this.client = clientAuthOf(config, `servers.${server}.auth.tokenExchange`)
  }

  /**
   * The upstream token of `subject`, exchanged for `subjectToken` when none is cached (or the
   * cached one is due, or is `refused`: the upstream answered 401 to it).
   */
  async tokenFor(subject: string, subjectToken: string, refused?: string): Promise<string> {
    const known = this.cache.get(subject)
    if (known !== undefined && known.token !== refused && known.renewAt > Date.now()) return known.token
    if (known !== undefined && (known.token === refused || known.renewAt <= Date.now())) this.cache.delete(subject)
    let running = this.pending.get(subject)
    if (running === undefined) {
      running = this.exchange(subject, subjectToken).finally(() => this.pending.delete(subject))
      this.pending.set(subject, running)
    }
    const fresh = await running
    this.cache.set(subject, fresh)
    return fresh.token
  }

  /** Forget every cached token (for tests and a config reload). */
  clear(): void {
    this.cache.clear()
    this.actor = {}
  }

  private async exchange(subject: string, subjectToken: string): Promise<Cached> {
    const { config } = this
    const form = new URLSearchParams({
      grant_type: GRANT,
      subject_token: subjectToken,
      subject_token_type: config.subjectTokenType ?? ACCESS_TOKEN,
      requested_token_type: ACCESS_TOKEN,
    })
    if (config.audience !== undefined) form.set('audience', config.audience)
    if (config.resource !== undefined) form.set('resource', config.resource)
    if (config.scope !== undefined) form.set('scope', config.scope)
    if (config.actor === true) {
      form.set('actor_token', await this.clientToken())
      form.set('actor_token_type', ACCESS_TOKEN)
    }
    const answer = await this.post(form, `exchanging the token of ${shown(subject)}`)
    checkSubject(answer.token, subject, this.server)
    return answer
  }

  /**
   * The gateway's own client token (client credentials): the actor of each exchange with `actor`,
   * and what lists the upstream's tools (never what calls them for a person).
   */
  async clientToken(): Promise<string> {
    const { cached } = this.actor
    if (cached !== undefined && cached.renewAt > Date.now()) return cached.token
    this.actor.pending ??= this.post(
      new URLSearchParams({
        grant_type: 'client_credentials',
        ...(this.config.scope !== undefined ? { scope: this.config.scope } : {}),
      }),
      "getting the gateway's own token (actor)",
    ).finally(() => {
      this.actor.pending = undefined
    })
    const fresh = await this.actor.pending
    this.actor.cached = fresh
    return fresh.token
  }

  /** One token request, authenticated as the client; only ever to the configured endpoint, never redirected. */
  private async post(form: URLSearchParams, doing: string): Promise<Cached> {
    const { config } = this
    if (!('secret' in this.client)) {
      form.set('client_id', config.clientId)
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
      form.set(
        'client_assertion',
        await new SignJWT({})
          .setProtectedHeader({ alg: this.client.alg })
          .setIssuer(config.clientId)
          .setSubject(config.clientId)
          .setAudience(config.tokenEndpoint)
          .setJti(randomUUID())
          .setIssuedAt()
          .setExpirationTime('60s')
          .sign(this.client.key),
      )
    }
    const failed = (why: string) =>
      new UpstreamCredentialError(`servers.${this.server}: ${doing} at its token endpoint failed: ${why}`)
    const { status, ok, fields } = await postTokenForm(
      config.tokenEndpoint,
      form,
      'secret' in this.client ? { clientId: config.clientId, secret: this.client.secret } : undefined,
      (failure) =>
        failed(
          failure === 'timeout'
            ? 'no answer in time'
            : failure === 'unreachable'
              ? 'not reachable'
              : `HTTP ${failure.status} without a JSON body`,
        ),
    )
    if (!ok)
      throw failed(
        `HTTP ${status} ${shown(fields.error ?? 'error')}` +
          (fields.error_description !== undefined ? ` (${shown(fields.error_description)})` : ''),
      )
    const token = fields.access_token
    if (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token))
      throw failed('the answer holds no usable access_token')
    const expiresIn = fields.expires_in
    const lifetime =
      typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
        ? expiresIn * 1000
        : DEFAULT_LIFETIME_MS
    return { token, renewAt: Date.now() + lifetime - Math.min(RENEW_MARGIN_MS, lifetime / 10) }
  }
}

/**
 * A returned token that is a JWT must name the caller as its subject: an endpoint that answers
 * with another person's token (a bug, or an attack) must not give the caller their rights.
 */
function checkSubject(token: string, subject: string, server: string): void {
  let payload: Record<string, unknown>
  try {
    payload = decodeJwt(token)
  } catch {
    return // an opaque token: nothing to check
  }
  if (payload.sub !== subject)
    throw new UpstreamCredentialError(
      `servers.${server}: the token endpoint answered with a token for another subject than the caller ${shown(subject)}; it was not used`,
    )
}
