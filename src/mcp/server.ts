// createMcpServer(): one agent scope of the registry, served as an MCP server. Every call goes
// through ctx.tools.execute, so approvals, guards and timeouts apply exactly as for a model turn.
import { randomUUID } from 'node:crypto'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ElicitResultSchema,
  ListToolsRequestSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'cordis'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { ToolRuntimeCore } from '../runtime/index.js'
import { approvalAnswer, approvalQuestion } from './approval-question.js'
import { revealToCaller } from './caller-only.js'
import { MCP_LOG_LEVELS, type McpLogLevel, type McpLogMessage } from './client.js'
import type { McpCallChannel, McpClientDirectory } from './client-directory.js'
import { createFastCalls } from './fast-call.js'
import { setFastPath } from './fast-path.js'
import { LazyJsonSchemaValidator } from './lazy-json-schema-validator.js'
import { ToolListWatch } from './list-watch.js'
import { checkCatalog, type McpServerCatalog, serveCatalog } from './serve-catalog.js'
import {
  type CallParams,
  CallProgress,
  callParams,
  cannotAsk,
  hostApproves,
  listTools,
  runToolCall,
} from './serve-tools.js'
import { McpServerTasks, TASKS_CAPABILITY } from './server-tasks.js'
import type { AuthInfo } from './wire-types.js'

/** Options of {@link createMcpServer}. */
export interface CreateMcpServerOptions {
  /** The scope served: what this agent sees (its presentation mode included). Default: the global layer. */
  readonly agent?: Agent
  /**
   * The scope each request is served as, from the request's authentication (the SDK's `AuthInfo`,
   * `extra.authInfo`; undefined when the transport has none, as over stdio). When given it decides
   * instead of `agent` for listing, calling and approving, so that each caller sees its own tools.
   */
  readonly agentFor?: (authInfo: AuthInfo | undefined) => Agent | undefined
  /** Server name announced to clients. */
  readonly name: string
  /** Server version announced to clients. */
  readonly version: string
  /** Optional instructions announced to clients at initialization. */
  readonly instructions?: string
  /**
   * Log messages for the client: when given, the server declares the `logging` capability, sends
   * each message `subscribe` delivers as `notifications/message` (dropping those below the level
   * the client asked for), and passes the client's `logging/setLevel` to `setLevel`.
   */
  readonly logging?: McpServerLogging
  /**
   * Resources, prompts and completions to serve beside the tools; each part given is declared to
   * the client, and its requests go to it (see {@link McpServerCatalog}).
   */
  readonly catalog?: McpServerCatalog
  /**
   * Record this session and each call it runs here, so code running inside a call (a gateway's
   * upstream tool) can reach the client that made it; the client's `roots/list_changed` is reported
   * to it too. A gateway shares one directory among all its sessions.
   */
  readonly clients?: McpClientDirectory
  /**
   * Keeps calls whose nested approvals nobody on this connection can answer (the client cannot be
   * asked, and the host has no approval service): `serve --store` lets a Code Mode program wait
   * for an approver in the viewer, kept in the store. Absent: such asks are denied.
   */
  readonly keeper?: McpCallKeeper
}

/** See {@link CreateMcpServerOptions.keeper}. */
export interface McpCallKeeper {
  /** Whether the keeper takes calls of this tool (it sees the call before it starts). */
  keeps(name: string, agent: Agent | undefined, authInfo: AuthInfo | undefined): boolean
  /** Run the call: `run` dispatches it through the pipeline with the given options. */
  run(
    input: ToolExecutionInput,
    options: ToolExecuteOptions,
    run: (options: ToolExecuteOptions) => Promise<ToolExecutionResult>,
    call?: McpKeptCall,
  ): Promise<ToolExecutionResult>
}

/** Who made a kept call, and the name its client gave it (`_meta["toolgate/program"]`, unchecked). */
export interface McpKeptCall {
  readonly authInfo?: AuthInfo
  readonly programId?: unknown
}

/** Where a served scope's log messages come from, and who hears the client's level. */
export interface McpServerLogging {
  /** Start delivering messages to `send`; returns how to stop (called when the server closes). */
  subscribe(send: (message: McpLogMessage) => void): () => void
  /**
   * The client asked for messages at `level` and above; a rejection is the request's error.
   * `subscriber` is the function this server passed to `subscribe`, so that a source serving
   * several servers (one per client) can tell their levels apart.
   */
  setLevel?(level: McpLogLevel, subscriber: (message: McpLogMessage) => void): void | Promise<void>
}

