// An HTTP upstream called with each caller's own credential: its tool calls run in one session per
// caller (never a session, a cached token or a header of another), with the token exchanged for
// the caller's (`tokenExchange`) or the caller's secret from the vault (`perUser`). Which kind of
// credential each call used, and the upstream subject, are noted for the journal; never the secret.

import { readFileSync } from 'node:fs'
import type { ToolRunContext } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { Identity, McpCallChannel, McpServerSpec } from '../mcp/gateway.js'
import { callerTokenOf } from './caller-tokens.js'
import type { ServerConfig } from './config.js'
import { type CallerAuthConfig, isCallerAuth } from './config-caller-auth.js'
import { withUpstreamAuth } from './config-upstream-auth.js'
import { signInThrough } from './consent-elicit.js'
import { consentFlows, refreshTokens } from './consent-flows.js'
import { credentialOf, sealTokens, tokensOf } from './consent-secret.js'
import { TokenExchanger } from './token-exchange.js'
import { UpstreamCredentialError } from './upstream-credential-error.js'
import type { VaultStorage } from './vault-storage.js'

/** The credential a call of an upstream tool carried, as the journal records it. */
export interface CallCredential {
  readonly kind: 'exchange' | 'vault' | 'shared'
  /** Who the upstream sees, when known. */
  readonly upstreamSubject?: string
}

export interface CallerCredentialDeps {
  /** The caller of a call (its agent scope's identity). */
  identityOf(exec: ToolRunContext): Identity | undefined
  /** The vault (its file, or the store); throws a ConfigError when no key was given. */
  vault(): VaultStorage
  /** The MCP client that made the call (for a sign-in by URL), while the call runs. */
  channelOf?(exec: ToolRunContext): McpCallChannel | undefined
}

/** Calls whose credential is known, by execution token, until the journal reads them (bounded). */
const noted = new Map<symbol, CallCredential>()
const MAX_NOTED = 10_000

function note(exec: ToolRunContext, credential: CallCredential): void {
  noted.set(exec.token, credential)
  if (noted.size > MAX_NOTED) {
    const [oldest] = noted.keys()
    if (oldest !== undefined) noted.delete(oldest)
  }
}

/** The credential a call used, when it was one of a caller's own; read once. */
export function takeCallCredential(exec: { readonly token: symbol }): CallCredential | undefined {
  const found = noted.get(exec.token)
  noted.delete(exec.token)
  return found
}

/** Whether a server entry calls its upstream with each caller's own credential. */
export function usesCallerAuth(spec: ServerConfig): boolean {
  return 'url' in spec && spec.auth !== undefined && isCallerAuth(spec.auth)
}

/** Whether a server entry sends one credential for everyone (`headers` or a machine OAuth grant). */
export function usesSharedCredential(spec: ServerConfig): boolean {
  return 'url' in spec && !usesCallerAuth(spec) && (spec.auth !== undefined || spec.headers !== undefined)
}

