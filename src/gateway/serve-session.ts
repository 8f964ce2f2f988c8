// The server object each client of `toolgate serve` gets: the gateway's view (the caller's scope,
// its catalog, logging and client directory) through createMcpServer, acknowledged by the store
// when there is one.

import type { Agent } from '../contract/execution.js'
import {
  type AuthInfo,
  createMcpServer,
  identityOf,
  type JSONRPCMessage,
  type KeptProgramRounds,
  loadModernHttp,
  type McpCallKeeper,
  type McpServerHandle,
  type ModernHttpLeg,
  type ModernHttpOptions,
  type SpentNonces,
} from '../mcp/gateway.js'
import type { AgentHandle } from '../runtime/index.js'
import type { Gateway } from './gateway.js'
import { perSession } from './gateway-defer.js'
import type { Authenticator } from './http-auth.js'
import type { Log } from './log.js'

/** What the gateway calls itself to its clients. */
export interface ServerInfo {
  readonly name: string
  readonly version: string
}

/**
 * The scope a request is served as: an authenticated caller's identity's, anyone else the session's.
 * With `auth` (an authenticator), a request without a readable identity is an error, never the
 * unrestricted scope.
 */
export function scopeFor(
  gateway: Pick<Gateway, 'identities'>,
  authenticator: () => Authenticator | undefined,
  fallback: Agent,
): (authInfo: AuthInfo | undefined) => Agent | undefined {
  return (authInfo) => {
    const identity = identityOf(authInfo)
    if (identity !== undefined) return gateway.identities.agentFor(identity)
    if (authenticator() !== undefined) throw new Error('the request carries no authenticated identity')
    return fallback
  }
}

/**
 * With a store, how answers wait for the journal records before them (SharedState's
 * `acknowledging` and `acknowledged`): a server's responses, and an answer sent without a server (the
 * 2026-07-28 fast path of `serve --http`).
 */
export interface Acknowledging {
  readonly server: (server: McpServerHandle) => McpServerHandle
  readonly answer: (message: JSONRPCMessage) => Promise<JSONRPCMessage>
}

/** A new session server per call: its own child agent when the gateway defers tools (see perSession). */
export function sessionServers(
  gateway: Gateway,
  serverInfo: ServerInfo,
  authenticator: () => Authenticator | undefined,
  acknowledging?: (server: McpServerHandle) => McpServerHandle,
  keeper?: McpCallKeeper,
): () => McpServerHandle {
  return perSession(
    () => gateway.deferring,
    gateway.agent,
    (agent: AgentHandle) => {
      const server = createMcpServer(gateway.agent.ctx, {
        agent,
        agentFor: scopeFor(gateway, authenticator, agent),
        ...serverInfo,
        logging: gateway.logging,
        catalog: gateway.catalog(),
        clients: gateway.clients,
        ...(keeper === undefined ? {} : { keeper }),
      })
      return acknowledging ? acknowledging(server) : server
    },
  )
}

/**
 * The MCP 2026-07-28 face of `serve --http`, made (and its SDK loaded) at the first request of
 * that era: the gateway's served scope, each caller's identity's as for the sessions. With a store,
 * `approvalStates` seals approvals under the shared state key and spends them in the store.
 */
export function modernLeg(
  gateway: Gateway,
  serverInfo: ServerInfo,
  authenticator: () => Authenticator | undefined,
  log: Log,
  acknowledging?: Acknowledging,
  approvalStates?: {
    readonly key?: Uint8Array
    readonly spent: SpentNonces
    readonly programs?: KeptProgramRounds
  },
): (maxMessageBytes: number) => Promise<ModernHttpLeg> {
  let leg: Promise<ModernHttpLeg> | undefined
  return (maxMessageBytes) => {
    leg ??= loadModernHttp().then(({ createModernHttpLeg }) =>
      createModernHttpLeg(gateway.agent.ctx, {
        ...modernOptions(gateway, serverInfo, authenticator, log, acknowledging),
        maxMessageBytes,
        ...(approvalStates?.key === undefined ? {} : { stateKey: approvalStates.key }),
        ...(approvalStates === undefined ? {} : { spentStates: approvalStates.spent }),
        ...(approvalStates?.programs === undefined ? {} : { programs: approvalStates.programs }),
      }),
    )
    return leg
  }
}

/** What both 2026-07-28 faces (HTTP and stdio) serve: the gateway's served scope, each caller's identity's. */
export function modernOptions(
  gateway: Gateway,
  serverInfo: ServerInfo,
  authenticator: () => Authenticator | undefined,
  log: Log,
  acknowledging?: Acknowledging,
): Omit<ModernHttpOptions, 'maxMessageBytes'> {
  const catalog = gateway.catalog()
  return {
    agentFor: scopeFor(gateway, authenticator, gateway.agent),
    ...serverInfo,
    logging: gateway.logging,
    ...(catalog === undefined ? {} : { catalog }),
    // The store's acknowledgement waits on connect() and the transport's send(), which both eras have;
    // the HTTP fast path, which has neither, waits on `acknowledged` before it writes its answer.
    ...(acknowledging
      ? {
          wrap: <S extends object>(server: S) =>
            acknowledging.server(server as unknown as McpServerHandle) as unknown as S,
          acknowledged: acknowledging.answer,
        }
      : {}),
    onerror: (error) => log.debug(`MCP 2026-07-28 request: ${error.message}`),
  }
}