/** How long a human may take to answer an approval elicitation. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000

/**
 * An MCP server (the SDK's `Server`, not yet connected) exposing what `options.agent` sees:
 * `tools.schemas(agent)` as the tool list (so under Code Mode just `run_code`), object output
 * schemas with `structuredContent`, annotations, `notifications/tools/list_changed` when a
 * `tools/change` changes the list this client was shown, client cancellation as the call's signal, and every call through
 * `tools.execute`. An `ask` decision is put to the client as an elicitation when it supports
 * elicitation, and denied otherwise (unless the host provides its own approval service).
 *
 * Connect it to a transport with `await server.connect(transport)`; `server.close()` detaches it.
 */
export function createMcpServer(ctx: Context, options: CreateMcpServerOptions): Server {
  const tools = (typeof ctx?.get === 'function' ? ctx.get('tools', false) : undefined) as ToolRuntimeCore | undefined
  if (typeof tools?.execute !== 'function' || typeof tools.schemas !== 'function')
    throw new ConfigError('createMcpServer(ctx)', 'expected a Cordis context with the tools service loaded')
  if (typeof options?.name !== 'string' || options.name === '')
    throw new ConfigError('createMcpServer(ctx, options).name', 'expected a non-empty string')
  if (typeof options.version !== 'string' || options.version === '')
    throw new ConfigError('createMcpServer(ctx, options).version', 'expected a non-empty string')
  const { logging } = options
  if (logging !== undefined) {
    if (typeof logging?.subscribe !== 'function')
      throw new ConfigError('createMcpServer(ctx, options).logging.subscribe', 'expected a function')
    if (logging.setLevel !== undefined && typeof logging.setLevel !== 'function')
      throw new ConfigError('createMcpServer(ctx, options).logging.setLevel', 'expected a function')
  }
  const catalog =
    options.catalog === undefined ? undefined : checkCatalog(options.catalog, 'createMcpServer(ctx, options).catalog')
  const { agent, agentFor, clients, keeper } = options
  if (clients !== undefined && typeof clients?.addCall !== 'function')
    throw new ConfigError('createMcpServer(ctx, options).clients', 'expected an McpClientDirectory')
  if (agentFor !== undefined && typeof agentFor !== 'function')
    throw new ConfigError('createMcpServer(ctx, options).agentFor', 'expected a function')
  // Resolve the scope once so a bad agent fails here, not on the first list.
  tools.schemas(agent)
  const scopeOf = (authInfo: AuthInfo | undefined) => (agentFor ? agentFor(authInfo) : agent)

  const tasks = new McpServerTasks()
  const server = new Server(
    { name: options.name, version: options.version },
    {
      capabilities: {
        tools: { listChanged: true },
        ...(logging ? { logging: {} } : {}),
        tasks: TASKS_CAPABILITY,
      },
      instructions: options.instructions,
      jsonSchemaValidator: new LazyJsonSchemaValidator(),
      ...tasks.options,
    },
  )
  const session = randomUUID().slice(0, 8)
  let serial = 0

  const watch = new ToolListWatch(tools, agent)
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const scope = scopeOf(extra.authInfo)
    watch.listed(scope)
    return { tools: listTools(tools, scope, 'legacy') }
  })

  // Read once: each read of a method through the service's tracing proxy walks its prototype chain
  // (µs per call); the methods are still called on the proxy, as `tools.execute(...)` would be.
  const methods = { execute: tools.execute, get: tools.get }

  /**
   * One call: `signal` ends it, `send` sends a request to its client (related to the call's request,
   * or through its task when it runs as one).
   */
  const runCall = async (
    params: CallParams,
    callId: string,
    signal: AbortSignal,
    send: McpCallChannel['send'],
    authInfo: AuthInfo | undefined,
  ): Promise<CallToolResult> => {
    const agent = scopeOf(authInfo)
    const callerOnly = new Map<string, string>()
    const reveal = (placeholder: string, text: string) => void callerOnly.set(placeholder, text)
    const endCall = clients?.addCall(callId, { server, signal, send, reveal })
    const sendRequest: SendRequest = (request, schema, options) =>
      send((related) => server.request(request, schema, { ...options, ...related }))
    try {
      const approval = approvalFor(server, ctx, agent, sendRequest, signal, authInfo?.clientId)
      const keep =
        approval === noElicitation && keeper?.keeps(params.name, agent, authInfo) === true ? keeper : undefined
      const result = await runToolCall(tools, methods, params, callId, signal, agent, approval, keep, authInfo)
      return revealToCaller(result, callerOnly)
    } finally {
      endCall?.()
    }
  }

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const callId = `mcp-${session}-${++serial}`
    const { task } = request.params
    if (task !== undefined && extra.taskStore !== undefined) {
      // The request is answered with the task at once; the call runs on, followed through the task.
      const created = await tasks.start(extra.taskStore, task.ttl, (signal, taskId) =>
        runCall(
          callParams(request.params),
          callId,
          signal,
          (send) => tasks.waitingForInput(taskId, () => send({ relatedTask: { taskId } })),
          extra.authInfo,
        ),
      )
      return created as unknown as CallToolResult
    }
    const token = extra._meta?.progressToken
    if (token !== undefined) progress.start(callId, token, extra.sendNotification)
    try {
      return await runCall(
        callParams(request.params),
        callId,
        extra.signal,
        (send) => send({ relatedRequestId: extra.requestId }),
        extra.authInfo,
      )
    } finally {
      progress.end(callId)
    }
  })

  // A call's progress (its own or a Code Mode sub-call's) goes to the client that asked for it.
  const progress = new CallProgress(ctx)

  // Transports that offer incoming messages to a fast path answer plain calls without the SDK's Protocol.
  const fast = createFastCalls({
    server,
    nextCallId: () => `mcp-${session}-${++serial}`,
    run: runCall,
    startProgress: (callId, token, send) => progress.start(callId, token, send),
    endProgress: (callId) => progress.end(callId),
  })
  setFastPath(server, fast)

  // Coalesce a burst of changes (a remote server re-listing, a plugin loading) into one notification.
  let closed = false
  let pending = false
  const dispose = ctx.on('tools/change', () => {
    if (closed || pending) return
    pending = true
    queueMicrotask(() => {
      pending = false
      // Only when what this client was shown changed: another session's loaded tools are not news here.
      if (!closed && server.transport && watch.changed()) server.sendToolListChanged().catch(() => {})
    })
  })
  const disposeLogging = logging ? serveLogging(server, logging) : () => {}
  const disposeCatalog = catalog ? serveCatalog(server, catalog) : () => {}
  const leave = clients?.addSession(server)
  if (clients) {
    server.setNotificationHandler(RootsListChangedNotificationSchema, () => clients.rootsChanged(server))
    // A client that brings roots changes them from none (or another client's) to its own.
    const oninitialized = server.oninitialized
    server.oninitialized = () => {
      oninitialized?.()
      if (server.getClientCapabilities()?.roots) clients.rootsChanged(server)
    }
  }
  const onclose = server.onclose
  server.onclose = () => {
    closed = true
    fast.close()
    dispose()
    progress.close()
    disposeLogging()
    disposeCatalog()
    leave?.()
    tasks.close()
    onclose?.()
  }
  return server
}