/** The server to connect to, with per-caller sessions when its `auth` is per caller. */
export function withCallerAuth(name: string, spec: ServerConfig, deps: CallerCredentialDeps): McpServerSpec {
  if (!('url' in spec) || spec.auth === undefined || !isCallerAuth(spec.auth)) return withUpstreamAuth(spec)
  const { auth, ...rest } = spec
  const config = auth as CallerAuthConfig
  const callerOf = (exec: ToolRunContext): Identity => {
    const identity = deps.identityOf(exec)
    if (identity === undefined)
      throw new UpstreamCredentialError(
        `servers.${name} is called with each caller's own credential, and this call has no authenticated caller ` +
          '(serve it with --http and "auth")',
      )
    return identity
  }
  if ('perUser' in config) {
    const { header, scheme, oauth } = config.perUser
    // Read now: a missing file stops the gateway before it serves.
    const clientSecret = oauth?.clientSecretFile === undefined ? undefined : readSecret(name, oauth.clientSecretFile)
    const storedOf = async (subject: string): Promise<string | undefined> => {
      const stored = await deps.vault().get(name, subject)
      return stored === undefined ? undefined : credentialOf(stored)
    }
    // One refresh per subject at a time: concurrent calls wait for the same one.
    const refreshing = new Map<string, Promise<boolean>>()
    const refreshed = async (subject: string): Promise<boolean> => {
      const refreshToken = tokensOf((await deps.vault().get(name, subject)) ?? '')?.refreshToken
      if (oauth === undefined || refreshToken === undefined) return false
      let running = refreshing.get(subject)
      if (running === undefined) {
        running = refreshTokens(
          { server: name, config: oauth, ...(clientSecret ? { clientSecret } : {}) },
          refreshToken,
        )
          .then(async (tokens) => {
            await deps.vault().set(name, subject, sealTokens(tokens))
            return true
          })
          // A refused refresh token means a new sign-in.
          .catch(() => false)
          .finally(() => refreshing.delete(subject))
        refreshing.set(subject, running)
      }
      return running
    }
    const secretOf = async (subject: string): Promise<string> => {
      const secret = await storedOf(subject)
      if (secret === undefined)
        throw new UpstreamCredentialError(
          `servers.${name} needs your own credential, and none is stored for ${JSON.stringify(subject)}: ` +
            `an operator sets it with \`toolgate vault set --server ${name} --subject ${JSON.stringify(subject)}\``,
        )
      return secret
    }
    return {
      ...rest,
      partition: {
        async keyOf(exec) {
          const { subject } = callerOf(exec)
          // No credential yet (or a signed-in token that expired): the person signs in by URL.
          if (oauth !== undefined && (await storedOf(subject)) === undefined && !(await refreshed(subject))) {
            const flow = consentFlows.begin({
              server: name,
              subject,
              config: oauth,
              ...(clientSecret !== undefined ? { clientSecret } : {}),
              store: (tokens) => deps.vault().set(name, subject, sealTokens(tokens)),
            })
            await signInThrough(name, flow, deps.channelOf?.(exec), exec.signal)
          }
          // Checked before a session is opened, so the call fails with this message.
          await secretOf(subject)
          note(exec, { kind: 'vault', upstreamSubject: subject })
          return subject
        },
        headers: async (subject) => {
          const secret = await secretOf(subject)
          return { [header]: scheme === undefined ? secret : `${scheme} ${secret}` }
        },
      },
    }
  }
  let exchanger: TokenExchanger
  try {
    exchanger = new TokenExchanger(name, config.tokenExchange)
  } catch (error) {
    if (error instanceof ConfigError) throw error
    throw new ConfigError(`servers.${name}.auth.tokenExchange`, String(error))
  }
  const subjectTokenOf = (subject: string): string => {
    const token = callerTokenOf(subject)
    if (token === undefined)
      throw new UpstreamCredentialError(
        `servers.${name} exchanges the caller's OAuth token for one of its own, and ${JSON.stringify(subject)} ` +
          'did not sign in with an OAuth token (a static token cannot be exchanged): sign in through the OAuth issuer',
      )
    return token
  }
  const bearer = (refused: Readonly<Record<string, string>> | undefined) => {
    const value = refused?.authorization ?? refused?.Authorization
    return value?.startsWith('Bearer ') ? value.slice(7) : undefined
  }
  return {
    ...rest,
    // The shared session only lists the tools, with the gateway's own client token.
    headerProvider: async () => ({ authorization: `Bearer ${await exchanger.clientToken()}` }),
    partition: {
      keyOf(exec) {
        const { subject } = callerOf(exec)
        subjectTokenOf(subject)
        note(exec, { kind: 'exchange', upstreamSubject: subject })
        return subject
      },
      headers: async (subject, refused) => ({
        authorization: `Bearer ${await exchanger.tokenFor(subject, subjectTokenOf(subject), bearer(refused))}`,
      }),
    },
  }
}

/** The client secret of a sign-in by URL; a ConfigError names the config key. */
function readSecret(server: string, file: string): string {
  const at = `servers.${server}.auth.perUser.oauth.clientSecretFile`
  let secret: string
  try {
    secret = readFileSync(file, 'utf8').trim()
  } catch (error) {
    throw new ConfigError(at, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  if (secret === '') throw new ConfigError(at, `${file} is empty`)
  return secret
}
