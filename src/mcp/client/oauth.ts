// OAuth for Streamable HTTP upstreams, for the grants that need no person at a browser: client
// credentials (a client secret or a private-key JWT) and a refresh token obtained beforehand. The
// SDK's auth flow does the discovery (protected resource metadata, then the authorization server's
// metadata and its token endpoint), picks the client authentication the server supports, and asks
// for a token whenever the server answers 401; this provider only says which grant to use.
import type {
  AddClientAuthentication,
  OAuthClientInformationContext,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthTokens,
} from '@modelcontextprotocol/client'
import { ConfigError } from '../../errors/config-error.js'
import type { McpOAuthProvider } from '../protocol/wire-types.js'

interface McpOAuthCommon {
  /** The client id registered with the authorization server. */
  readonly clientId: string
  /** The client secret (sent as the server prefers: HTTP Basic or in the form); none for a public client. */
  readonly clientSecret?: string
  /** Space-separated scopes asked for in the token request. */
  readonly scope?: string
  /**
   * The authorization server the credentials belong to (its issuer URL). When set, they are only
   * ever sent to it, and an upstream that names another one fails instead. Without it, the first
   * authorization server the upstream names gets them, and keeps them for the process's lifetime.
   */
  readonly issuer?: string
}

/** The client credentials grant: a token for the client itself. */
export interface McpOAuthClientCredentials extends McpOAuthCommon {
  readonly grant: 'client_credentials'
  /**
   * Authenticate with a signed JWT (`private_key_jwt`) instead of a secret: a PKCS#8 PEM key for
   * an RS*, PS* or ES* algorithm, or the shared secret for HS*.
   */
  readonly privateKey?: { readonly key: string; readonly algorithm: string }
}

/**
 * A refresh token obtained beforehand (by a person, once); each access token is asked for with it.
 * A refresh token the server rotates is kept in memory only: a restarted process starts again from
 * the one given here.
 */
export interface McpOAuthRefreshToken extends McpOAuthCommon {
  readonly grant: 'refresh_token'
  readonly refreshToken: string
}

/** The OAuth grants {@link createMcpOAuthProvider} can run on its own. */
export type McpOAuthOptions = McpOAuthClientCredentials | McpOAuthRefreshToken

const AT = 'createMcpOAuthProvider(options)'
const ALGORITHM = /^(RS|PS|ES|HS)(256|384|512)$/

/**
 * Told by toolgate's HTTP transport the scopes of a `403 insufficient_scope` challenge, before it
 * asks for a new token (the SDK's flow hands a provider without a browser only its own
 * `clientMetadata.scope`). Keyed in the global symbol registry: the provider and the transport may
 * come from different bundles of this package.
 */
export const SCOPE_CHALLENGE: unique symbol = Symbol.for('toolgate.mcp.oauthScopeChallenge')

/** A provider that takes the scopes of a step-up challenge (see {@link SCOPE_CHALLENGE}). */
export interface ScopeChallengeTaker {
  [SCOPE_CHALLENGE](scope: string): void
}

/**
 * An `OAuthClientProvider` (the SDK's) for an HTTP upstream that gets its tokens without a person:
 * pass it as `authProvider` of a `{ url }` server of `connectMcpServer`. Throws a `ConfigError`
 * for options that cannot work.
 *
 * ```ts
 * const authProvider = createMcpOAuthProvider({
 *   grant: 'client_credentials',
 *   clientId: 'toolgate',
 *   clientSecret: process.env.MCP_CLIENT_SECRET!,
 *   issuer: 'https://auth.example.com',
 * })
 * await connectMcpServer(ctx, { url: 'https://mcp.example.com/mcp', authProvider })
 * ```
 */
export function createMcpOAuthProvider(options: McpOAuthOptions): McpOAuthProvider {
  return new MachineOAuthProvider(checkOptions(options))
}

function checkOptions(value: unknown): McpOAuthOptions {
  const fail = (problem: string): never => {
    throw new ConfigError(AT, problem)
  }
  if (typeof value !== 'object' || value === null) fail('expected an object { grant, clientId, ... }')
  const options = value as Record<string, unknown>
  const text = (key: string, required: boolean) => {
    const v = options[key]
    if (v === undefined && !required) return
    if (typeof v !== 'string' || v === '') fail(`options.${key}: expected a non-empty string`)
  }
  if (options.grant !== 'client_credentials' && options.grant !== 'refresh_token')
    fail(`options.grant: expected "client_credentials" or "refresh_token", got ${JSON.stringify(options.grant)}`)
  text('clientId', true)
  text('clientSecret', false)
  text('scope', false)
  text('issuer', false)
  if (options.issuer !== undefined && !isHttpUrl(options.issuer as string))
    fail('options.issuer: expected the http(s) URL of the authorization server')
  if (options.grant === 'refresh_token') text('refreshToken', true)
  else if (options.refreshToken !== undefined) fail('options.refreshToken: only with grant "refresh_token"')
  if (options.privateKey !== undefined) {
    if (options.grant !== 'client_credentials') fail('options.privateKey: only with grant "client_credentials"')
    const key = options.privateKey as Record<string, unknown> | null
    if (typeof key !== 'object' || key === null || typeof key.key !== 'string' || key.key === '')
      fail('options.privateKey: expected { key, algorithm } with the key as a PEM string')
    if (typeof key?.algorithm !== 'string' || !ALGORITHM.test(key.algorithm))
      fail(`options.privateKey.algorithm: expected e.g. "ES256" or "RS256", got ${JSON.stringify(key?.algorithm)}`)
    if (options.clientSecret !== undefined) fail('options: give clientSecret or privateKey, not both')
  }
  return value as McpOAuthOptions
}

