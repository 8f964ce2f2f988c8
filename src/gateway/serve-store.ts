// `serve --store URL`: the gateway's calls are journaled in the shared store, a response leaves
// only once the records before it are acknowledged, and sessions are registered so that another
// instance can tell a client where its session lives.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import type { Agent } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { Journal } from '../journal/journal.js'
import type { Store } from '../journal/store.js'
import { standingApprovalsIn } from '../journal/store-standing.js'
import {
  type JSONRPCMessage,
  JsonRpcCode,
  type KeptProgramRounds,
  type McpServerHandle,
  type McpTransport,
  type RequestId,
  type SpentNonces,
} from '../mcp/gateway.js'
import { storeQuotaCounter } from '../policy/index.js'
import { stateKeyBytes } from '../providers/state-seal.js'
import { openConfiguredStore, type StoreConfig } from './config-store.js'
import type { Gateway } from './gateway.js'
import type { SharedBuckets } from './http-limits.js'
import type { Log } from './log.js'
import { journalDecision } from './policy-document.js'
import { createProgramKeeper, type ProgramKeeper } from './program-keeper.js'
import { createProgramRounds } from './program-rounds.js'
import { spentInStore } from './spent-approvals.js'

/**
 * The hooks `serve` gives its HTTP sessions. `owner` is the subject that opened the session
 * (undefined without `auth`): a session is registered under its owner, so another identity's id is
 * unknown to the store exactly as it is to the instance serving it.
 */
export interface SessionRegistry {
  opened(id: string, owner: string | undefined): void
  closed(id: string, owner: string | undefined): void
  /** Why a session id this instance does not serve to `owner` is not served here (another instance has it, or nobody does). */
  unknown(id: string, owner: string | undefined): Promise<string>
}

export interface SharedState {
  readonly store: Store
  /** Make a server's responses wait for the journal records before them. */
  acknowledging(server: McpServerHandle): McpServerHandle
  /**
   * What to send for `message` once the journal records before it are acknowledged: the message, or
   * for a call's result whose records failed, RESULT_NOT_RECORDED. The rule `acknowledging` applies
   * to a server's responses, for a path that answers without one (the 2026-07-28 HTTP fast path).
   */
  acknowledged(message: JSONRPCMessage): Promise<JSONRPCMessage>
  readonly sessions: SessionRegistry
  /** Rate-limit buckets in the store, so an identity's rate holds across instances. */
  readonly buckets: SharedBuckets
  /** With a state key ($TOOLGATE_STATE_KEY_FILE): Code Mode programs that wait for the viewer, kept in the store. */
  readonly keeper?: ProgramKeeper
  /**
   * How approvals asked of MCP 2026-07-28 clients are sealed and spent: under the state key when
   * there is one (so every instance opens every instance's states), their nonces spent in the store
   * (so a state is accepted once across all instances).
   */
  readonly approvalStates: {
    readonly key?: Uint8Array
    readonly spent: SpentNonces
    /** With the keeper: a 2026-07-28 client's run_code program paused on approvals, kept between its rounds. */
    readonly programs?: KeptProgramRounds
  }
  close(): Promise<void>
}

const INSTANCE = `${hostname()}:${process.pid}`

/** The store's key of a session: its id as seen by its owner (the bare id is never stored). */
function sessionKey(id: string, owner: string | undefined): string {
  return createHash('sha256')
    .update(JSON.stringify([owner ?? null, id]))
    .digest('hex')
}

/** The JSON-RPC error code of a tool result withheld because its journal record could not be committed. */
export const RESULT_NOT_RECORDED = JsonRpcCode.ResultNotRecorded

/** A `tools/call` result (the only results that carry `content`, or a task a call created). */
function isCallResult(result: unknown): boolean {
  return typeof result === 'object' && result !== null && ('content' in result || 'structuredContent' in result)
}

/** A response to a request (a result or an error), which leaves only once the records before it are acknowledged. */
function isResponse(message: JSONRPCMessage): boolean {
  return 'id' in message && ('result' in message || 'error' in message)
}

function resultNotRecorded(id: RequestId, error: unknown): JSONRPCMessage {
  const why = error instanceof Error ? error.message : String(error)
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: RESULT_NOT_RECORDED,
      message: `the call's result is withheld: its journal record could not be committed to the store (${why}); the call may have run`,
      data: { reason: 'RESULT_NOT_RECORDED' },
    },
  }
}

/** The state key that seals kept programs: the bytes of $TOOLGATE_STATE_KEY_FILE, as `toolgate view` reads them. */
async function stateKeyFromEnv(): Promise<Uint8Array | undefined> {
  const path = process.env.TOOLGATE_STATE_KEY_FILE
  if (path === undefined || path === '') return undefined
  const bytes = await readFile(path).catch((error: unknown) => {
    throw new ConfigError(
      '$TOOLGATE_STATE_KEY_FILE',
      `${path}: ${error instanceof Error ? error.message : String(error)}`,
    )
  })
  return stateKeyBytes(new Uint8Array(bytes), `state key file ${path}`)
}

