// The served scope over MCP 2026-07-28 on Streamable HTTP: no session, a fresh low-level SDK v2
// server per request (the SDK's createMcpHandler), whose handlers are the same era-neutral bodies
// the 2025 session server registers (serve-tools.ts, serve-catalog.ts). The SDK answers what the
// era defines for itself: the `_meta` envelope, server/discover, the Mcp-Method and Mcp-Name
// headers, removed methods, cache hints and subscriptions/listen.
// Nothing of the SDK v2 appears in what this module exports: its declarations need @types/node,
// which a consumer of toolgate's own declarations may not have.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from '@modelcontextprotocol/node'
import type { CallToolResult } from '@modelcontextprotocol/server'
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  inputRequired,
  inputResponse,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { Context } from 'cordis'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  ToolExecutionResult,
} from '../../contract/execution.js'
import { ConfigError } from '../../errors/config-error.js'
import type { ToolRuntimeCore } from '../../runtime/index.js'
import { isRecord } from '../../util/is-record.js'
import { type ModernCall, modernDemand, runModernCall } from '../protocol/era-call.js'
import { identityOf } from '../protocol/identity.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import { LazyJsonSchemaValidator } from '../protocol/lazy-json-schema-validator.js'
import { MCP_LOG_LEVELS, type McpLogMessage } from '../protocol/logging.js'
import type { AuthInfo, JSONRPCMessage } from '../protocol/wire-types.js'
import { approvalAnswer, approvalQuestion } from './approval-question.js'
import {
  APPROVED_ROUNDS_MS,
  type ApprovalState,
  ApprovalStateSeal,
  argumentsDigest,
  type CarriedApproval,
  type KeptProgramRef,
  type SpentNonces,
} from './approval-state.js'
import { isModernRequest } from './inbound-era.js'
import type { KeptPause, KeptProgramRounds } from './kept-program-rounds.js'
import { answerFast, type FastRequest, fastRequest, projectModernCallResult } from './modern-fast-path.js'
import type { McpServerCatalog } from './serve-catalog.js'
import { catalogCapabilities, catalogMethods, type McpServeContext } from './serve-catalog.js'
import {
  type CallParams,
  CallProgress,
  callParams,
  cannotAsk,
  hostApproves,
  listTools,
  outputSchemaOf,
  runToolCall,
  toCallToolResult,
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
   * What the fast path sends for an answer, once what `wrap` waits for has happened (the gateway's
   * store: the journal records before it acknowledged, a call's result withheld when they were not).
   * The fast path does what `wrap` does to a server's responses with it, so it stays on beside `wrap`.
   */
  readonly acknowledged?: (message: JSONRPCMessage) => Promise<JSONRPCMessage>
  /**
   * The key that seals the requestState of an approval put to a client (the gateway's state key);
   * a random per-process key by default, so only this process takes the retry.
   */
  readonly stateKey?: Uint8Array
  /**
   * Where the nonces of used approval states are kept (with `stateKey`, a ledger every instance
   * shares, so a state is accepted once across all of them); this process's memory by default.
   */
  readonly spentStates?: SpentNonces
  /**
   * Keeps a `run_code` program whose sub-calls ask for approval (the gateway's store keeper): the
   * call answers with an input-required result naming the kept program, and the retry continues it.
   * Without it, such asks are denied inside the program.
   */
  readonly programs?: KeptProgramRounds
  /** Failures the SDK reports out of band (a refused request, a failed write). */
  readonly onerror?: (error: Error) => void
  /**
   * Whether a plainly well-formed tools/call or tools/list is answered without the SDK's
   * per-request server (src/mcp/server/modern-fast-path.ts); true by default, and with `wrap` only
   * when `acknowledged` says what the fast path is to do in its place.
   */
  readonly fastPath?: boolean
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
  'a Code Mode sub-call cannot be put to an MCP 2026-07-28 client as input required: this gateway does not keep the program between rounds (serve keeps them with --store and $TOOLGATE_STATE_KEY_FILE), and a retry would run the program again'
/** A catalog confirmation is not yet put to a 2026 client. */
const NO_CONFIRM = 'the MCP client cannot be asked (a 2026-07-28 request carries no elicitation channel here)'
/** The key of the approval question in an input-required result's `inputRequests`. */
const APPROVAL_INPUT = 'toolgate/approval'
/** The key of a kept program's `index`th waiting sub-call's question (the first one's is the plain key). */
const keptInputKey = (index: number): string => (index === 0 ? APPROVAL_INPUT : `${APPROVAL_INPUT}/${index + 1}`)

/** What a kept call hands back in place of a result: the round answers with the kept program's questions. */
const keptPlaceholder = {
  isError: true,
  content: [],
  error: { message: 'the program is kept', info: { code: 'APPROVAL_SUSPENDED' } },
} as unknown as ToolExecutionResult

/**
 * Answers the one approval the retry was asked for with the person's decision; any other ask is
 * denied (a kept program's sub-calls never reach it: the keeper suspends their asks first; an
 * unkept program's are denied as in its first round).
 */
function answered(outcome: ApprovalOutcome, asked: string): ApprovalService {
  let used = false
  return {
    request: async (question) => {
      // A sub-call of the approved program: its ask reaches here only when no keeper holds the program.
      if (question.parentCallId !== null) return { kind: 'denied', reason: `${NESTED_ASK} (${question.toolName})` }
      if (used || question.toolName !== asked)
        return { kind: 'denied', reason: 'the approval answered was for another call' }
      used = true
      return outcome
    },
  }
}

/** The approval an earlier round of the call was given, while it holds; else none (it is asked again). */
function stillApproved(
  approved: CarriedApproval | undefined,
  now = Date.now(),
): { outcome: ApprovalOutcome; asked: string; until: number } | undefined {
  if (approved === undefined || approved.until <= now) return undefined
  // Once: an `always` answer was applied as a standing rule in the round that got it.
  const outcome: ApprovalOutcome = {
    kind: 'allowed-once',
    ...(approved.by === undefined ? {} : { decidedBy: approved.by }),
  }
  return { outcome, asked: approved.asked, until: approved.until }
}

/** What a round's approval hands the call's next round, when it allowed the call. */
function approvalToCarry(
  answer: { outcome: ApprovalOutcome; asked: string; until?: number } | undefined,
  client: string | undefined,
  now = Date.now(),
): CarriedApproval | undefined {
  if (answer === undefined) return undefined
  const { kind } = answer.outcome
  if (kind !== 'allowed-once' && kind !== 'allowed-always') return undefined
  const by = 'decidedBy' in answer.outcome ? answer.outcome.decidedBy : client
  return { asked: answer.asked, ...(by === undefined ? {} : { by }), until: answer.until ?? now + APPROVED_ROUNDS_MS }
}

/** A 2026-07-28 server as its face drives it: the SDK's low-level server, kept out of the declarations. */
export interface ModernServer {
  sendToolListChanged(): Promise<void>
  sendResourceListChanged(): Promise<void>
  sendPromptListChanged(): Promise<void>
}

/** What a 2026-07-28 request's handler reads of its request: the SDK's context, or the fast path's. */
export interface ModernRequestContext {
  readonly mcpReq: {
    requestState(): unknown
    readonly inputResponses?: Record<string, unknown>
    readonly envelope?: object
    readonly _meta?: { readonly progressToken?: string | number }
    readonly signal: AbortSignal
    notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void>
  }
}

/** The tools bodies of one caller's 2026-07-28 requests, without a server object around them. */
export interface ModernToolHandlers {
  toolsList(): Promise<{ tools: unknown }>
  toolsCall(
    request: { params: { name: string; arguments?: Record<string, unknown>; _meta?: unknown } },
    rc: ModernRequestContext,
  ): Promise<unknown>
}

/** What the 2026-07-28 servers of one face share, and how each is made. */
export interface ModernServers {
  /** A low-level server whose requests are served as the scope of `authInfo` (none over stdio). */
  build(authInfo: AuthInfo | undefined): ModernServer
  /**
   * The tools bodies as `build`'s server registers them, for the caller of `authInfo`, projecting a
   * call's result as the 2026-07-28 era does (the HTTP fast path, src/mcp/server/modern-fast-path.ts).
   */
  handlers(authInfo: AuthInfo | undefined): ModernToolHandlers
  /** Ends the progress relay. */
  close(): void
}

/**
 * The 2026-07-28 servers of one face (an HTTP endpoint, a stdio connection): what every request
 * shares (the progress relay, the validators, the state seal) is made here once.
 */
export function modernServers(
  ctx: Context,
  options: Omit<ModernHttpOptions, 'maxMessageBytes'>,
  where: string,
): ModernServers {
  const tools = (typeof ctx?.get === 'function' ? ctx.get('tools', false) : undefined) as ToolRuntimeCore | undefined
  if (typeof tools?.execute !== 'function' || typeof tools.schemas !== 'function')
    throw new ConfigError(`${where}(ctx)`, 'expected a Cordis context with the tools service loaded')
  const { agentFor, logging, catalog, wrap, programs } = options
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
  const seal = new ApprovalStateSeal(options.stateKey, options.spentStates)
  let serial = 0

  /**
   * The tools bodies of one caller's requests, with or without a server object around them: the
   * per-request server registers them, and the fast path (modern-fast-path.ts) calls them directly.
   * `project` is the era's tools/call result projection; `instanceCapabilities` what the client
   * declared beside the envelope (nothing on the fast path, whose envelope always says).
   */
  const handlersFor = (
    authInfo: AuthInfo | undefined,
    project: (result: CallToolResult, outputSchema: Record<string, unknown> | undefined) => unknown,
    instanceCapabilities: () => { elicitation?: unknown } | undefined,
  ) => {
    const scope = () => agentFor(authInfo)
    /**
     * What a retry carries, once its state is opened (a refused state runs nothing): the person's
     * decision on an approval, or the answers to an upstream's input-required result with the
     * upstream's own state.
     */
    const retried = async (
      rc: ModernRequestContext,
      wire: unknown,
      bound: { subject: string; tool: string; args: string },
    ): Promise<
      | { outcome: ApprovalOutcome; asked: string }
      | { relay: { inputResponses: Record<string, unknown>; requestState?: string }; approved?: CarriedApproval }
      | { resume: { key: string; inputResponses: Record<string, unknown> }; approved?: CarriedApproval }
      | { kept: KeptProgramRef & { decisions: Record<string, ApprovalOutcome> } }
    > => {
      // The answers an approval state asked for, checked before the state is spent, so a retry
      // missing one (or carrying a malformed one) can be sent again, completed: a kept program's
      // waiting sub-calls, one answer each under the key each was asked with, or a direct ask's one.
      const decisions: Record<string, ApprovalOutcome> = {}
      let direct: ApprovalOutcome | undefined
      const admit = ({ kept, relay, held }: Pick<ApprovalState, 'kept' | 'relay' | 'held'>) => {
        if (kept === undefined && relay === undefined && held === undefined) {
          const answer = inputResponse(rc.mcpReq.inputResponses, APPROVAL_INPUT)
          if (answer.kind !== 'elicit')
            return `inputResponses.${APPROVAL_INPUT}: expected the answer to the approval elicitation`
          direct = approvalAnswer(answer, authInfo?.clientId)
          return undefined
        }
        for (const [index, callId] of kept?.calls.entries() ?? []) {
          const answer = inputResponse(rc.mcpReq.inputResponses, keptInputKey(index))
          if (answer.kind !== 'elicit')
            return `inputResponses.${keptInputKey(index)}: expected the answer to the approval elicitation`
          decisions[callId] = approvalAnswer(answer, authInfo?.clientId)
        }
        return undefined
      }
      const opened = await seal.open(wire, bound, Date.now(), admit).catch((error: unknown) => {
        // The ledger of used states is out of reach: nothing runs, and the same retry may succeed
        // later. Where the ledger lives is the operator's to read (the log), not the client's.
        options.onerror?.(error instanceof Error ? error : new Error(String(error)))
        throw new ProtocolError(
          JsonRpcCode.InternalError,
          'tools/call: requestState could not be checked (the record of used approvals is out of reach); nothing ran, retry later',
        )
      })
      if (!opened.ok)
        throw new ProtocolError(
          JsonRpcCode.InvalidParams,
          opened.input ? `tools/call: ${opened.reason}` : `tools/call: requestState refused: ${opened.reason}`,
        )
      const { relay, held, approved, kept } = opened.state
      if (kept !== undefined) return { kept: { ...kept, decisions } }
      const inputResponses = rc.mcpReq.inputResponses
      const carried = approved === undefined ? {} : { approved }
      if (held !== undefined)
        return {
          resume: { key: held, inputResponses: { ...(inputResponses ?? {}) } as Record<string, unknown> },
          ...carried,
        }
      if (relay !== undefined) {
        return {
          relay: {
            inputResponses: { ...(inputResponses ?? {}) } as Record<string, unknown>,
            ...(relay.state !== undefined ? { requestState: relay.state } : {}),
          },
          ...carried,
        }
      }
      // admit read the direct ask's answer before the state was spent.
      if (direct === undefined)
        throw new ProtocolError(
          JsonRpcCode.InternalError,
          'tools/call: an approval state was admitted without its answer',
        )
      return { outcome: direct, asked: opened.state.asked }
    }
    /** A kept program's waiting sub-calls, asked of the client; the state names the program. */
    const keptQuestion = (pause: KeptPause, bound: { subject: string; tool: string; args: string }, callId: string) =>
      inputRequired({
        inputRequests: Object.fromEntries(
          pause.waiting.map((request, index) => [keptInputKey(index), inputRequired.elicit(approvalQuestion(request))]),
        ) as never,
        requestState: seal.seal({
          ...bound,
          asked: pause.waiting[0]?.toolName ?? bound.tool,
          callId,
          kept: { turn: pause.turnId, calls: pause.waiting.map((request) => request.callId) },
        }),
      })
    /** A retry answering a kept program's approvals: the decisions recorded, the program continued. */
    const keptRetry = async (
      kept: KeptProgramRef & { decisions: Record<string, ApprovalOutcome> },
      params: CallParams,
      bound: { subject: string; tool: string; args: string },
      rc: ModernRequestContext,
    ): Promise<unknown> => {
      if (programs === undefined)
        throw new ProtocolError(
          JsonRpcCode.InvalidParams,
          'tools/call: requestState refused: this gateway keeps no programs',
        )
      const round = await programs.answer({
        turnId: kept.turn,
        calls: kept.calls,
        decisions: kept.decisions,
        ...(authInfo === undefined ? {} : { authInfo }),
        arguments: params.arguments ?? {},
        signal: rc.mcpReq.signal,
      })
      if ('refused' in round)
        throw new ProtocolError(JsonRpcCode.InvalidParams, `tools/call: requestState refused: ${round.refused}`)
      if ('paused' in round) return keptQuestion(round.paused, bound, `mcp-r-${++serial}`)
      const definition = methods.get.call(tools, params.name, scope())
      return project(
        toCallToolResult(round.result, definition),
        outputSchemaOf(definition) as Record<string, unknown> | undefined,
      )
    }
    const toolsList = async () => {
      await modernDemand()
      return { tools: listTools(tools, scope(), 'modern') as never }
    }
    const toolsCall = async (
      request: { params: { name: string; arguments?: Record<string, unknown>; _meta?: unknown } },
      rc: ModernRequestContext,
    ): Promise<unknown> => {
      await modernDemand()
      const agent = scope()
      const params = callParams(request.params)
      const bound = {
        subject: identityOf(authInfo)?.subject ?? '',
        tool: params.name,
        args: argumentsDigest(params.arguments),
      }
      // A retry carries the person's answer and the state sealed when they were asked.
      const wire = rc.mcpReq.requestState()
      const carried = wire === undefined ? undefined : await retried(rc, wire, bound)
      if (carried !== undefined && 'kept' in carried) return keptRetry(carried.kept, params, bound, rc)
      // This round's approval: the person's answer, or the one an earlier round of this call was
      // given (sealed in the state), so a retry carrying the upstream's input is not asked again.
      const answer =
        carried === undefined ? undefined : 'outcome' in carried ? carried : stillApproved(carried.approved)
      const approved = approvalToCarry(answer, authInfo?.clientId)
      const declared = (rc.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY]
      const call: ModernCall = {
        clientCapabilities: isRecord(declared) ? declared : {},
        ...(carried !== undefined && 'relay' in carried ? { retry: carried.relay } : {}),
        ...(carried !== undefined && 'resume' in carried ? { resume: carried.resume } : {}),
      }
      const callId = `mcp-r-${++serial}`
      const token = rc.mcpReq._meta?.progressToken
      if (token !== undefined) progress.start(callId, token, (notification) => rc.mcpReq.notify(notification))
      const stopLogs = forwardLogs(logging, rc)
      // Asking ends this round: the call stops (a Code Mode program goes no further) and the retry decides.
      const asking = new AbortController()
      let asked: ApprovalRequest | undefined
      // A run_code program whose sub-calls ask is kept in the store; its approvals go to the client.
      // Also on the retry that answered an ask about run_code itself: that answer allows the program's
      // own call, and its sub-calls' asks are kept rounds of their own.
      let kept: KeptPause | undefined
      try {
        const elicits = declaresElicitation(rc, instanceCapabilities)
        const keeper =
          programs !== undefined && elicits && !hostApproves(ctx, agent) && programs.keeps(params.name, agent, authInfo)
            ? {
                keeps: () => true,
                run: async (...args: Parameters<KeptProgramRounds['run']>) => {
                  const round = await programs.run(...args)
                  if ('paused' in round) kept = round.paused
                  return 'paused' in round ? keptPlaceholder : round.result
                },
              }
            : undefined
        const approval: ApprovalService | undefined = hostApproves(ctx, agent)
          ? undefined
          : answer !== undefined
            ? answered(answer.outcome, answer.asked)
            : elicits
              ? {
                  request: async (question) => {
                    // Without a keeper, a Code Mode sub-call's ask would re-run the program's earlier
                    // sub-calls on the retry: it is denied inside the program, as when nobody can be asked.
                    if (question.parentCallId !== null)
                      return { kind: 'denied', reason: `${NESTED_ASK} (${question.toolName})` }
                    if (asked !== undefined) return { kind: 'denied', reason: 'one approval is asked per round' }
                    asked = question
                    asking.abort()
                    return { kind: 'cancelled', reason: 'put to the MCP client as an input-required result' }
                  },
                }
              : denied
        const signal = AbortSignal.any([rc.mcpReq.signal, asking.signal])
        const result = await runModernCall(call, () =>
          runToolCall(tools, methods, params, callId, signal, agent, approval, keeper, authInfo),
        )
        if (kept !== undefined) return keptQuestion(kept, bound, callId)
        // An upstream's refusal or question goes to the client as the upstream said it.
        const relayed = upstreamAnswer(call, bound, callId, approved)
        if (relayed !== undefined) return relayed
        if (call.held !== undefined)
          return inputRequired({
            inputRequests: call.held.inputRequests as never,
            requestState: seal.seal({
              ...bound,
              asked: params.name,
              callId,
              held: call.held.key,
              ...(approved === undefined ? {} : { approved }),
            }),
          })
        if (asked !== undefined)
          return inputRequired({
            inputRequests: { [APPROVAL_INPUT]: inputRequired.elicit(approvalQuestion(asked)) },
            requestState: seal.seal({ ...bound, asked: asked.toolName, callId }),
          })
        return project(
          result as CallToolResult,
          outputSchemaOf(methods.get.call(tools, params.name, agent)) as Record<string, unknown> | undefined,
        )
      } finally {
        progress.end(callId)
        stopLogs()
      }
    }
    /** A 2026 client's prompts/get as the upstream link sees it, its retry's state opened and bound. */
    const promptCall = async (rc: ModernRequestContext, params: unknown) => {
      const { name, arguments: args } = (isRecord(params) ? params : {}) as { name?: unknown; arguments?: unknown }
      const bound = {
        subject: identityOf(authInfo)?.subject ?? '',
        tool: `prompt ${String(name)}`,
        args: argumentsDigest(args),
      }
      const wire = rc.mcpReq.requestState()
      const carried = wire === undefined ? undefined : await retried(rc, wire, bound)
      const declared = (rc.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY]
      const call: ModernCall = {
        clientCapabilities: isRecord(declared) ? declared : {},
        ...(carried !== undefined && 'relay' in carried ? { retry: carried.relay } : {}),
      }
      return { call, bound }
    }
    /** What the upstream answered a 2026 client's request with, to go to the client as it is. */
    const upstreamAnswer = (
      call: ModernCall,
      bound: { subject: string; tool: string; args: string },
      callId: string,
      approved?: CarriedApproval,
    ): unknown => {
      if (call.rpcError !== undefined) {
        const { code, message, data } = call.rpcError
        if (
          code === JsonRpcCode.MissingRequiredClientCapability &&
          isRecord(data) &&
          isRecord(data.requiredCapabilities)
        )
          throw new MissingRequiredClientCapabilityError({ requiredCapabilities: data.requiredCapabilities }, message)
        throw new ProtocolError(code, message, data)
      }
      if (call.inputRequired === undefined) return undefined
      return inputRequired({
        inputRequests: call.inputRequired.inputRequests as never,
        requestState: seal.seal({
          ...bound,
          asked: bound.tool,
          callId,
          relay: call.inputRequired.requestState === undefined ? {} : { state: call.inputRequired.requestState },
          ...(approved === undefined ? {} : { approved }),
        }),
      })
    }
    return { toolsList, toolsCall, promptCall, upstreamAnswer }
  }

  const build = (authInfo: AuthInfo | undefined): Server => {
    // The deprecated low-level server: the gateway's handlers are its own, not McpServer's registrations.
    const server = new Server(info, { capabilities, jsonSchemaValidator: validator })
    const { toolsList, toolsCall, promptCall, upstreamAnswer } = handlersFor(
      authInfo,
      (result, outputSchema) => server.projectCallToolResult(result, outputSchema),
      () => server.getClientCapabilities(),
    )
    server.setRequestHandler('tools/list', toolsList)
    server.setRequestHandler('tools/call', async (request, rc) => (await toolsCall(request, rc)) as never)
    const contextOf = (rc: ServerContext): McpServeContext => ({
      signal: rc.mcpReq.signal,
      ...(authInfo === undefined ? {} : { authInfo }),
      confirm: async () => ({ approved: false, reason: NO_CONFIRM }),
    })
    for (const [method, body] of Object.entries(catalogBodies)) {
      const run = body as (params: unknown, context: McpServeContext) => Promise<never>
      server.setRequestHandler(method as 'resources/list', async (request: { params?: unknown }, rc) => {
        const stopLogs = forwardLogs(logging, rc)
        // An upstream's prompt may ask the client for input: its answer passes through as for a tool.
        const prompt = method === 'prompts/get' ? await promptCall(rc, request.params) : undefined
        try {
          if (method === 'prompts/list' || method === 'prompts/get') await modernDemand()
          if (prompt === undefined) return await run(request.params, contextOf(rc))
          return await runModernCall(prompt.call, () => run(request.params, contextOf(rc)))
        } catch (error) {
          if (prompt !== undefined) {
            const relayed = upstreamAnswer(prompt.call, prompt.bound, `${method}:${prompt.bound.tool}`)
            if (relayed !== undefined) return relayed as never
          }
          const { code, message, data } = error as { code: number; message: string; data?: unknown }
          throw new ProtocolError(code, message, data)
        } finally {
          stopLogs()
        }
      })
    }
    return wrap ? wrap(server) : server
  }
  return {
    build,
    handlers: (authInfo) => handlersFor(authInfo, projectModernCallResult, () => undefined),
    close: () => progress.close(),
  }
}

/** One leg per endpoint: each request gets its own server from the endpoint's {@link modernServers}. */
export function createModernHttpLeg(ctx: Context, options: ModernHttpOptions): ModernHttpLeg {
  const { catalog } = options
  const servers = modernServers(ctx, options, 'createModernHttpLeg')
  const build = (authInfo: AuthInfo | undefined) => servers.build(authInfo) as Server

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

  // A request found fit for the fast path while classifying it, until handle() takes it.
  const fit = new WeakMap<IncomingMessage, FastRequest>()
  // What `wrap` does to a per-request server's answers the fast path cannot know, unless told (`acknowledged`).
  const fast = options.fastPath !== false && (options.wrap === undefined || options.acknowledged !== undefined)
  const serverInfo = { name: options.name, version: options.version }
  return {
    isModern: async (req, body) => {
      const request = fast ? fastRequest(req, body) : undefined
      if (request === undefined) return isModernRequest(req, body)
      fit.set(req, request)
      return true
    },
    handle: async (req, res, body) => {
      const request = fit.get(req) ?? (fast ? fastRequest(req, body) : undefined)
      if (request === undefined) return node(req, res, body)
      fit.delete(req)
      const authInfo = (req as IncomingMessage & { auth?: AuthInfo }).auth
      if (!(await answerFast(servers.handlers(authInfo), res, request, serverInfo, options.acknowledged)))
        await node(req, res, body)
    },
    async close() {
      if (closed) return
      closed = true
      stopTools()
      if (typeof stopCatalog === 'function') stopCatalog()
      servers.close()
      await handler.close()
    },
  }
}

/**
 * The gateway's log messages at or above the level the request's envelope asks for, sent on the
 * request's own stream while it runs; none when it asks for none. Returns how to stop.
 */
function forwardLogs(logging: McpServerLogging | undefined, rc: ModernRequestContext): () => void {
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

/** Whether the request's client can be asked: its envelope's capabilities (per request), else the instance's. */
function declaresElicitation(
  rc: ModernRequestContext,
  instanceCapabilities: () => { elicitation?: unknown } | undefined,
): boolean {
  const declared = (rc.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY]
  if (typeof declared === 'object' && declared !== null) return 'elicitation' in declared
  return instanceCapabilities()?.elicitation !== undefined
}
