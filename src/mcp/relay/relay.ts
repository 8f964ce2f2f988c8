// A gateway's relay of what upstream servers ask their client (sampling, elicitation, roots) to the
// MCP client whose call they are serving: the capability handlers given to connectMcpServer, routed
// through the McpClientDirectory that createMcpServer fills.
import { SdkErrorCode } from '@modelcontextprotocol/server'
import { ConfigError } from '../../errors/config-error.js'
import type { McpCapabilityHandlers, McpRequestContext } from '../protocol/capability-handlers.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { ClientCapabilities, CreateMessageRequestParams, ElicitResult } from '../protocol/wire-types.js'
import type {
  McpCallChannel,
  McpClientDirectory,
  McpClientRequestOptions,
  McpClientSession,
} from '../server/client-directory.js'

/** How long the relay waits for the client's answer, per kind of request. */
export interface McpRelayTimeouts {
  /** Default 10 minutes: a person answers. */
  readonly elicitationMs?: number
  /** Default 10 minutes: the client may ask its user before sampling. */
  readonly samplingMs?: number
  /** Default 60 seconds. */
  readonly rootsMs?: number
}

/** Options of {@link createMcpRelay}. */
export interface McpRelayOptions {
  readonly timeouts?: McpRelayTimeouts
}

/** The handlers to give every upstream's `connectMcpServer`, and the hooks that go with them. */
export interface McpRelay {
  /** Spread into `connectMcpServer` options: every capability is declared to the upstream. */
  readonly handlers: Required<McpCapabilityHandlers>
  /** Give to `connectMcpServer`'s `onElicitationComplete`: tells the client that got that URL elicitation. */
  onElicitationComplete(elicitationId: string): void
}

const DEFAULT_TIMEOUTS: Required<McpRelayTimeouts> = {
  elicitationMs: 10 * 60_000,
  samplingMs: 10 * 60_000,
  rootsMs: 60_000,
}
/** URL elicitations remembered for their completion notice; the oldest is forgotten past this. */
const MAX_PENDING_URL_ELICITATIONS = 1000

/** A JSON-RPC error for the upstream: its code and message arrive as they are. */
interface RpcError {
  readonly code: number
  readonly message: string
}

/**
 * The relay of a gateway: each upstream request is sent to the client session whose call it is
 * serving (found through `directory`), or refused with an error that says why.
 */
export function createMcpRelay(directory: McpClientDirectory, options: McpRelayOptions = {}): McpRelay {
  const timeouts = { ...DEFAULT_TIMEOUTS }
  for (const key of ['elicitationMs', 'samplingMs', 'rootsMs'] as const) {
    const ms = options.timeouts?.[key]
    if (ms === undefined) continue
    if (!(typeof ms === 'number' && ms > 0 && Number.isFinite(ms)))
      throw new ConfigError(`createMcpRelay(directory, options).timeouts.${key}`, 'expected a positive number')
    timeouts[key] = ms
  }
  const urlElicitations = new Map<string, McpClientSession>()

  const relay = async <T>(
    kind: string,
    context: McpRequestContext,
    supported: (capabilities: ClientCapabilities) => boolean,
    timeout: number,
    send: (server: McpClientSession, options: McpClientRequestOptions) => Promise<T>,
  ): Promise<T> => {
    const target = route(directory, context.calls, kind)
    const capabilities = directory.capabilitiesOf(target.server)
    if (capabilities === undefined || !supported(capabilities))
      throw rpc(JsonRpcCode.MethodNotFound, `the MCP client that made this call did not declare the ${kind} capability`)
    const signals = [context.signal, ...(target.call ? [target.call.signal] : [])]
    const signal = signals.length === 1 ? context.signal : AbortSignal.any(signals)
    const base: McpClientRequestOptions = { signal, timeout }
    try {
      return target.call
        ? await target.call.send((related) => send(target.server, { ...base, ...related }))
        : await send(target.server, base)
    } catch (error) {
      // Given up on because the call ended or the server withdrew it: not a slow client. The server
      // is told so with the cancellation code.
      if (signal.aborted) throw cancelled(kind, context.signal.aborted)
      throw relayed(error, kind, timeout)
    }
  }

  const handlers: Required<McpCapabilityHandlers> = {
    elicitation: (params, context) =>
      // Sent as is rather than through elicitInput, which also refuses the bare `elicitation: {}`
      // that clients older than URL mode declare; the upstream checks the content against its schema.
      relay('elicitation', context, formElicitation, timeouts.elicitationMs, (server, options) =>
        server.elicit(params, options),
      ),
    urlElicitation: (params, context) =>
      relay<ElicitResult>(
        'URL-mode elicitation',
        context,
        (c) => c.elicitation?.url !== undefined,
        timeouts.elicitationMs,
        async (server, options) => {
          // Remembered first: the completion notice may come before the answer is read.
          urlElicitations.set(params.elicitationId, server)
          if (urlElicitations.size > MAX_PENDING_URL_ELICITATIONS)
            urlElicitations.delete(urlElicitations.keys().next().value as string)
          const answer = await server.elicitInput(params, options)
          if (answer.action !== 'accept') urlElicitations.delete(params.elicitationId)
          return answer
        },
      ),
    sampling: (params, context) =>
      relay(
        'sampling',
        context,
        (c) => c.sampling !== undefined && (params.tools === undefined || c.sampling.tools !== undefined),
        timeouts.samplingMs,
        // toolgate's own sampling shape, checked by the SDK when it sends
        (server, options) => server.createMessage(params as CreateMessageRequestParams, options),
      ),
    roots: (params, context) =>
      relay(
        'roots',
        context,
        (c) => c.roots !== undefined,
        timeouts.rootsMs,
        (server, options) => server.listRoots(params, options),
      ),
  }

  return {
    handlers,
    onElicitationComplete(elicitationId) {
      const server = urlElicitations.get(elicitationId)
      if (server === undefined) return
      urlElicitations.delete(elicitationId)
      if (!directory.sessions().includes(server)) return
      server.notification({ method: 'notifications/elicitation/complete', params: { elicitationId } }).catch(() => {})
    },
  }
}