class MachineOAuthProvider implements OAuthClientProvider, ScopeChallengeTaker {
  private current: OAuthTokens | undefined
  private client: OAuthClientInformationMixed
  private refreshToken: string | undefined
  /** The scopes asked for: the configured ones, then those of each step-up challenge. */
  private readonly scopes: Set<string>
  readonly addClientAuthentication?: AddClientAuthentication
  /** The authorization server the credentials are for (the configured one, or the first one used). */
  private issuer: string | undefined

  constructor(private readonly options: McpOAuthOptions) {
    this.scopes = new Set(scopesOf(options.scope))
    this.issuer = options.issuer
    this.client = {
      client_id: options.clientId,
      ...(options.clientSecret !== undefined ? { client_secret: options.clientSecret } : {}),
      ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
    }
    if (options.grant === 'refresh_token') this.refreshToken = options.refreshToken
    if (options.grant === 'client_credentials' && options.privateKey) {
      const { key, algorithm } = options.privateKey
      // Loaded on first use, so that importing toolgate/mcp does not load the SDK's auth code.
      this.addClientAuthentication = async (headers, params, url, metadata) => {
        const { createPrivateKeyJwtAuth } = await import('@modelcontextprotocol/client')
        const sign = createPrivateKeyJwtAuth({
          issuer: options.clientId,
          subject: options.clientId,
          privateKey: key,
          alg: algorithm,
        })
        await sign(headers, params, url, metadata)
      }
    }
  }

  // No redirect URL: the SDK then asks the token endpoint directly, with prepareTokenRequest().
  get redirectUrl(): undefined {
    return undefined
  }

  get clientMetadata(): OAuthClientMetadata {
    const { options } = this
    return {
      client_name: 'toolgate',
      redirect_uris: [],
      grant_types: [options.grant],
      token_endpoint_auth_method:
        options.grant === 'client_credentials' && options.privateKey
          ? 'private_key_jwt'
          : options.clientSecret !== undefined
            ? 'client_secret_basic'
            : 'none',
      ...(this.scopes.size > 0 ? { scope: [...this.scopes].join(' ') } : {}),
    }
  }

  /**
   * A server answered `403 insufficient_scope` naming `scope`: the next token is asked for the
   * scopes asked for so far and these (the client accumulates them; a challenge names only what
   * the refused request needs, and asking for just that would lose what other requests need).
   */
  [SCOPE_CHALLENGE](scope: string): void {
    for (const name of scopesOf(scope)) this.scopes.add(name)
  }

  /**
   * The credentials, for the authorization server the SDK resolved (`context.issuer`): only the
   * configured issuer's, or, without one, the first server's they were used with. Another server
   * gets nothing: the flow fails with an error naming both.
   */
  clientInformation(context?: OAuthClientInformationContext): OAuthClientInformationMixed {
    const issuer = context?.issuer
    if (issuer !== undefined) {
      this.issuer ??= issuer
      if (sameIssuer(this.issuer, issuer) === false)
        throw new Error(
          `the upstream's authorization server ${issuer} is not ${this.issuer}, which the client credentials belong to`,
        )
    }
    return this.client
  }

  // The SDK stamps the client with the authorization server it was first used with.
  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.client = information
  }

  tokens(): OAuthTokens | undefined {
    return this.current
  }

  saveTokens(tokens: OAuthTokens): void {
    this.current = tokens
    // A rotated refresh token replaces the old one; a client credentials client just asks again.
    if (this.options.grant === 'refresh_token' && tokens.refresh_token !== undefined)
      this.refreshToken = tokens.refresh_token
  }

  /**
   * The token request: the scopes asked for are this provider's (the configured ones and those of
   * each step-up challenge), not the SDK's pick (the SDK v2 would otherwise ask for every scope the
   * server's metadata lists when none is configured, or for a challenge's scopes alone).
   */
  prepareTokenRequest(): URLSearchParams {
    const params =
      this.refreshToken === undefined
        ? new URLSearchParams({ grant_type: 'client_credentials' })
        : new URLSearchParams({ grant_type: 'refresh_token', refresh_token: this.refreshToken })
    if (this.scopes.size > 0) params.set('scope', [...this.scopes].join(' '))
    return params
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.current = undefined
  }

  // The authorization code flow needs a person at a browser; these grants never start it.
  redirectToAuthorization(): never {
    throw new Error(
      `the upstream asks for a person to authorize in a browser, which grant "${this.options.grant}" cannot do`,
    )
  }

  saveCodeVerifier(): void {}

  codeVerifier(): never {
    throw new Error(`grant "${this.options.grant}" has no authorization code`)
  }
}

function scopesOf(scope: string | undefined): string[] {
  return scope === undefined ? [] : scope.split(/\s+/).filter((name) => name !== '')
}

/** Issuer identifiers compared as URLs (a trailing slash of an empty path does not count). */
function sameIssuer(a: string, b: string): boolean {
  const normal = (text: string) => (URL.canParse(text) ? new URL(text).href : text).replace(/\/$/, '')
  return normal(a) === normal(b)
}

function isHttpUrl(text: string): boolean {
  return URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)
}
