// createMcpServer(): one agent scope of the registry, served as an MCP server. Every call goes
// through ctx.tools.execute, so approvals, guards and timeouts apply exactly as for a model turn.
import { randomUUID } from 'node:crypto'
import { ProtocolError, Server, type ServerContext } from '@modelcontextprotocol/server'
import type { StandardSchemaV1 } from '@standard-schema/spec'
import type { Context } from 'cordis'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../../contract/execution.js'
import { ConfigError } from '../../errors/config-error.js'
import type { ToolRuntimeCore } from '../../runtime/index.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import { LazyJsonSchemaValidator } from '../protocol/lazy-json-schema-validator.js'
import { MCP_LOG_LEVELS, type McpLogLevel, type McpLogMessage } from '../protocol/logging.js'
import type {
  AuthInfo,
  CallToolResult,
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  JSONRPCMessage,
  ListRootsRequest,
  ListRootsResult,
  McpMessageExtra,
  McpTransport,
  RequestId,
} from '../protocol/wire-types.js'
import { approvalAnswer, approvalQuestion } from './approval-question.js'
import { revealToCaller } from './caller-only.js'
import type {
  McpCallChannel,
  McpClientDirectory,
  McpClientRequestOptions,
  McpClientSession,
} from './client-directory.js'
import { createFastCalls, type FastCallSession } from './fast-call.js'
import { setFastPath } from './fast-path.js'
import { ToolListWatch } from './list-watch.js'
import { type CatalogServer, checkCatalog, type McpServerCatalog, serveCatalog } from './serve-catalog.js'
import {
  type CallParams,
  CallProgress,
  callParams,
  cannotAsk,
  hostApproves,
  listTools,
  runToolCall,
} from './serve-tools.js'
import { McpServerTasks, RELATED_TASK_META_KEY, TASKS_CAPABILITY, TaskRequestError } from './server-tasks.js'

/**
 * A served MCP session (what {@link createMcpServer} returns): connect it to one transport (the
 * SDK's transports, v1 or v2, and toolgate's own have the {@link McpTransport} shape); `close()`
 * ends the session and detaches it.
 */