export async function attachStore(gateway: Gateway, config: StoreConfig, log: Log): Promise<SharedState> {
  return shareStore(
    gateway,
    await openConfiguredStore(config),
    log,
    config.programLeaseMs === undefined ? {} : { programLeaseMs: config.programLeaseMs },
  )
}

/** The gateway's shared state in an opened `store` (closed with it). */
export async function shareStore(
  gateway: Pick<Gateway, 'agent'> & {
    readonly identities?: Pick<Gateway['identities'], 'identityOf'> & Partial<Pick<Gateway['identities'], 'agentFor'>>
    readonly policy?: Gateway['policy']
    readonly credentialOf?: Gateway['credentialOf']
  },
  store: Store,
  log: Log,
  options: { readonly programLeaseMs?: number } = {},
): Promise<SharedState> {
  // Constructed on the serving agent's context, as `ctx.plugin(Journal, …)` would: it records that
  // agent's calls, and its listeners go when the gateway closes. Each record names its caller as the
  // file journal's do: the audit trail is the same wherever it is kept.
  const { identities, policy, credentialOf } = gateway
  const journal = new Journal(gateway.agent.ctx, {
    store,
    ...(credentialOf === undefined ? {} : { credentialOf }),
    ...(identities === undefined ? {} : { identify: (of: Agent | undefined) => identities.identityOf(of) }),
    ...(policy === undefined ? {} : { policyOf: journalDecision(policy) }),
  })
  // Quotas count in the store from now on: every instance on it shares each count.
  policy?.useQuotas(storeQuotaCounter(store))
  // Standing approvals (an "always" answer) are kept in the store: every instance applies them.
  const uninstallStanding = gateway.agent.ctx.tools.host.installStandingStore(standingApprovalsIn(store))
  log.debug(`journaling to ${(await store.status()).where}`)
  const key = await stateKeyFromEnv()
  if (key === undefined)
    log.debug(
      'no $TOOLGATE_STATE_KEY_FILE: an approval asked of an MCP 2026-07-28 client is sealed with a per-process key, so its retry must come back to this instance',
    )
  const agentFor = identities?.agentFor?.bind(identities)
  const keeper =
    key === undefined
      ? undefined
      : createProgramKeeper({
          store,
          key,
          execute: (input, options) => gateway.agent.ctx.tools.execute(input, options),
          agent: gateway.agent,
          log,
          flush: () => journal.flush(),
          // An authenticated caller's program resumes under that identity's own scope.
          ...(agentFor === undefined ? {} : { scopeOf: agentFor }),
          ...(options.programLeaseMs === undefined ? {} : { leaseMs: options.programLeaseMs }),
        })
  const acknowledged = async (message: JSONRPCMessage): Promise<JSONRPCMessage> => {
    if (!isResponse(message)) return message
    // The store waits (bounded by its appendWaitMs) for a database that is out of reach.
    const failure = await journal.flush().then(
      () => undefined,
      (error: unknown) => error,
    )
    if (failure === undefined) return message
    log.info(`a response was withheld: its journal records were not committed: ${String(failure)}`)
    // A tool's result is never sent without its record: the client gets an error it can tell apart.
    return 'result' in message && isCallResult(message.result) ? resultNotRecorded(message.id, failure) : message
  }
  return {
    store,
    ...(keeper === undefined ? {} : { keeper }),
    approvalStates: {
      ...(key === undefined ? {} : { key }),
      spent: spentInStore(store),
      ...(keeper === undefined || key === undefined
        ? {}
        : { programs: createProgramRounds({ keeper, store, key, log }) }),
    },
    acknowledging(server) {
      const connect = server.connect.bind(server)
      server.connect = async (transport: McpTransport) => {
        const send = transport.send.bind(transport)
        // Only a response waits: a notification goes out as it is sent.
        transport.send = async (message, options) =>
          isResponse(message) ? send(await acknowledged(message), options) : send(message, options)
        return connect(transport)
      }
      return server
    },
    acknowledged,
    buckets: (key, limit, cost) => store.take(key, limit, cost),
    sessions: {
      opened: (id, owner) => {
        store
          .putSession({ id: sessionKey(id, owner), instance: INSTANCE, createdAt: Date.now() })
          .catch((error: unknown) => {
            log.info(`could not register session ${id} in the store: ${String(error)}`)
          })
      },
      closed: (id, owner) => {
        store.deleteSession(sessionKey(id, owner)).catch(() => {})
      },
      async unknown(id, owner) {
        const session = await store.getSession(sessionKey(id, owner)).catch(() => undefined)
        if (session === undefined) return 'Session not found'
        return `Session not found on this instance: it is served by ${session.instance}; route each session to one instance (sticky on the Mcp-Session-Id header), or start a new session`
      },
    },
    async close() {
      // Resumes a stop interrupted give their claims back before the store closes.
      await keeper?.close()
      uninstallStanding()
      await journal.flush().catch(() => {})
      await store.close()
    },
  }
}
