// The served scope over MCP 2026-07-28 on Streamable HTTP: no session, a fresh low-level SDK v2
// server per request (the SDK's createMcpHandler), whose handlers are the same era-neutral bodies
// the 2025 session server registers (serve-tools.ts, serve-catalog.ts). The SDK answers what the
// era defines for itself: the `_meta` envelope, server/discover, the Mcp-Method and Mcp-Name
// headers, removed methods, cache hints and subscriptions/listen.
// Nothing of the SDK v2 appears in what this module exports: its declarations need @types/node,
// which a consumer of toolgate's own declarations may not have.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from '@modelcontextprotocol/node'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import {
  createMcpHandler,
  INVALID_PARAMS,
  inputRequired,
  inputResponse,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { Context } from 'cordis'
import type { Agent, ApprovalOutcome, ApprovalRequest, ApprovalService } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { ToolRuntimeCore } from '../runtime/index.js'
import { approvalAnswer, approvalQuestion } from './approval-question.js'
import { ApprovalStateSeal, argumentsDigest } from './approval-state.js'
import { MCP_LOG_LEVELS, type McpLogMessage } from './client.js'
import { identityOf } from './identity.js'
import { isModernRequest } from './inbound-era.js'
import { LazyJsonSchemaValidator } from './lazy-json-schema-validator.js'
import type { McpServerCatalog } from './serve-catalog.js'
import { catalogCapabilities, catalogMethods, type McpServeContext } from './serve-catalog.js'
import {
  CallProgress,
  callParams,
  cannotAsk,
  hostApproves,
  listTools,
  outputSchemaOf,
  runToolCall,
} from './serve-tools.js'
import type { McpServerLogging } from './server.js'

/** Options of {@link createModernHttpLeg}. */
export interface ModernHttpOptions {
  /** The scope each request is served as, from its authentication (see createMcpServer's `agentFor`). */
  readonly agentFor: (authInfo: AuthInfo | undefined) => Agent | undefined
  readonly name: string
  readonly version: string
  /** Log messages a request asks for with the envelope's log level, sent on its own response stream. */
  readonly logging?: McpServerLogging
  /** Resources, prompts and completions beside the tools. */
  readonly catalog?: McpServerCatalog
  /** Largest request body, as for the 2025 sessions. */
  readonly maxMessageBytes: number
  /**
   * Wraps each per-request server before it serves (the gateway's store makes its responses wait
   * for the journal); gets and returns the server.
   */
  readonly wrap?: <S extends object>(server: S) => S
  /**
   * The key that seals the requestState of an approval put to a client (the gateway's state key);
   * a random per-process key by default, so only this process takes the retry.
   */
  readonly stateKey?: Uint8Array
  /** Failures the SDK reports out of band (a refused request, a failed write). */
  readonly onerror?: (error: Error) => void
}

/** The 2026-07-28 face of a Streamable HTTP endpoint. */
export interface ModernHttpLeg {
  /** Whether the SDK routes this request (its body already parsed) to its 2026-07-28 path. */
  isModern(req: IncomingMessage, body: unknown): Promise<boolean>
  /** Answers one request (authenticated, checked and parsed by the caller). */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>
  /** Ends the requests in flight and the listen streams; stops following changes. */
  close(): Promise<void>
}

/** A 2026 client that did not declare elicitation in its envelope cannot be asked. */
const NO_INPUT = 'the MCP client cannot be asked (it did not declare the elicitation capability)'
/** Why a Code Mode sub-call's ask is denied for a 2026-07-28 client (an input-required retry re-runs the program). */
const NESTED_ASK =
  'a Code Mode sub-call cannot be put to an MCP 2026-07-28 client as input required (its retry would run the program again)'
/** A catalog confirmation is not yet put to a 2026 client. */
const NO_CONFIRM = 'the MCP client cannot be asked (a 2026-07-28 request carries no elicitation channel here)'
/** The key of the approval question in an input-required result's `inputRequests`. */
const APPROVAL_INPUT = 'toolgate/approval'

/** Answers the one approval the retry was asked for with the person's decision; any other ask is denied. */
function answered(outcome: ApprovalOutcome, asked: string): ApprovalService {
  let used = false
  return {
    request: async (question) => {
      if (used || question.toolName !== asked)
        return { kind: 'denied', reason: 'the approval answered was for another call' }
      used = true
      return outcome
    },
  }
}

