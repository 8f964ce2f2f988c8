// The `auth` of an HTTP upstream that calls it with each caller's own rights: `tokenExchange`
// (RFC 8693: the caller's OAuth token exchanged for one of the upstream's) or `perUser` (the
// caller's own secret, from the vault). Checked key by key like the rest of the config.
import path from 'node:path'
import { isRecord } from '../util/is-record.js'

/** `auth.tokenExchange`: the token endpoint that exchanges a caller's token, and how the gateway authenticates to it. */
export interface TokenExchangeConfig {
  readonly tokenEndpoint: string
  readonly clientId: string
  /** A file holding the client secret (client_secret_basic). */
  readonly clientSecretFile?: string
  /** A file holding a PKCS#8 PEM private key (private_key_jwt). */
  readonly privateKeyFile?: string
  readonly audience?: string
  readonly resource?: string
  readonly scope?: string
  /** Default `urn:ietf:params:oauth:token-type:access_token`. */
  readonly subjectTokenType?: string
  /** Send the gateway's own client token as `actor_token`, so the upstream sees delegation. */
  readonly actor?: boolean
}

/**
 * `auth.perUser.oauth`: the upstream's own OAuth authorization server, where a person without a
 * stored credential signs in with their browser (authorization code + PKCE, run by the gateway).
 */
export interface ConsentOAuthConfig {
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly clientId: string
  /** A file holding the client secret (client_secret_basic); none makes the gateway a public client. */
  readonly clientSecretFile?: string
  readonly scope?: string
  /** RFC 8707 resource indicator sent with both requests. */
  readonly resource?: string
  /** The callback URL registered at the authorization server; default the gateway's own `/oauth/callback`. */
  readonly redirectUri?: string
}

/** `auth.perUser`: the header that carries each caller's own secret from the vault. */
export interface PerUserConfig {
  readonly header: string
  /** Put before the secret with a space (e.g. "Bearer"); none sends the secret as it is. */
  readonly scheme?: string
  /** Where a person without a secret signs in to get one (consent by URL). */
  readonly oauth?: ConsentOAuthConfig
}

export type CallerAuthConfig = { readonly tokenExchange: TokenExchangeConfig } | { readonly perUser: PerUserConfig }

const EXCHANGE_KEYS = [
  'tokenEndpoint',
  'clientId',
  'clientSecretFile',
  'privateKeyFile',
  'audience',
  'resource',
  'scope',
  'subjectTokenType',
  'actor',
] as const
const OAUTH_KEYS = [
  'authorizationEndpoint',
  'tokenEndpoint',
  'clientId',
  'clientSecretFile',
  'scope',
  'resource',
  'redirectUri',
] as const
/** The path of the gateway that receives the authorization server's redirect. */
export const CONSENT_CALLBACK_PATH = '/oauth/callback'
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** Whether `value` is a caller-credential `auth` (rather than a machine OAuth grant). */
export function isCallerAuth(value: unknown): boolean {
  return isRecord(value) && ('tokenExchange' in value || 'perUser' in value)
}

/** Check a caller-credential `servers.<name>.auth` (at `at`); problems go to `issues`. */
export function checkCallerAuth(
  value: Record<string, unknown>,
  at: string,
  issues: string[],
): CallerAuthConfig | undefined {
  const where = `${at}.auth`
  const keys = Object.keys(value)
  if (keys.length !== 1) {
    issues.push(`${where}: give one of tokenExchange or perUser, alone`)
    return undefined
  }
  if ('perUser' in value) return checkPerUser(value.perUser, `${where}.perUser`, issues)
  return checkExchange(value.tokenExchange, `${where}.tokenExchange`, issues)
}

function checkPerUser(value: unknown, where: string, issues: string[]): CallerAuthConfig | undefined {
  if (!isRecord(value)) {
    issues.push(`${where}: expected { header, scheme?, oauth? }`)
    return undefined
  }
  const before = issues.length
  for (const key of Object.keys(value))
    if (key !== 'header' && key !== 'scheme' && key !== 'oauth')
      issues.push(`${where}.${key}: unknown key (expected "header", "scheme", "oauth")`)
  if (typeof value.header !== 'string' || !TOKEN.test(value.header))
    issues.push(`${where}.header: expected a header name, e.g. "Authorization"`)
  if (value.scheme !== undefined && (typeof value.scheme !== 'string' || !TOKEN.test(value.scheme)))
    issues.push(`${where}.scheme: expected a scheme name, e.g. "Bearer"`)
  const oauth = value.oauth === undefined ? undefined : checkConsentOAuth(value.oauth, `${where}.oauth`, issues)
  if (issues.length > before) return undefined
  return {
    perUser: {
      header: value.header as string,
      ...(value.scheme !== undefined ? { scheme: value.scheme as string } : {}),
      ...(oauth !== undefined ? { oauth } : {}),
    },
  }
}