/** Form mode: declared as `form`, or as the bare `elicitation: {}` of clients before URL mode existed. */
function formElicitation(capabilities: ClientCapabilities): boolean {
  const { elicitation } = capabilities
  if (elicitation === undefined) return false
  return elicitation.form !== undefined || elicitation.url === undefined
}

/**
 * The client session to ask: the one that made the calls running on the upstream when the request
 * came (all of them must be from one session); with no call running, the only session open.
 */
function route(
  directory: McpClientDirectory,
  calls: McpRequestContext['calls'],
  kind: string,
): { server: McpClientSession; call?: McpCallChannel } {
  if (calls.length === 0) {
    const open = directory.sessions()
    if (open.length === 1) return { server: open[0] }
    throw rpc(
      JsonRpcCode.InternalError,
      open.length === 0
        ? `the ${kind} request came while no MCP client is connected to the gateway`
        : `the ${kind} request came outside any tool call while ${open.length} MCP clients are connected, ` +
            'so the gateway cannot tell which client to ask',
    )
  }
  const channels = calls.map((call) => directory.callOf(call.rootCallId))
  // A call that has ended (cancelled, timed out, its client gone) while the server may still be
  // working on it: the request may be that call's, whose client is no longer there to ask. It goes
  // to no one else.
  if (channels.some((channel) => channel === undefined))
    throw rpc(
      JsonRpcCode.InternalError,
      `the ${kind} request came while a tool call that has ended (cancelled, timed out or its client gone) ` +
        'or that no MCP client made may still be running on this server, so it is sent to no other client',
    )
  const owners = new Set(channels.map((channel) => channel?.server))
  if (owners.size > 1)
    throw rpc(
      JsonRpcCode.InternalError,
      `the ${kind} request came while tool calls from ${owners.size} different callers were running on this ` +
        'server, so the gateway cannot tell which of them it belongs to',
    )
  // The most recent call of that session: its stream is the likeliest to be open.
  const channel = channels[channels.length - 1] as McpCallChannel
  return { server: channel.server, call: channel }
}

/** The client's own error with its code (without the SDK's "MCP error N:" prefix), or what happened. */
function relayed(error: unknown, kind: string, timeout: number): RpcError {
  const code = (error as { code?: unknown })?.code
  const text = error instanceof Error ? error.message : String(error)
  // The SDK's own timeout (v2 names it; v1 gave it the JSON-RPC code).
  if (code === JsonRpcCode.RequestTimeout || code === SdkErrorCode.RequestTimeout)
    return rpc(JsonRpcCode.RequestTimeout, `the MCP client did not answer the ${kind} request within ${timeout} ms`)
  if (typeof code === 'number' && Number.isSafeInteger(code)) return rpc(code, text.replace(/^MCP error -?\d+: /, ''))
  return rpc(JsonRpcCode.InternalError, `relaying the ${kind} request to the MCP client failed: ${text}`)
}

/** Why a relayed request was withdrawn: the server cancelled it, or the call it served ended. */
function cancelled(kind: string, byServer: boolean): RpcError {
  return rpc(
    JsonRpcCode.RequestCancelled,
    byServer
      ? `the ${kind} request was cancelled by the server`
      : `the ${kind} request was cancelled: the tool call it served was cancelled or ended before the MCP client answered`,
  )
}

function rpc(code: number, message: string): RpcError {
  return { code, message }
}