/** Relay the source's messages at or above the client's level; pass the client's level on. */
function serveLogging(server: Server, logging: McpServerLogging): () => void {
  // Until the client sets a level it gets every message, as the SDK's own server does.
  let threshold = 0
  const subscriber = (message: McpLogMessage) => {
    if (!server.transport || MCP_LOG_LEVELS.indexOf(message.level) < threshold) return
    const { level, logger, data } = message
    server
      .notification({
        method: 'notifications/message',
        params: { level, ...(logger !== undefined ? { logger } : {}), data },
      })
      .catch(() => {})
  }
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    const { level } = request.params
    threshold = MCP_LOG_LEVELS.indexOf(level)
    await logging.setLevel?.(level, subscriber)
    return {}
  })
  const stop = logging.subscribe(subscriber)
  return typeof stop === 'function' ? stop : () => {}
}

type SendRequest = (
  request: { method: 'elicitation/create'; params: Record<string, unknown> },
  schema: typeof ElicitResultSchema,
  options?: { signal?: AbortSignal; timeout?: number },
) => Promise<{ action: string; content?: Record<string, unknown> }>

/**
 * Who answers an `ask` of a call that came in over MCP (its Code Mode sub-calls included): the host's
 * own approval service when it has one (it is the host's decision who approves), else the client that
 * made the call, as an elicitation, when it declared that capability; otherwise the call is denied.
 */
function approvalFor(
  server: Server,
  ctx: Context,
  agent: Agent | undefined,
  send: unknown,
  signal: AbortSignal,
  client: string | undefined,
): ApprovalService | undefined {
  if (hostApproves(ctx, agent)) return undefined
  if (!server.getClientCapabilities()?.elicitation) return noElicitation
  return { request: (request) => elicitApproval(request, send as SendRequest, signal, client) }
}

const noElicitation = cannotAsk('the MCP client cannot be asked (it did not declare the elicitation capability)')

/** Ask the client's user, on the stream of the request being handled (Streamable HTTP relates them). */
async function elicitApproval(
  request: ApprovalRequest,
  send: SendRequest,
  signal: AbortSignal,
  client: string | undefined,
): Promise<ApprovalOutcome> {
  let answer: { action: string; content?: Record<string, unknown> }
  try {
    answer = await send({ method: 'elicitation/create', params: approvalQuestion(request) }, ElicitResultSchema, {
      signal,
      timeout: ELICITATION_TIMEOUT_MS,
    })
  } catch (error) {
    return {
      kind: 'denied',
      reason: `asking the MCP client failed: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
  // The authenticated client answered for itself: the journal records it as who decided.
  return approvalAnswer(answer, client)
}