function checkConsentOAuth(value: unknown, where: string, issues: string[]): ConsentOAuthConfig | undefined {
  if (!isRecord(value)) {
    issues.push(`${where}: expected { authorizationEndpoint, tokenEndpoint, clientId, clientSecretFile?, scope? }`)
    return undefined
  }
  const before = issues.length
  const text = fieldReader(value, where, OAUTH_KEYS, issues)
  const httpUrl = (key: (typeof OAUTH_KEYS)[number], what: string, required = false): string | undefined => {
    const v = text(key, required)
    if (v === undefined) return undefined
    if (URL.canParse(v) && /^https?:$/.test(new URL(v).protocol) && new URL(v).hash === '') return v
    issues.push(`${where}.${key}: expected the http(s) URL of ${what}, without a fragment`)
    return undefined
  }
  const authorizationEndpoint = httpUrl('authorizationEndpoint', 'the authorization endpoint', true)
  const tokenEndpoint = httpUrl('tokenEndpoint', 'the token endpoint', true)
  const clientId = text('clientId', true)
  const clientSecretFile = text('clientSecretFile')
  const scope = text('scope')
  const resource = text('resource')
  if (resource !== undefined && !URL.canParse(resource)) issues.push(`${where}.resource: expected an absolute URI`)
  const redirectUri = httpUrl('redirectUri', "the gateway's callback")
  if (redirectUri !== undefined && new URL(redirectUri).pathname !== CONSENT_CALLBACK_PATH)
    issues.push(
      `${where}.redirectUri: the gateway receives the redirect at ${CONSENT_CALLBACK_PATH}; end the URL with it`,
    )
  if (
    issues.length > before ||
    authorizationEndpoint === undefined ||
    tokenEndpoint === undefined ||
    clientId === undefined
  )
    return undefined
  return {
    authorizationEndpoint,
    tokenEndpoint,
    clientId,
    ...(clientSecretFile !== undefined ? { clientSecretFile } : {}),
    ...(scope !== undefined ? { scope } : {}),
    ...(resource !== undefined ? { resource } : {}),
    ...(redirectUri !== undefined ? { redirectUri } : {}),
  }
}

function checkExchange(value: unknown, where: string, issues: string[]): CallerAuthConfig | undefined {
  if (!isRecord(value)) {
    issues.push(`${where}: expected { tokenEndpoint, clientId, clientSecretFile | privateKeyFile, ... }`)
    return undefined
  }
  const before = issues.length
  const text = fieldReader(value, where, EXCHANGE_KEYS, issues)
  const tokenEndpoint = text('tokenEndpoint', true)
  if (
    tokenEndpoint !== undefined &&
    !(URL.canParse(tokenEndpoint) && /^https?:$/.test(new URL(tokenEndpoint).protocol))
  )
    issues.push(`${where}.tokenEndpoint: expected the http(s) URL of the token endpoint`)
  const clientId = text('clientId', true)
  const clientSecretFile = text('clientSecretFile')
  const privateKeyFile = text('privateKeyFile')
  if (value.clientSecretFile === undefined && value.privateKeyFile === undefined)
    issues.push(`${where}: give clientSecretFile or privateKeyFile`)
  else if (value.clientSecretFile !== undefined && value.privateKeyFile !== undefined)
    issues.push(`${where}: give clientSecretFile or privateKeyFile, not both`)
  const audience = text('audience')
  const resource = text('resource')
  if (resource !== undefined && !URL.canParse(resource)) issues.push(`${where}.resource: expected an absolute URI`)
  const scope = text('scope')
  const subjectTokenType = text('subjectTokenType')
  if (value.actor !== undefined && typeof value.actor !== 'boolean')
    issues.push(`${where}.actor: expected true or false`)
  if (issues.length > before || tokenEndpoint === undefined || clientId === undefined) return undefined
  return {
    tokenExchange: {
      tokenEndpoint,
      clientId,
      ...(clientSecretFile !== undefined ? { clientSecretFile } : {}),
      ...(privateKeyFile !== undefined ? { privateKeyFile } : {}),
      ...(audience !== undefined ? { audience } : {}),
      ...(resource !== undefined ? { resource } : {}),
      ...(scope !== undefined ? { scope } : {}),
      ...(subjectTokenType !== undefined ? { subjectTokenType } : {}),
      ...(value.actor === true ? { actor: true } : {}),
    },
  }
}

/** The caller auth with its files made absolute against the config file's folder. */
export function resolveCallerAuthPaths(auth: CallerAuthConfig, dir: string): CallerAuthConfig {
  if ('perUser' in auth) {
    const secretFile = auth.perUser.oauth?.clientSecretFile
    if (auth.perUser.oauth === undefined || secretFile === undefined) return auth
    return {
      perUser: { ...auth.perUser, oauth: { ...auth.perUser.oauth, clientSecretFile: path.resolve(dir, secretFile) } },
    }
  }
  const { clientSecretFile, privateKeyFile } = auth.tokenExchange
  return {
    tokenExchange: {
      ...auth.tokenExchange,
      ...(clientSecretFile !== undefined ? { clientSecretFile: path.resolve(dir, clientSecretFile) } : {}),
      ...(privateKeyFile !== undefined ? { privateKeyFile: path.resolve(dir, privateKeyFile) } : {}),
    },
  }
}

/**
 * Reports the keys of a config object that are not `keys`, and reads its string fields: a present
 * field must be a non-empty string, a required one must be present (each problem an issue at `where`).
 */
function fieldReader<K extends string>(
  value: Record<string, unknown>,
  where: string,
  keys: readonly K[],
  issues: string[],
): (key: K, required?: boolean) => string | undefined {
  for (const key of Object.keys(value))
    if (!(keys as readonly string[]).includes(key))
      issues.push(`${where}.${key}: unknown key (expected ${keys.map((k) => `"${k}"`).join(', ')})`)
  return (key, required = false) => {
    const v = value[key]
    if (v === undefined) {
      if (required) issues.push(`${where}.${key}: required`)
      return undefined
    }
    if (typeof v === 'string' && v !== '') return v
    issues.push(`${where}.${key}: expected a non-empty string`)
    return undefined
  }
}
