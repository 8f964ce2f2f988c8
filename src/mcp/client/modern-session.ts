// A session with an upstream in MCP 2026-07-28, on the SDK v2 client (this file loaded only when an
// upstream refused 2025-11-25, or a 2026 client first needs a server's 2026 side). It answers the
// same requests as a 2025 session does (UpstreamClient), and runs tool calls to the end: an
// input-required result is answered through the connection's capability handlers (a gateway's
// relay asks the MCP client whose call it is) and retried with the answers and the server's
// `requestState` as it sent it, round after round.

import type { ToolRunContext } from '../../contract/execution.js'
import { isRecord } from '../../util/is-record.js'
import type { McpCapabilityHandlers, McpRequestContext } from '../protocol/capability-handlers.js'
import type { ModernCall, UpstreamInputRequired } from '../protocol/era-call.js'
import type { CallToolResult, ElicitRequestFormParams, ElicitResult } from '../protocol/wire-types.js'
import { applyElicitationDefaults, declaredCapabilities } from './capabilities.js'
import { type McpServerSpec, McpToolError } from './client.js'
import { sdkStdioTransport } from './sdk-stdio-transport.js'
import type { UpstreamClient } from './upstream-client.js'

/** The revision a 2026-era session is pinned to. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28'
/** Rounds of input one call may ask for before it is given up (a server that never finishes). */
const MAX_INPUT_ROUNDS = 16
const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' }

/** What {@link openModernSession} needs from the link it serves. */
export interface ModernSessionOptions {
  /** The server's name as messages show it (quoted). */
  readonly label: string
  readonly timeoutMs: number
  readonly handlers: McpCapabilityHandlers
  /** An error's message with the spec's secrets masked. */
  readonly reason: (error: unknown) => string
  /** The connection ended without being closed here. */
  readonly onclose: () => void
}

/** Per-call options of a tool call, as the link passes them to either era. */
export interface ModernCallOptions {
  readonly signal: AbortSignal
  readonly timeout: number
  readonly resetTimeoutOnProgress: boolean
  readonly onprogress: (progress: { progress: number; total?: number; message?: string }) => void
}

/** An open 2026-07-28 session. */
export interface ModernSession {
  readonly client: UpstreamClient
  /** The revision the server agreed to (from `server/discover`). */
  readonly protocolVersion: string | undefined
  /** `tools/call`, with every input-required round answered for `exec`'s caller. */
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    options: ModernCallOptions,
    exec: ToolRunContext,
  ): Promise<CallToolResult>
  /**
   * One round of `tools/call` for a 2026 client's call: the client's capabilities in the envelope,
   * its retry's answers and the server's state as they came; the server's input-required answer
   * comes back as it is, for that client to answer.
   */
  callOnce(
    params: { name: string; arguments: Record<string, unknown> },
    options: ModernCallOptions,
    call: ModernCall,
  ): Promise<{ result: CallToolResult } | { inputRequired: UpstreamInputRequired }>
  /**
   * `prompts/get` for a 2025 client (or a library caller), with every input-required round answered
   * through `handlers` (those that ask the client of the request) and retried, as {@link callTool}.
   */
  getPrompt(
    params: { name: string; arguments?: Record<string, string> },
    options: { signal?: AbortSignal; timeout: number },
    handlers: McpCapabilityHandlers,
  ): Promise<unknown>
  /** `prompts/get` for a 2026 client's request, as {@link callOnce} does it. */
  getPromptOnce(
    params: { name: string; arguments?: Record<string, string> },
    options: { signal?: AbortSignal; timeout: number },
    call: ModernCall,
  ): Promise<{ result: unknown } | { inputRequired: UpstreamInputRequired }>
}

/**
 * Connect to a 2026-07-28 server named by `spec` (a URL or a command; a given transport cannot be
 * switched to another revision). Rejects with an {@link McpToolError} that says why it did not start.
 */
