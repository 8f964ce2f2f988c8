// The `auth` key of an HTTP upstream in the gateway config: OAuth with a grant that needs no person
// (client credentials, or a refresh token obtained beforehand). Secrets are given either in the file
// or, better, by naming an environment variable that holds them (`clientSecretEnv`, ...); a named
// variable that is not set is reported with its path before anything starts.
import { createMcpOAuthProvider, type McpOAuthOptions, type McpServerSpec } from '../mcp/gateway.js'
import { isRecord } from '../util/is-record.js'
import type { ServerConfig } from './config.js'

const KEYS = [
  'grant',
  'clientId',
  'clientSecret',
  'clientSecretEnv',
  'refreshToken',
  'refreshTokenEnv',
  'privateKeyEnv',
  'algorithm',
  'scope',
  'issuer',
] as const
const ALGORITHM = /^(RS|PS|ES|HS)(256|384|512)$/

/** Check `servers.<name>.auth` (at `at`) and resolve its secrets; problems go to `issues`. */
export function checkUpstreamAuth(
  value: unknown,
  at: string,
  issues: string[],
  env: NodeJS.ProcessEnv = process.env,
): McpOAuthOptions | undefined {
  const where = `${at}.auth`
  if (!isRecord(value)) {
    issues.push(
      `${where}: expected { grant: "client_credentials" | "refresh_token", clientId, clientSecret? | clientSecretEnv?, ... }`,
    )
    return undefined
  }
  const before = issues.length
  for (const key of Object.keys(value))
    if (!(KEYS as readonly string[]).includes(key))
      issues.push(`${where}.${key}: unknown key (expected ${KEYS.map((k) => `"${k}"`).join(', ')})`)
  const text = (key: (typeof KEYS)[number]): string | undefined => {
    const v = value[key]
    if (v === undefined) return undefined
    if (typeof v === 'string' && v !== '') return v
    issues.push(`${where}.${key}: expected a non-empty string`)
    return undefined
  }
  /** A secret given inline (`key`) or by the name of an environment variable (`key` + "Env"). */
  const secret = (key: 'clientSecret' | 'refreshToken' | 'privateKey'): string | undefined => {
    const inline = key === 'privateKey' ? undefined : text(key)
    const name = text(`${key}Env`)
    if (inline !== undefined && name !== undefined) {
      issues.push(`${where}: give ${key} or ${key}Env, not both`)
      return undefined
    }
    if (name === undefined) return inline
    const resolved = env[name]
    if (resolved === undefined || resolved === '')
      issues.push(`${where}.${key}Env: the environment variable "${name}" is not set`)
    return resolved || undefined
  }

  const grant = value.grant
  if (grant !== 'client_credentials' && grant !== 'refresh_token')
    issues.push(`${where}.grant: expected "client_credentials" or "refresh_token", got ${JSON.stringify(grant)}`)
  const clientId = text('clientId')
  if (value.clientId === undefined) issues.push(`${where}.clientId: required`)
  const clientSecret = secret('clientSecret')
  const refreshToken = secret('refreshToken')
  const privateKey = secret('privateKey')
  const scope = text('scope')
  const issuer = text('issuer')
  if (issuer !== undefined && !(URL.canParse(issuer) && /^https?:$/.test(new URL(issuer).protocol)))
    issues.push(`${where}.issuer: expected the http(s) URL of the authorization server`)
  const algorithm = text('algorithm')
  if (algorithm !== undefined && !ALGORITHM.test(algorithm))
    issues.push(`${where}.algorithm: expected e.g. "ES256" or "RS256", got ${JSON.stringify(algorithm)}`)

  if (grant === 'refresh_token') {
    if (value.refreshToken === undefined && value.refreshTokenEnv === undefined)
      issues.push(`${where}: grant "refresh_token" needs refreshToken or refreshTokenEnv`)
    if (value.privateKeyEnv !== undefined) issues.push(`${where}.privateKeyEnv: only with grant "client_credentials"`)
  } else if (grant === 'client_credentials') {
    if (value.refreshToken !== undefined || value.refreshTokenEnv !== undefined)
      issues.push(`${where}: a refresh token goes with grant "refresh_token"`)
    if (value.privateKeyEnv !== undefined && (value.clientSecret !== undefined || value.clientSecretEnv !== undefined))
      issues.push(`${where}: give a client secret or privateKeyEnv, not both`)
    if (value.privateKeyEnv === undefined && value.clientSecret === undefined && value.clientSecretEnv === undefined)
      issues.push(`${where}: grant "client_credentials" needs clientSecret, clientSecretEnv or privateKeyEnv`)
  }
  if (value.privateKeyEnv !== undefined && algorithm === undefined && value.algorithm === undefined)
    issues.push(`${where}.algorithm: required with privateKeyEnv (e.g. "ES256")`)
  if (value.algorithm !== undefined && value.privateKeyEnv === undefined)
    issues.push(`${where}.algorithm: only with privateKeyEnv`)
  if (issues.length > before || clientId === undefined) return undefined

  const common = {
    clientId,
    ...(clientSecret !== undefined ? { clientSecret } : {}),
    ...(scope !== undefined ? { scope } : {}),
    ...(issuer !== undefined ? { issuer } : {}),
  }
  if (grant === 'refresh_token') return { grant, ...common, refreshToken: refreshToken as string }
  return {
    grant: 'client_credentials',
    ...common,
    ...(privateKey !== undefined ? { privateKey: { key: privateKey, algorithm: algorithm as string } } : {}),
  }
}

/** The server to connect to: an upstream with `auth` gets an OAuth provider, kept across reconnects. */
export function withUpstreamAuth(spec: ServerConfig): McpServerSpec {
  if (!('url' in spec) || spec.auth === undefined) return spec
  const { auth, ...rest } = spec
  return { ...rest, authProvider: createMcpOAuthProvider(auth as McpOAuthOptions) }
}