export interface McpServerHandle {
  connect(transport: McpTransport): Promise<void>
  close(): Promise<void>
  /** Called once when the session ends (the transport closed, or `close()`). */
  onclose?: () => void
  /** Failures with no request to answer them (a response that could not be sent, a refused message). */
  onerror?: (error: Error) => void
}

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
  /**
   * Run the call: `run` dispatches it through the pipeline with the given options, and under
   * `signal` instead of the input's when one is given (a keeper fuses the input's into it, to
   * cancel a run the keeper no longer holds).
   */
  run(
    input: ToolExecutionInput,
    options: ToolExecuteOptions,
    run: (options: ToolExecuteOptions, signal?: AbortSignal) => Promise<ToolExecutionResult>,
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
 * An MCP server (a session, not yet connected) exposing what `options.agent` sees:
 * `tools.schemas(agent)` as the tool list (so under Code Mode just `run_code`), object output
 * schemas with `structuredContent`, annotations, `notifications/tools/list_changed` when a
 * `tools/change` changes the list this client was shown, client cancellation as the call's signal, and every call through
 * `tools.execute`. An `ask` decision is put to the client as an elicitation when it supports
 * elicitation, and denied otherwise (unless the host provides its own approval service).
 *
 * Connect it to a transport with `await server.connect(transport)`; `server.close()` detaches it.
 * It speaks MCP 2025-11-25 (and the revisions before it) to the client that initializes it.
 */
export function createMcpServer(ctx: Context, options: CreateMcpServerOptions): McpServerHandle {
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
  const { agent, agentFor, clients } = options
  if (clients !== undefined && typeof clients?.addCall !== 'function')
    throw new ConfigError('createMcpServer(ctx, options).clients', 'expected an McpClientDirectory')
  if (agentFor !== undefined && typeof agentFor !== 'function')
    throw new ConfigError('createMcpServer(ctx, options).agentFor', 'expected a function')
  // Resolve the scope once so a bad agent fails here, not on the first list.
  tools.schemas(agent)
  return new ServedSession(ctx, tools, options, catalog)
}

/** The SDK's context of a request, as toolgate reads it. */
type RequestContext = ServerContext

/** The caller of a request: the transport's authentication, if any. */
const authOf = (rc: RequestContext): AuthInfo | undefined => rc.http?.authInfo as AuthInfo | undefined

/** A request sent to the client as given (the SDK's typed methods check the method's result). */
type SdkRequestOptions = { signal?: AbortSignal; timeout?: number; relatedRequestId?: RequestId }

/**
 * One served session: the SDK v2 `Server` it runs on (bound to 2025-11-25 by the client's
 * `initialize`), its tasks, its fast path, and the client as the gateway reaches it.
 */
class ServedSession implements McpServerHandle, McpClientSession {
  onclose?: () => void
  onerror?: (error: Error) => void

  private readonly server: Server
  private readonly tasks = new McpServerTasks()
  /**
   * The SDK v2 sends a resource miss (-32002, from a read or a subscription) as -32602 on every
   * revision; a 2025 client gets the error the source threw, -32002 as the 2025-11-25 revision
   * names it. By request id, until its answer goes out.
   */
  private readonly misses: Misses = new Map()

  constructor(
    ctx: Context,
    tools: ToolRuntimeCore,
    options: CreateMcpServerOptions,
    catalog: McpServerCatalog | undefined,
  ) {
    const { agent, agentFor, clients, keeper, logging } = options
    const scopeOf = (authInfo: AuthInfo | undefined) => (agentFor ? agentFor(authInfo) : agent)
    const tasks = this.tasks
    const server = new Server(
      { name: options.name, version: options.version },
      {
        capabilities: {
          tools: { listChanged: true },
          ...(logging ? { logging: {} } : {}),
          tasks: TASKS_CAPABILITY,
        },
        ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
        jsonSchemaValidator: new LazyJsonSchemaValidator(),
      },
    )
    this.server = server
    const session = randomUUID().slice(0, 8)
    let serial = 0

    const watch = new ToolListWatch(tools, agent)
    server.setRequestHandler('tools/list', (_request, rc) => {
      const scope = scopeOf(authOf(rc))
      watch.listed(scope)
      return { tools: listTools(tools, scope, 'legacy') } as never
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
      const endCall = clients?.addCall(callId, { server: this, signal, send, reveal })
      const ask: AskClient = (params, options) => send((related) => this.elicit(params, { ...options, ...related }))
      try {
        const approval = approvalFor(this, ctx, agent, ask, signal, authInfo?.clientId)
        const keep =
          approval === noElicitation && keeper?.keeps(params.name, agent, authInfo) === true ? keeper : undefined
        const result = await runToolCall(tools, methods, params, callId, signal, agent, approval, keep, authInfo)
        return revealToCaller(result, callerOnly)
      } finally {
        endCall?.()
      }
    }

    // A call's progress (its own or a Code Mode sub-call's) goes to the client that asked for it.
    const progress = new CallProgress(ctx)

    server.setRequestHandler('tools/call', async (request, rc) => {
      const callId = `mcp-${session}-${++serial}`
      const params = request.params as { name: string; arguments?: Record<string, unknown>; _meta?: unknown }
      const token = rc.mcpReq._meta?.progressToken
      if (token !== undefined) progress.start(callId, token, (notification) => rc.mcpReq.notify(notification as never))
      try {
        return (await runCall(
          callParams(params),
          callId,
          rc.mcpReq.signal,
          (send) => send({ relatedRequestId: rc.mcpReq.id }),
          authOf(rc),
        )) as never
      } finally {
        progress.end(callId)
      }
    })

    // Tasks (2025-11-25): the SDK v2 keeps none on the server side, so the session answers them.
    const taskCall =
      <P, T>(answer: (params: P, rc: RequestContext) => T | Promise<T>) =>
      async (params: P, rc: RequestContext) => {
        try {
          return (await answer(params, rc)) as never
        } catch (error) {
          if (error instanceof TaskRequestError) throw new ProtocolError(error.code, error.message)
          throw error
        }
      }
    // The 2025-11-25 task methods are not the SDK v2's own: registered with their params' schemas.
    const byTask = { params: paramsWith<{ taskId: string }>('taskId', true) }
    server.setRequestHandler(
      'tasks/get',
      byTask,
      taskCall((params) => tasks.get(params.taskId)),
    )
    server.setRequestHandler(
      'tasks/list',
      { params: paramsWith<{ cursor?: string }>('cursor', false) },
      taskCall((params) => tasks.list(params.cursor)),
    )
    server.setRequestHandler(
      'tasks/cancel',
      byTask,
      taskCall((params) => tasks.cancel(params.taskId)),
    )
    server.setRequestHandler(
      'tasks/result',
      byTask,
      taskCall((params, rc) => tasks.result(params.taskId, rc.mcpReq.id, rc.mcpReq.signal)),
    )
    /** A task-augmented `tools/call`: answered with the task at once, the call running on behind it. */
    this.startTask = (params, authInfo) => {
      const callId = `mcp-${session}-${++serial}`
      const ttl = (params.task as { ttl?: unknown }).ttl
      return tasks.start(typeof ttl === 'number' ? ttl : undefined, (signal, taskId) =>
        runCall(
          callParams(params as { name: string; arguments?: Record<string, unknown>; _meta?: unknown }),
          callId,
          signal,
          (send) =>
            tasks.waitingForInput(taskId, (relatedRequestId) => send({ relatedRequestId, relatedTask: { taskId } })),
          authInfo,
        ),
      )
    }

    // Transports that offer incoming messages to a fast path answer plain calls without the SDK's Protocol.
    const fastSession: FastCallSession = {
      initialized: () => server.getClientCapabilities() !== undefined,
      notify: (notification, relatedRequestId) => server.notification(notification, { relatedRequestId }),
      onerror: (error) => server.onerror?.(error),
    }
    const fast = createFastCalls({
      server: fastSession,
      nextCallId: () => `mcp-${session}-${++serial}`,
      run: runCall,
      startProgress: (callId, token, send) => progress.start(callId, token, send),
      endProgress: (callId) => progress.end(callId),
    })
    setFastPath(this, fast)

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
    const disposeCatalog = catalog ? serveCatalog(catalogServer(server, this.misses), catalog) : () => {}
    const leave = clients?.addSession(this)
    if (clients) {
      server.setNotificationHandler('notifications/roots/list_changed', () => clients.rootsChanged(this))
      // A client that brings roots changes them from none (or another client's) to its own.
      server.oninitialized = () => {
        if (server.getClientCapabilities()?.roots) clients.rootsChanged(this)
      }
    }
    server.onerror = (error) => this.onerror?.(error)
    server.onclose = () => {
      closed = true
      fast.close()
      dispose()
      progress.close()
      disposeLogging()
      disposeCatalog()
      leave?.()
      tasks.close()
      this.onclose?.()
    }
  }

  /** Set by the constructor: start a task-augmented call. */
  private readonly startTask: (params: Record<string, unknown>, authInfo: AuthInfo | undefined) => { task: unknown }

  async connect(transport: McpTransport): Promise<void> {
    // The SDK v2 checks a `tools/call` result as a CallToolResult, so a task-augmented call (whose
    // answer is the task) is answered here, before the SDK sees it; everything else goes to the SDK.
    const take = (message: JSONRPCMessage, extra: McpMessageExtra | undefined): boolean => {
      const m = message as { method?: unknown; id?: unknown; params?: unknown }
      if (m.method !== 'tools/call' || m.id === undefined || !isObject(m.params) || !isObject(m.params.task))
        return false
      const { name, arguments: args } = m.params
      if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return false
      // Before initialization the SDK's own handling decides.
      if (this.server.getClientCapabilities() === undefined) return false
      const id = m.id as RequestId
      const result = this.startTask(m.params, extra?.authInfo as AuthInfo | undefined)
      transport
        .send({ jsonrpc: '2.0', id, result } as JSONRPCMessage, { relatedRequestId: id })
        .catch((error: unknown) => this.onerror?.(new Error(`Failed to send response: ${String(error)}`)))
      return true
    }
    const restore = (message: JSONRPCMessage): JSONRPCMessage => {
      if (this.misses.size === 0 || !('error' in message) || message.id == null) return message
      const miss = this.misses.get(message.id)
      if (miss === undefined) return message
      this.misses.delete(message.id)
      return { ...message, error: miss } as JSONRPCMessage
    }
    await this.server.connect(intercepting(transport, take, restore) as never)
  }

  close(): Promise<void> {
    return this.server.close()
  }

  getClientCapabilities(): ClientCapabilities | undefined {
    return this.server.getClientCapabilities() as ClientCapabilities | undefined
  }

  elicit(
    params: ElicitRequestFormParams | ElicitRequestURLParams,
    options?: McpClientRequestOptions,
  ): Promise<ElicitResult> {
    const [p, o] = sdkRequest(params, options)
    return this.server.request({ method: 'elicitation/create', params: p }, o) as Promise<ElicitResult>
  }

  elicitInput(
    params: ElicitRequestFormParams | ElicitRequestURLParams,
    options?: McpClientRequestOptions,
  ): Promise<ElicitResult> {
    const [p, o] = sdkRequest(params, options)
    return this.server.elicitInput(p as never, o) as Promise<ElicitResult>
  }

  createMessage(
    params: CreateMessageRequestParams,
    options?: McpClientRequestOptions,
  ): Promise<CreateMessageResult | CreateMessageResultWithTools> {
    const [p, o] = sdkRequest(params, options)
    return this.server.createMessage(p as never, o) as Promise<CreateMessageResult | CreateMessageResultWithTools>
  }

  listRoots(params?: ListRootsRequest['params'], options?: McpClientRequestOptions): Promise<ListRootsResult> {
    const [p, o] = sdkRequest(params, options)
    return this.server.listRoots(p as never, o) as Promise<ListRootsResult>
  }

  notification(
    notification: { method: string; params?: Record<string, unknown> },
    options?: { relatedRequestId?: RequestId },
  ): Promise<void> {
    return this.server.notification(notification as never, options)
  }

  createElicitationCompletionNotifier(elicitationId: string, options?: McpClientRequestOptions): () => Promise<void> {
    const related = options?.relatedRequestId
    return this.server.createElicitationCompletionNotifier(
      elicitationId,
      related === undefined ? undefined : { relatedRequestId: related },
    )
  }
}

/**
 * The params of a task method: an object (or none) whose `key` is a string (required or not). The
 * SDK answers a refusal with -32602 and the issue's message.
 */
function paramsWith<P>(key: string, required: boolean): StandardSchemaV1<unknown, P> {
  return {
    '~standard': {
      version: 1,
      vendor: 'toolgate',
      validate: (value) => {
        const params = value === undefined ? {} : value
        if (!isObject(params)) return { issues: [{ message: 'params: expected an object' }] }
        const field = params[key]
        if ((field === undefined && required) || (field !== undefined && typeof field !== 'string'))
          return { issues: [{ message: `${key}: expected a string`, path: [key] }] }
        return { value: params as P }
      },
    },
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The params and options the SDK takes for a request to the client: a request that serves a task
 * carries the task in its `_meta`, as the 2025-11-25 revision ties it.
 */
function sdkRequest<P extends Record<string, unknown> | undefined>(
  params: P,
  options: McpClientRequestOptions | undefined,
): [P, SdkRequestOptions | undefined] {
  if (options === undefined) return [params, undefined]
  const { signal, timeout, relatedRequestId, relatedTask } = options
  const sdkOptions: SdkRequestOptions = {
    ...(signal === undefined ? {} : { signal }),
    ...(timeout === undefined ? {} : { timeout }),
    ...(relatedRequestId === undefined ? {} : { relatedRequestId }),
  }
  if (relatedTask === undefined) return [params, sdkOptions]
  const meta = isObject(params?._meta) ? params._meta : {}
  return [{ ...params, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: relatedTask.taskId } } } as P, sdkOptions]
}

/**
 * `transport` as the SDK sees it, with `take` offered each incoming message first (what it takes
 * the SDK never sees). The wrapper is set up before the transport starts, so messages a transport
 * held until then (the startup gate's) are offered too.
 */
function intercepting(
  transport: McpTransport,
  take: (message: JSONRPCMessage, extra: McpMessageExtra | undefined) => boolean,
  outgoing: (message: JSONRPCMessage) => JSONRPCMessage,
): McpTransport {
  return {
    start: () => transport.start(),
    send: (message, options) => transport.send(outgoing(message), options),
    close: () => transport.close(),
    get sessionId() {
      return transport.sessionId
    },
    ...(transport.setProtocolVersion === undefined
      ? {}
      : { setProtocolVersion: (version: string) => transport.setProtocolVersion?.(version) }),
    get onmessage() {
      return transport.onmessage
    },
    set onmessage(handler) {
      transport.onmessage =
        handler === undefined
          ? undefined
          : (message: JSONRPCMessage, extra?: McpMessageExtra) => {
              if (!take(message, extra)) handler(message, extra)
            }
    },
    get onclose() {
      return transport.onclose
    },
    set onclose(handler) {
      transport.onclose = handler
    },
    get onerror() {
      return transport.onerror
    },
    set onerror(handler) {
      transport.onerror = handler
    },
  }
}

/** The session's SDK server as its catalog is served on it. */
/** Errors the session restores on their way out, by request id (see ServedSession.misses). */
type Misses = Map<RequestId, { code: number; message: string; data?: unknown }>

function catalogServer(server: Server, misses: Misses): CatalogServer {
  return {
    registerCapabilities: (capabilities) => server.registerCapabilities(capabilities as never),
    handle: (method, handler) =>
      server.setRequestHandler(
        method as 'resources/list',
        async (request: { params?: unknown }, rc: RequestContext) => {
          try {
            return (await handler(request.params as never, {
              signal: rc.mcpReq.signal,
              ...(authOf(rc) === undefined ? {} : { authInfo: authOf(rc) }),
              elicit: (params, options) =>
                rc.mcpReq.send({ method: 'elicitation/create', params }, options) as Promise<ElicitResult>,
              send: (method, params, options) => rc.mcpReq.send({ method, params } as never, options),
            })) as never
          } catch (error) {
            const e = error as { code?: unknown; message?: unknown; data?: unknown }
            if (e?.code === JsonRpcCode.ResourceNotFound && typeof e.message === 'string')
              misses.set(rc.mcpReq.id, {
                code: e.code,
                message: e.message,
                ...(e.data === undefined ? {} : { data: e.data }),
              })
            throw error
          }
        },
      ),
    connected: () => server.transport !== undefined,
    getClientCapabilities: () => server.getClientCapabilities() as ClientCapabilities | undefined,
    sendResourceUpdated: (params) => server.sendResourceUpdated(params),
    sendResourceListChanged: () => server.sendResourceListChanged(),
    sendPromptListChanged: () => server.sendPromptListChanged(),
  }
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
  server.setRequestHandler('logging/setLevel', async (request) => {
    const { level } = request.params
    threshold = MCP_LOG_LEVELS.indexOf(level)
    await logging.setLevel?.(level, subscriber)
    return {}
  })
  const stop = logging.subscribe(subscriber)
  return typeof stop === 'function' ? stop : () => {}
}

/** Asks the call's client with a form elicitation. */
type AskClient = (
  params: ElicitRequestFormParams,
  options: { signal: AbortSignal; timeout: number },
) => Promise<{ action: string; content?: Record<string, unknown> }>

/**
 * Who answers an `ask` of a call that came in over MCP (its Code Mode sub-calls included): the host's
 * own approval service when it has one (it is the host's decision who approves), else the client that
 * made the call, as an elicitation, when it declared that capability; otherwise the call is denied.
 */
function approvalFor(
  session: McpClientSession,
  ctx: Context,
  agent: Agent | undefined,
  ask: AskClient,
  signal: AbortSignal,
  client: string | undefined,
): ApprovalService | undefined {
  if (hostApproves(ctx, agent)) return undefined
  if (!session.getClientCapabilities()?.elicitation) return noElicitation
  return { request: (request) => elicitApproval(request, ask, signal, client) }
}

const noElicitation = cannotAsk('the MCP client cannot be asked (it did not declare the elicitation capability)')

/** Ask the client's user, on the stream of the request being handled (Streamable HTTP relates them). */
async function elicitApproval(
  request: ApprovalRequest,
  ask: AskClient,
  signal: AbortSignal,
  client: string | undefined,
): Promise<ApprovalOutcome> {
  let answer: { action: string; content?: Record<string, unknown> }
  try {
    answer = await ask(approvalQuestion(request) as ElicitRequestFormParams, {
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