/** One leg per endpoint: what every request shares (the progress relay, the validators) is made here once. */
export function createModernHttpLeg(ctx: Context, options: ModernHttpOptions): ModernHttpLeg {
  const tools = (typeof ctx?.get === 'function' ? ctx.get('tools', false) : undefined) as ToolRuntimeCore | undefined
  if (typeof tools?.execute !== 'function' || typeof tools.schemas !== 'function')
    throw new ConfigError('createModernHttpLeg(ctx)', 'expected a Cordis context with the tools service loaded')
  const { agentFor, logging, catalog, wrap } = options
  const info = { name: options.name, version: options.version }
  const capabilities: ServerCapabilities = {
    tools: { listChanged: true },
    ...(logging ? { logging: {} } : {}),
    // Resource subscriptions are subscriptions/listen in this era, answered by the SDK.
    ...(catalog ? (catalogCapabilities(catalog, false) as ServerCapabilities) : {}),
  }
  const catalogBodies = catalog ? catalogMethods(catalog) : {}
  const methods = { execute: tools.execute, get: tools.get }
  const progress = new CallProgress(ctx)
  const validator = new LazyJsonSchemaValidator()
  const denied = cannotAsk(NO_INPUT)
  const seal = new ApprovalStateSeal(options.stateKey)
  let serial = 0

  const build = (authInfo: AuthInfo | undefined): Server => {
    // The deprecated low-level server: the gateway's handlers are its own, not McpServer's registrations.
    const server = new Server(info, { capabilities, jsonSchemaValidator: validator })
    const scope = () => agentFor(authInfo)
    /** The decision a retry carries, once its state is opened; a refused state runs nothing. */
    const retriedAnswer = (
      rc: ServerContext,
      wire: unknown,
      bound: { subject: string; tool: string; args: string },
    ): { outcome: ApprovalOutcome; asked: string } => {
      const view = inputResponse(rc.mcpReq.inputResponses, APPROVAL_INPUT)
      if (view.kind !== 'elicit')
        throw new ProtocolError(
          INVALID_PARAMS,
          `tools/call: inputResponses.${APPROVAL_INPUT}: expected the answer to the approval elicitation`,
        )
      const opened = seal.open(wire, bound)
      if (!opened.ok) throw new ProtocolError(INVALID_PARAMS, `tools/call: requestState refused: ${opened.reason}`)
      return { outcome: approvalAnswer(view, authInfo?.clientId), asked: opened.state.asked }
    }
    server.setRequestHandler('tools/list', () => ({ tools: listTools(tools, scope()) as never }))
    server.setRequestHandler('tools/call', async (request, rc) => {
      const agent = scope()
      const params = callParams(request.params)
      // A retry carries the person's answer and the state sealed when they were asked.
      const wire = rc.mcpReq.requestState()
      const hostDecides = hostApproves(ctx, agent)
      const canAsk = !hostDecides && wire === undefined && server.getClientCapabilities()?.elicitation !== undefined
      // What a sealed state is bound to: digested only for a call that may be asked or is a retry.
      const bound =
        wire !== undefined || canAsk
          ? { subject: identityOf(authInfo)?.subject ?? '', tool: params.name, args: argumentsDigest(params.arguments) }
          : undefined
      const answer = wire === undefined || bound === undefined ? undefined : retriedAnswer(rc, wire, bound)
      const callId = `mcp-r-${++serial}`
      const token = rc.mcpReq._meta?.progressToken
      if (token !== undefined) progress.start(callId, token, (notification) => rc.mcpReq.notify(notification))
      const stopLogs = forwardLogs(logging, rc)
      // Asking ends this round: the call stops (a Code Mode program goes no further) and the retry decides.
      const asking = canAsk ? new AbortController() : undefined
      let asked: ApprovalRequest | undefined
      try {
        const approval: ApprovalService | undefined = hostDecides
          ? undefined
          : answer !== undefined
            ? answered(answer.outcome, answer.asked)
            : asking !== undefined
              ? {
                  request: async (question) => {
                    // A Code Mode sub-call's ask would re-run the program's earlier sub-calls on the
                    // retry: it is denied inside the program instead, as when nobody can be asked.
                    if (question.parentCallId !== null)
                      return { kind: 'denied', reason: `${NESTED_ASK} (${question.toolName})` }
                    if (asked !== undefined) return { kind: 'denied', reason: 'one approval is asked per round' }
                    asked = question
                    asking.abort()
                    return { kind: 'cancelled', reason: 'put to the MCP client as an input-required result' }
                  },
                }
              : denied
        // Only a call that may be asked needs a signal of its own beside the request's.
        const signal = asking === undefined ? rc.mcpReq.signal : AbortSignal.any([rc.mcpReq.signal, asking.signal])
        const result = await runToolCall(tools, methods, params, callId, signal, agent, approval)
        if (asked !== undefined && bound !== undefined)
          return inputRequired({
            inputRequests: { [APPROVAL_INPUT]: inputRequired.elicit(approvalQuestion(asked)) },
            requestState: seal.seal({ ...bound, asked: asked.toolName, callId }),
          })
        return server.projectCallToolResult(
          result as never,
          outputSchemaOf(methods.get.call(tools, params.name, agent)),
        )
      } finally {
        progress.end(callId)
        stopLogs()
      }
    })
    const contextOf = (rc: ServerContext): McpServeContext => ({
      signal: rc.mcpReq.signal,
      ...(authInfo === undefined ? {} : { authInfo }),
      confirm: async () => ({ approved: false, reason: NO_CONFIRM }),
    })
    for (const [method, body] of Object.entries(catalogBodies)) {
      const run = body as (params: unknown, context: McpServeContext) => Promise<never>
      server.setRequestHandler(method as 'resources/list', async (request: { params?: unknown }, rc) => {
        const stopLogs = forwardLogs(logging, rc)
        try {
          return await run(request.params, contextOf(rc))
        } catch (error) {
          const { code, message, data } = error as { code: number; message: string; data?: unknown }
          throw new ProtocolError(code, message, data)
        } finally {
          stopLogs()
        }
      })
    }
    return wrap ? wrap(server) : server
  }

  const handler = createMcpHandler(({ authInfo }) => build(authInfo as AuthInfo | undefined), {
    legacy: 'reject',
    maxRequestBodySize: options.maxMessageBytes,
    ...(options.onerror ? { onerror: options.onerror } : {}),
  })
  const node = toNodeHandler(handler, {
    maxRequestBodySize: options.maxMessageBytes,
    ...(options.onerror ? { onerror: options.onerror } : {}),
  })

  // Open subscriptions/listen streams hear of changes; a burst is one notification per kind.
  const pending = new Set<'tools' | 'resources' | 'prompts'>()
  let closed = false
  const changed = (kind: 'tools' | 'resources' | 'prompts') => {
    if (closed || pending.has(kind)) return
    pending.add(kind)
    queueMicrotask(() => {
      pending.delete(kind)
      if (closed) return
      if (kind === 'tools') handler.notify.toolsChanged()
      else if (kind === 'resources') handler.notify.resourcesChanged()
      else handler.notify.promptsChanged()
    })
  }
  const stopTools = ctx.on('tools/change', () => changed('tools'))
  const stopCatalog = catalog?.watch?.((kind) => changed(kind)) ?? (() => {})

  return {
    isModern: async (req, body) => isModernRequest(req, body),
    handle: (req, res, body) => node(req, res, body),
    async close() {
      if (closed) return
      closed = true
      stopTools()
      if (typeof stopCatalog === 'function') stopCatalog()
      progress.close()
      await handler.close()
    },
  }
}

/**
 * The gateway's log messages at or above the level the request's envelope asks for, sent on the
 * request's own stream while it runs; none when it asks for none. Returns how to stop.
 */
function forwardLogs(logging: McpServerLogging | undefined, rc: ServerContext): () => void {
  const asked = (rc.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY]
  const threshold = MCP_LOG_LEVELS.indexOf(asked as (typeof MCP_LOG_LEVELS)[number])
  if (logging === undefined || threshold < 0) return () => {}
  const stop = logging.subscribe((message: McpLogMessage) => {
    if (MCP_LOG_LEVELS.indexOf(message.level) < threshold) return
    const { level, logger, data } = message
    rc.mcpReq
      .notify({ method: 'notifications/message', params: { level, ...(logger !== undefined ? { logger } : {}), data } })
      .catch(() => {})
  })
  return typeof stop === 'function' ? stop : () => {}
}
