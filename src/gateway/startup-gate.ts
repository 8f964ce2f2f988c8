// `toolgate serve` over stdio reads its client while the upstream servers are still starting: the
// client's `initialize` is answered as soon as what the gateway will declare is known, `ping` at
// once, and everything else waits, in order, for the gateway's MCP server, which can only be made
// once every upstream was tried. The client's handshake then overlaps the upstreams' start instead
// of following it. The capabilities the client declares in that `initialize` are what the gateway
// declares to its upstreams, so their own `initialize` waits for it.
// The first message also chooses the connection's era: one whose `_meta` claims a protocol version
// (MCP 2026-07-28's per-request envelope) opens a 2026 connection, anything else a 2025 one.
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, specTypeSchemas } from '@modelcontextprotocol/server'
import type {
  ClientCapabilities,
  JSONRPCMessage,
  McpServerFeatures,
  McpTransport,
  McpMessageExtra as MessageExtraInfo,
  RequestId,
  ServerCapabilities,
} from '../mcp/gateway.js'
import { isRecord } from '../util/is-record.js'
import { earlyCapabilities } from './early-capabilities.js'
import type { GatewayStartup } from './gateway.js'
import { warmWhileIdle } from './startup-warmups.js'

export { earlyCapabilities }

/** What the server made later announces of itself, known before it exists. */
export interface StartupGateOptions {
  readonly serverInfo: { readonly name: string; readonly version: string }
  readonly instructions?: string
  /** The client's requests the CLI's first listing answered already (see raw-first.ts), by their place. */
  readonly answered?: { readonly initialize: number; readonly list?: number; readonly tools?: string }
  /** Tells the transport a request of the client's was answered outside it. */
  readonly answeredElsewhere?: (id: RequestId) => void
}

type Id = string | number
/** The era a stdio connection speaks, chosen by its first message. */
export type StdioEra = 'modern' | 'legacy'

/** The envelope key of MCP 2026-07-28 that claims the request's protocol version. */
const PROTOCOL_VERSION_CLAIM = 'io.modelcontextprotocol/protocolVersion'
/** The envelope key of the client's capabilities for this request. */
const CLIENT_CAPABILITIES_CLAIM = 'io.modelcontextprotocol/clientCapabilities'
interface Held {
  readonly message: JSONRPCMessage
  readonly extra: MessageExtraInfo | undefined
}

/**
 * Wraps the server's transport from the moment the process starts until the MCP server is
 * connected to it (`server.connect(gate)`): then the held messages go to the server in the order
 * they came, the one `initialize` already answered among them (its second answer is dropped), and
 * the transport's events are handed to the server directly, so nothing stands between them after.
 */
/** The `initialize` request's params as the gate reads them (the SDK's schema checked them). */
interface InitializeRequest {
  params: { protocolVersion: string; capabilities: ClientCapabilities }
}