export async function openModernSession(spec: McpServerSpec, options: ModernSessionOptions): Promise<ModernSession> {
  const { label, handlers } = options
  if ('transport' in spec)
    throw new McpToolError(
      `MCP server ${label} speaks only MCP ${MODERN_PROTOCOL_VERSION}, which a given transport cannot be switched to`,
    )
  if ('url' in spec && spec.authProvider !== undefined)
    throw new McpToolError(
      `MCP server ${label} speaks only MCP ${MODERN_PROTOCOL_VERSION}; OAuth (authProvider) is not supported yet ` +
        'for such servers (give the credential in headers or headerProvider instead)',
    )
  const sdk = await import('@modelcontextprotocol/client')
  const transport =
    'url' in spec
      ? new sdk.StreamableHTTPClientTransport(new URL(spec.url), {
          fetch: await modernFetch(spec),
          ...(spec.headers ? { requestInit: { headers: { ...spec.headers } } } : {}),
        })
      : await sdkStdioTransport(spec)
  const client = new sdk.Client(CLIENT_INFO, {
    // The same declaration a 2025 session makes: it rides every request's `_meta`, and a server
    // asks only for the input its client declared.
    capabilities: declaredCapabilities(handlers) as never,
    versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } },
    // Each call answers its own input requests, for its own caller (see callTool).
    inputRequired: { autoFulfill: false },
  })
  let closing = false
  client.onclose = () => {
    if (!closing) options.onclose()
  }
  try {
    await client.connect(transport, { timeout: options.timeoutMs })
  } catch (error) {
    closing = true
    await client.close().catch(() => {})
    throw new McpToolError(`MCP server ${label} did not start: ${options.reason(error)}`)
  }
  // Results keep the JSON shape of both SDKs' types; only their declared types differ.
  const as = <T>(request: Promise<unknown>): Promise<T> => request as Promise<T>
  type Legacy = UpstreamClient
  const adapter: UpstreamClient = {
    getServerCapabilities: () => client.getServerCapabilities() as ReturnType<Legacy['getServerCapabilities']>,
    listTools: (params, opts) => as(client.listTools(params, opts)),
    listResources: (params, opts) => as(client.listResources(params, opts)),
    listResourceTemplates: (params, opts) => as(client.listResourceTemplates(params, opts)),
    listPrompts: (params, opts) => as(client.listPrompts(params, opts)),
    readResource: (params, opts) => as(client.readResource(params, opts)),
    subscribeResource: (params, opts) => as(client.subscribeResource(params, opts)),
    unsubscribeResource: (params, opts) => as(client.unsubscribeResource(params, opts)),
    getPrompt: (params, opts) => as(client.getPrompt(params, opts)),
    complete: (params, opts) => as(client.complete(params as never, opts)),
    setLoggingLevel: (level, opts) => as(client.setLoggingLevel(level as never, opts)),
    sendRootsListChanged: () => client.sendRootsListChanged(),
    close: async () => {
      closing = true
      await client.close()
    },
    // No session id: a 2026-07-28 server keeps no session to forget.
    transport: undefined,
  }

  /** The answer to one input request, from `using` (the connection's handlers, or a request's own). */
  const answer = async (
    request: unknown,
    context: McpRequestContext,
    /** What the answer finishes, as messages name it (a tool's quoted name, a prompt). */
    what: string,
    using: McpCapabilityHandlers = handlers,
  ): Promise<unknown> => {
    const method = isRecord(request) ? request.method : undefined
    const params = (isRecord(request) && isRecord(request.params) ? request.params : {}) as Record<string, unknown>
    const ask = async <T>(kind: string, handler: ((p: never, c: typeof context) => T | Promise<T>) | undefined) => {
      if (handler === undefined)
        throw new McpToolError(
          `MCP server ${label} needs ${kind} input to finish ${what}, and this connection answers no ${kind} requests`,
        )
      try {
        return await handler(params as never, context)
      } catch (error) {
        if (error instanceof McpToolError) throw error
        const text =
          error instanceof Error || isRecord(error) ? String((error as { message?: unknown }).message) : String(error)
        throw new McpToolError(`MCP server ${label} needs ${kind} input to finish ${what}: ${text}`)
      }
    }
    if (method === 'elicitation/create') {
      if (params.mode === 'url') return ask<ElicitResult>('URL-mode elicitation', using.urlElicitation)
      const result = await ask<ElicitResult>('elicitation', using.elicitation)
      return applyElicitationDefaults(result, params as ElicitRequestFormParams)
    }
    if (method === 'sampling/createMessage') return ask('sampling', using.sampling)
    if (method === 'roots/list') return ask('roots', using.roots)
    throw new McpToolError(
      `MCP server ${label} asked for input of an unknown kind (${JSON.stringify(String(method))}) to finish ${what}`,
    )
  }

  /** A 2026 client's request as it goes upstream: its retry as it came, its own declared capabilities. */
  const passThrough = <P extends object>(params: P, call: ModernCall): never =>
    ({
      ...params,
      ...call.retry,
      // The client's own declaration, not toolgate's: the server asks only for what it can answer.
      _meta: { [sdk.CLIENT_CAPABILITIES_META_KEY]: call.clientCapabilities },
    }) as never
  const answered = (result: unknown): { result: unknown } | { inputRequired: UpstreamInputRequired } => {
    if (!sdk.isInputRequiredResult(result)) return { result }
    return {
      inputRequired: {
        inputRequests: { ...(result.inputRequests ?? {}) } as Record<string, unknown>,
        ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
      },
    }
  }

  /**
   * A request run round after round: each input-required answer's requests are answered by
   * `answerAll` and the request is sent again with the answers and the server's state as it sent it.
   */
  const inRounds = async (
    what: string,
    send: (retry: { inputResponses: Record<string, unknown>; requestState?: string } | undefined) => Promise<unknown>,
    answerAll: (requests: [string, unknown][]) => Promise<unknown[]>,
  ): Promise<unknown> => {
    let retry: { inputResponses: Record<string, unknown>; requestState?: string } | undefined
    for (let round = 0; ; round++) {
      const result = await send(retry)
      if (!sdk.isInputRequiredResult(result)) return result
      if (round === MAX_INPUT_ROUNDS)
        throw new McpToolError(`MCP server ${label} asked for input ${round + 1} times without finishing ${what}`)
      const requests = Object.entries(result.inputRequests ?? {})
      const answers = await answerAll(requests)
      // The state goes back exactly as the server sent it: it is the server's, sealed or not.
      retry = {
        inputResponses: Object.fromEntries(requests.map(([key], i) => [key, answers[i]])),
        ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
      }
    }
  }

  return {
    client: adapter,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    async callOnce(params, callOptions, call) {
      const result: unknown = await client.callTool(passThrough(params, call), {
        ...callOptions,
        allowInputRequired: true,
      })
      return answered(result) as { result: CallToolResult } | { inputRequired: UpstreamInputRequired }
    },
    async getPromptOnce(params, promptOptions, call) {
      return answered(await client.getPrompt(passThrough(params, call), { ...promptOptions, allowInputRequired: true }))
    },
    async callTool(params, callOptions, exec) {
      const context = { signal: exec.signal, calls: [exec] }
      return (await inRounds(
        JSON.stringify(params.name),
        (retry) => client.callTool({ ...params, ...retry }, { ...callOptions, allowInputRequired: true }),
        (requests) => Promise.all(requests.map(([, request]) => answer(request, context, JSON.stringify(params.name)))),
      )) as CallToolResult
    },
    async getPrompt(params, promptOptions, using) {
      // No tool call runs: the handlers given ask the client of this very request.
      const context = { signal: promptOptions.signal ?? new AbortController().signal, calls: [] }
      const what = `the prompt ${JSON.stringify(params.name)}`
      return inRounds(
        what,
        (retry) => client.getPrompt({ ...params, ...retry }, { ...promptOptions, allowInputRequired: true }),
        (requests) => Promise.all(requests.map(([, request]) => answer(request, context, what, using))),
      )
    },
  }
}

/** The fetch of a 2026 HTTP session: toolgate's, with the spec's per-request headers when it has some. */
async function modernFetch(spec: Extract<McpServerSpec, { url: string }>) {
  const { upstreamFetch } = await import('./http-fetch.js')
  const provider = spec.headerProvider
  if (provider === undefined) return upstreamFetch
  const withHeaders = (init: RequestInit | undefined, extra: Readonly<Record<string, string>>): RequestInit => {
    const headers = new Headers(init?.headers)
    for (const [name, value] of Object.entries(extra)) headers.set(name, value)
    return { ...init, headers }
  }
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const sent = await provider()
    const res = await upstreamFetch(url, withHeaders(init, sent))
    if (res.status !== 401) return res
    // Refused: the provider is asked once more (a fresh credential), as for a 2025 session.
    await res.body?.cancel().catch(() => {})
    return upstreamFetch(url, withHeaders(init, await provider(sent)))
  }
}