export class StartupGate implements McpTransport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void

  /** Messages for the server, in order. */
  private held: Held[] = []
  /** The first `initialize`, once it is known to be valid, until it is answered. */
  private waiting: { id: Id; request: InitializeRequest } | undefined
  private answered = false
  private capabilities: ServerCapabilities | undefined
  /** The id the replayed `initialize` carries, whose answer the client must not get twice. */
  private replayId: string | undefined
  private ended = false
  private endedListeners: (() => void)[] = []
  /** What the client declared in its first request, once it came (see clientCapabilities). */
  private declared: ClientCapabilities | undefined
  private declaredListeners: ((capabilities: ClientCapabilities) => void)[] = []
  /** How many messages the client sent so far (see StartupGateOptions.answered). */
  private position = 0
  /** The replayed `tools/list` the first listing answered, and the JSON of the tools it listed. */
  private listReplay: { id: string; tools: string } | undefined
  /** The connection's era once its first message came; undefined before, and for a client gone silent. */
  private chosen: StdioEra | undefined
  private eraListeners: ((era: StdioEra | undefined) => void)[] = []

  constructor(
    readonly inner: McpTransport,
    private readonly options: StartupGateOptions,
    /** The transport's reports (a refused line) while nothing else listens. */
    private readonly report: (error: Error) => void,
  ) {}

  /** Start reading the client. */
  async open(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.early(message, extra)
    this.inner.onerror = this.report
    this.inner.onclose = () => {
      this.ended = true
      for (const listener of this.endedListeners.splice(0)) listener()
      for (const listener of this.eraListeners.splice(0)) listener(this.chosen)
      // A client gone before it said anything declared nothing.
      this.noteDeclared({})
    }
    await this.inner.start()
  }

  /**
   * The era the client's first message chose; undefined when it went before sending any. A message
   * whose `_meta` carries the 2026-07-28 version claim opens a 2026 connection, whose claim the
   * SDK's stdio entry then checks (a malformed or unsupported one is answered there).
   */
  era(): Promise<StdioEra | undefined> {
    if (this.chosen !== undefined || this.ended) return Promise.resolve(this.chosen)
    return new Promise((resolve) => this.eraListeners.push(resolve))
  }

  private choose(message: JSONRPCMessage): void {
    if (this.chosen !== undefined || !('method' in message)) return
    const meta = isRecord(message.params) ? message.params._meta : undefined
    const modern = isRecord(meta) && PROTOCOL_VERSION_CLAIM in meta
    this.chosen = modern ? 'modern' : 'legacy'
    if (modern) {
      const declared = meta[CLIENT_CAPABILITIES_CLAIM]
      this.noteDeclared(isRecord(declared) ? (declared as ClientCapabilities) : {})
    }
    for (const listener of this.eraListeners.splice(0)) listener(this.chosen)
  }

  /** Whether the client has gone (stdin ended, or the transport failed) before the server was connected. */
  get clientGone(): boolean {
    return this.ended
  }

  /** Resolves when the client goes before the server was connected. */
  whenClientGone(): Promise<void> {
    if (this.ended) return Promise.resolve()
    return new Promise((resolve) => this.endedListeners.push(resolve))
  }

  /**
   * The capabilities the client declared in its `initialize`. A first request that is not a valid
   * `initialize`, or a client gone before any, declared nothing: the gateway then goes on starting
   * (and the server refuses what it must) rather than wait for an `initialize` that may never come.
   */
  clientCapabilities(): Promise<ClientCapabilities> {
    if (this.declared !== undefined) return Promise.resolve(this.declared)
    return new Promise((resolve) => this.declaredListeners.push(resolve))
  }

  private noteDeclared(capabilities: ClientCapabilities): void {
    if (this.declared !== undefined) return
    this.declared = capabilities
    for (const listener of this.declaredListeners.splice(0)) listener(capabilities)
  }

  /** What the server will declare: a held `initialize` is answered now. */
  declare(capabilities: ServerCapabilities): void {
    this.capabilities = capabilities
    this.answerInitialize()
  }

  private early(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    const at = this.position++
    this.choose(message)
    // A 2026 connection has no `initialize` nor `ping`: everything waits for its server, in order.
    if (this.chosen === 'modern') {
      this.held.push({ message, extra })
      return
    }
    if (this.answeredBefore(message, extra, at)) return
    if ('method' in message) {
      if ('id' in message) {
        if (message.method === 'ping') {
          void this.inner.send({ jsonrpc: '2.0', id: message.id, result: {} })
          return
        }
        if (message.method === 'initialize' && !this.answered && this.waiting === undefined) {
          // Only a request the server would take is answered for it; any other is its to refuse.
          const parsed = specTypeSchemas.InitializeRequest['~standard'].validate({
            method: message.method,
            params: message.params,
          })
          if (parsed.issues === undefined) {
            const request = parsed.value as InitializeRequest
            this.noteDeclared(request.params.capabilities)
            this.waiting = { id: message.id, request }
            this.replayId = `toolgate-startup-${Date.now()}-${Math.random().toString(36).slice(2)}`
            this.held.push({ message: { ...message, id: this.replayId }, extra })
            this.answerInitialize()
            return
          }
        }
        this.noteDeclared({})
      } else if (message.method === 'notifications/cancelled' && isRecord(message.params)) {
        // A request cancelled while it waited is never delivered, and so never answered.
        const { requestId } = message.params
        const at = this.held.findIndex(
          (h) =>
            'method' in h.message && 'id' in h.message && h.message.id === requestId && h.message.id !== this.replayId,
        )
        if (at !== -1) {
          this.held.splice(at, 1)
          return
        }
      }
    }
    this.held.push({ message, extra })
  }

  /**
   * A request the first listing answered: the server gets it all the same (under an id of the
   * gate's, whose answer the client does not get again), and the transport learns it was answered.
   */
  private answeredBefore(message: JSONRPCMessage, extra: MessageExtraInfo | undefined, at: number): boolean {
    const answered = this.options.answered
    if (answered === undefined || !('method' in message) || !('id' in message)) return false
    if (at === answered.initialize && message.method === 'initialize' && !this.answered && this.waiting === undefined) {
      const params = isRecord(message.params) ? message.params : {}
      this.noteDeclared(isRecord(params.capabilities) ? (params.capabilities as ClientCapabilities) : {})
      this.answered = true
      this.replayId = `toolgate-startup-${Date.now()}-${Math.random().toString(36).slice(2)}`
      this.held.push({ message: { ...message, id: this.replayId }, extra })
      this.options.answeredElsewhere?.(message.id)
      return true
    }
    if (at === answered.list && message.method === 'tools/list' && answered.tools !== undefined) {
      const id = `toolgate-startup-list-${Date.now()}-${Math.random().toString(36).slice(2)}`
      this.listReplay = { id, tools: answered.tools }
      this.held.push({ message: { ...message, id }, extra })
      this.options.answeredElsewhere?.(message.id)
      return true
    }
    return false
  }

  private answerInitialize(): void {
    const { waiting, capabilities } = this
    if (waiting === undefined || capabilities === undefined) return
    this.waiting = undefined
    this.answered = true
    const requested = waiting.request.params.protocolVersion
    // As the SDK's server negotiates: the client's version when supported, else the latest.
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION
    const { serverInfo, instructions } = this.options
    void this.inner.send({
      jsonrpc: '2.0',
      id: waiting.id,
      result: {
        protocolVersion,
        capabilities,
        serverInfo: { ...serverInfo },
        ...(instructions ? { instructions } : {}),
      },
    })
  }

  // The Transport the server is connected to.

  async start(): Promise<void> {
    const { inner } = this
    const held = this.held
    this.held = []
    // From now on the transport talks to the server itself.
    inner.onmessage = this.onmessage
    inner.onerror = this.onerror
    inner.onclose = this.onclose
    this.direct()
    for (const { message, extra } of held) this.onmessage?.(message, extra)
    // The client went (every request it sent answered) before the server was connected: the server
    // learns it now, or it would wait for an end that already came.
    if (this.ended) queueMicrotask(() => this.onclose?.())
  }

  send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (!('method' in message) && 'id' in message) {
      if (this.replayId !== undefined && message.id === this.replayId) {
        // The client already has its answer; the server's own is the same (see earlyCapabilities).
        this.replayId = undefined
        this.direct()
        return Promise.resolve()
      }
      const list = this.listReplay
      if (list !== undefined && message.id === list.id) {
        // The client has the first listing's answer: a server that lists otherwise says so.
        this.listReplay = undefined
        this.direct()
        const result = 'result' in message && isRecord(message.result) ? message.result : undefined
        if (result !== undefined && JSON.stringify(result.tools) === list.tools) return Promise.resolve()
        return this.inner.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
      }
    }
    return this.inner.send(message, options)
  }

  /** Once no replayed answer is due, the server's messages go to the transport as they are. */
  private direct(): void {
    if (this.replayId === undefined && this.listReplay === undefined)
      this.send = (message, options) => this.inner.send(message, options)
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}

/**
 * The hooks for `openGateway` that declare the capabilities on `gate` once every upstream in
 * `names` has initialized or ended its first attempt down (at once when there is none).
 */
export function declareWhenKnown(gate: StartupGate, names: readonly string[]): GatewayStartup {
  const known = new Map<string, McpServerFeatures | undefined>()
  let stopWarming: (() => void) | undefined
  const note = (name: string, features: McpServerFeatures | undefined) => {
    // The first answer is the critical path again: nothing more is warmed.
    stopWarming?.()
    if (known.has(name) || known.size === names.length) return
    known.set(name, features)
    if (known.size !== names.length) return
    const capabilities = earlyCapabilities(names.map((n) => known.get(n)))
    // Declared on the next turn: an upstream that just initialized is asked for its lists first
    // (in this turn's microtasks), so it works on them while the client's answer is written and
    // read. The client's next requests wait for those lists anyway.
    setImmediate(() => gate.declare(capabilities))
  }
  if (names.length === 0) gate.declare(earlyCapabilities([]))
  return {
    clientCapabilities: () => gate.clientCapabilities(),
    // Until the first upstream answers, the SDK's parsers for what comes next are generated.
    idle: () => {
      if (names.length > 0 && known.size < names.length) stopWarming = warmWhileIdle()
    },
    opened: (name, features) => note(name, features),
    settled: (name, connection) =>
      note(name, connection.state.status === 'connected' ? connection.features : undefined),
  }
}
