// connectMcpServer(): a remote MCP server's tools as ordinary toolgate registrations, so every
// policy (guards, approvals, timeouts, Code Mode) applies to them as to native tools.
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Context } from 'cordis'
import type { ContentBlock } from '../../contract/content.js'
import type { Agent, ToolRunContext } from '../../contract/execution.js'
import type { JsonSchemaNode } from '../../contract/json-schema.js'
import type { JsonObject, JsonValue } from '../../contract/json-value.js'
import type { ToolDefinition } from '../../contract/tool-definition.js'
import { ConfigError } from '../../errors/config-error.js'
import { ToolgateError } from '../../errors/toolgate-error.js'
import { snapshotJsonValue } from '../../json/index.js'
import { assertSupportedJsonSchema } from '../../schema/assert.js'
import type {
  McpCapabilityHandlers,
  McpElicitationHandler,
  McpRootsHandler,
  McpSamplingHandler,
  McpUrlElicitationHandler,
} from '../protocol/capability-handlers.js'
import { fromMcpContent } from '../protocol/content.js'
import { type ModernCall, modernCall, onModernDemand } from '../protocol/era-call.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { McpListKind } from '../protocol/list-kind.js'
import { MCP_LOG_LEVELS, type McpLogLevel, type McpLogMessage } from '../protocol/logging.js'
import { DEFAULT_MAX_MESSAGE_BYTES } from '../protocol/message-limit.js'
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  McpOAuthProvider,
  McpTransport,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from '../protocol/wire-types.js'
import { samplingWithTools } from './capabilities.js'
import type { FastRequests } from './fast-request.js'
import { importedToolParts } from './imported-tool.js'
import { UpstreamInputBridge } from './input-bridge.js'
import type { LegacyClient } from './legacy-session.js'
import type { ModernSession } from './modern-session.js'
import { sdkStdioTransport } from './sdk-stdio-transport.js'
import type { McpSessionPartition, PartitionedSessions } from './session-partition.js'
import { McpRequestError, type McpRequestOptions, type McpServerFeatures, UpstreamCatalog } from './upstream-catalog.js'
import { type McpProtocolEra, refusesLegacyEra, type UpstreamClient } from './upstream-client.js'

/** A server to connect to: a command over stdio, a Streamable HTTP URL, or a ready transport. */
export type McpServerSpec =
  | {
      /** Executable to spawn; it speaks MCP on its stdin/stdout. */
      readonly command: string
      readonly args?: readonly string[]
      /** Added to a minimal inherited environment (PATH, HOME, …). */
      readonly env?: Readonly<Record<string, string>>
      readonly cwd?: string
    }
  | {
      /** Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
      readonly url: string
      readonly headers?: Readonly<Record<string, string>>
      /**
       * OAuth for this server (the SDK's provider): a token is asked for when the server answers
       * 401. `createMcpOAuthProvider()` makes one for the grants that need no person.
       */
      readonly authProvider?: McpOAuthProvider
      /**
       * Headers worked out for each request (after `headers`), asked once more after a 401; for
       * http(s) URLs.
       */
      readonly headerProvider?: (
        refused?: Readonly<Record<string, string>>,
      ) => Promise<Readonly<Record<string, string>>>
      /**
       * Tool calls made in sessions of their own, one per partition (e.g. per caller), each with the
       * partition's headers; the shared session still lists the tools. For http(s) URLs.
       */
      readonly partition?: McpSessionPartition
    }
  | {
      /** A transport you built; it cannot be reopened, so there is no reconnect after it closes. */
      readonly transport: McpTransport
    }

/** Options of {@link connectMcpServer}. */
export interface ConnectMcpServerOptions {
  /** Prepended to every remote tool name (default none). */
  readonly prefix?: string
  /** Register into this agent's scope instead of the global layer. */
  readonly agent?: Agent
  /**
   * A call that receives neither its result nor a progress notification for this long fails and the
   * connection is dropped (it reconnects on the next call). Default 60 000 ms.
   */
  readonly requestTimeoutMs?: number
  /**
   * Largest message read from a server, in bytes (default 10 MiB, the SDK's stdio limit): a stdio
   * line, an HTTP JSON body or one event's data. A larger one is not read to its end; it drops the
   * connection and fails the call it answered with an error that says so.
   */
  readonly maxMessageBytes?: number
  /**
   * What every message and warning calls the server (default: the command's file name, the URL
   * without credentials or query, or "custom transport"). Arguments, environment and headers never
   * appear in a message.
   */
  readonly name?: string
  /**
   * Keep the server's tools available across outages. When the server cannot be started or
   * reached, or dies and cannot be restarted at once, its tools are unregistered and it is retried
   * with exponential backoff (a delay doubling from `initialDelayMs` up to `maxDelayMs`, each
   * drawn between half and all of it); once it answers its tools are registered again.
   * `connectMcpServer` then resolves after the first attempt, whatever its outcome (see `state`).
   * `true` means the defaults, 1 000 and 60 000 ms. Default: off (a failed first connection rejects).
   * Not available for a `{ transport }` server, which cannot be reopened.
   */
  readonly reconnect?: boolean | McpReconnectOptions
  /** Called on every change of {@link McpConnection.state} (with `reconnect`). */
  readonly onStateChange?: (state: McpConnectionState) => void
  /**
   * Called each time a session with the server has initialized, before its lists are read, with
   * what it declared and the server's name (`name`).
   */
  readonly onOpened?: (features: McpServerFeatures, server: string) => void
  /**
   * Called for a remote tool that cannot be registered (its prefixed name is taken, its schema is
   * unusable) instead of emitting an `McpConnectionWarning`.
   */
  readonly onToolSkipped?: (skipped: McpSkippedTool) => void
  /**
   * Called for each log message the server sends (`notifications/message`), with the server's
   * name (`name`). Default: the messages are ignored.
   */
  readonly onLog?: (message: McpLogMessage, server: string) => void
  /**
   * Answers the server's `elicitation/create` requests (form mode); without it the capability is not
   * declared and the server's request fails. Accepted content gets the requested schema's defaults
   * for the fields it leaves out.
   */
  readonly elicitation?: McpElicitationHandler
  /**
   * Answers the server's URL-mode `elicitation/create`; without it URL mode is not declared and the
   * server's request fails.
   */
  readonly urlElicitation?: McpUrlElicitationHandler
  /** Called when the server says a URL-mode elicitation finished (`notifications/elicitation/complete`). */
  readonly onElicitationComplete?: (elicitationId: string, server: string) => void
  /** Answers the server's `sampling/createMessage`; without it the capability is not declared. */
  readonly sampling?: McpSamplingHandler
  /**
   * Whether {@link sampling} also answers requests that offer the model tools (`tools`,
   * `toolChoice`) and may answer with tool uses: declared as `sampling: { tools: {} }`. Without it
   * the server may not offer tools. Needs a `sampling` handler.
   */
  readonly samplingTools?: boolean
  /** Answers the server's `roots/list`; without it the capability is not declared. */
  readonly roots?: McpRootsHandler
  /**
   * Called with the URI of each `notifications/resources/updated` the server sends (it sends them
   * for the URIs subscribed with {@link McpConnection.subscribeResource}).
   */
  readonly onResourceUpdated?: (uri: string, server: string) => void
  /**
   * Called after the server's resources (and templates) or prompts were listed again and changed:
   * on its `list_changed` notifications, after a reconnect, and when it goes down (then empty).
   */
  readonly onListChanged?: (kind: McpListKind, server: string) => void
}

/** The backoff of {@link ConnectMcpServerOptions.reconnect}. */
export interface McpReconnectOptions {
  /** Delay before the first retry, in ms (default 1 000). */
  readonly initialDelayMs?: number
  /** The longest delay between retries, in ms (default 60 000). */
  readonly maxDelayMs?: number
}

/** Whether the server's tools are registered, and if not why and when it is tried again. */
export type McpConnectionState =
  | { readonly status: 'connected' }
  | { readonly status: 'down'; readonly error: string; readonly retryInMs: number }
  | { readonly status: 'closed' }

/** A remote tool that was not registered. */
export interface McpSkippedTool {
  /** Its name on the server. */
  readonly tool: string
  /** The prefixed name it would have had. */
  readonly name: string
  /** Why it was not registered. */
  readonly reason: string
}

/** Options of {@link McpConnection.getPrompt}. */
export interface McpPromptRequestOptions extends McpRequestOptions {
  /**
   * Who answers what the server asks to finish this prompt (elicitation, sampling, roots): a
   * gateway gives the handlers of the client that asked for it (`McpServeContext.input`).
   */
  readonly input?: McpCapabilityHandlers
}

/** A live connection; its tools are registered while it is open. */
export interface McpConnection {
  /** The registered (prefixed) tool names, in the server's order. */
  readonly tools: readonly string[]
  /** The prefix given to the remote names. */
  readonly prefix: string
  /** Whether a session to the server is open right now (calls reconnect when it is not). */
  readonly connected: boolean
  /** `down` only with the `reconnect` option: the server is unreachable and its tools are unregistered. */
  readonly state: McpConnectionState
  /** Re-list the server's tools and update the registrations. */
  refresh(): Promise<void>
  /** What the server declared besides tools (all false until a session opened). */
  readonly features: McpServerFeatures
  /** The server's resources as last listed (empty when it declared none or is down). */
  readonly resources: readonly Resource[]
  /** The server's resource templates as last listed. */
  readonly resourceTemplates: readonly ResourceTemplate[]
  /** The server's prompts as last listed, under the server's own names (the prefix is for tools). */
  readonly prompts: readonly Prompt[]
  /**
   * `resources/read`. Rejects with an `McpRequestError` carrying the server's JSON-RPC error
   * (or -32601 when the server declared no resources).
   */
  readResource(uri: string, options?: McpRequestOptions): Promise<ReadResourceResult>
  /**
   * `resources/subscribe`: the server then sends updates for `uri` to `onResourceUpdated`. The
   * subscription is sent again to every new session after a reconnect.
   */
  subscribeResource(uri: string): Promise<void>
  /** `resources/unsubscribe` of a URI subscribed before (otherwise nothing is sent). */
  unsubscribeResource(uri: string): Promise<void>
  /**
   * `prompts/get` of one of the server's prompts, by its own name. A server of MCP 2026-07-28 that
   * answers with input required is answered through `options.input` (else the connection's
   * handlers) and asked again, round after round.
   */
  getPrompt(
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: McpPromptRequestOptions,
  ): Promise<GetPromptResult>
  /** `completion/complete` for an argument of a prompt (its own name) or a resource template. */
  complete(params: CompleteRequest['params'], options?: McpRequestOptions): Promise<CompleteResult>
  /**
   * Ask the server for log messages at `level` and above (`logging/setLevel`), when it declared
   * the logging capability (otherwise nothing is sent). The level is sent again after a reconnect.
   */
  setLogLevel(level: McpLogLevel): Promise<void>
  /**
   * Tell the server its roots changed (`notifications/roots/list_changed`), when a `roots` handler
   * was given and a session is open; the server then asks `roots/list` again.
   */
  notifyRootsChanged(): Promise<void>
  /** Close the session and remove every registration. Idempotent. */
  close(): Promise<void>
}

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000
/** The signal of a request nothing cancels but its timeout (a listing). */
const NEVER_ABORTED = new AbortController().signal
/**
 * How long a call given up on before the server answered still counts as possibly running there
 * (at least the request timeout): as long as a person may take to answer the relay's elicitation.
 */
const ABANDONED_CALL_MS = 10 * 60_000
/** Abandoned calls remembered per connection; the oldest is forgotten past this. */
const MAX_ABANDONED_CALLS = 1000

/** Output schema of an imported tool's canonical value. */
const extras: Record<string, JsonSchemaNode> = {
  annotations: { description: 'Audience, priority and lastModified hints, as the server sent them.' },
  _meta: { type: 'object', description: 'Metadata the server attached to the block.' },
}
const str: JsonSchemaNode = { type: 'string' }
const block = (type: string, properties: Record<string, JsonSchemaNode>, required: string[]): JsonSchemaNode => ({
  type: 'object',
  properties: { type: { const: type }, ...properties, ...extras },
  required: ['type', ...required],
  additionalProperties: false,
})
const resourceContents = (body: 'text' | 'blob'): JsonSchemaNode => ({
  type: 'object',
  properties: { uri: str, mediaType: str, [body]: str, _meta: extras._meta },
  required: ['uri', body],
  additionalProperties: false,
})
// A frozen snapshot: every imported tool's output schema embeds it, and a snapshot is not copied again.
const contentSchema = snapshotJsonValue(
  {
    type: 'array',
    description: 'The content blocks the server returned.',
    items: {
      oneOf: [
        block('text', { text: str }, ['text']),
        block('image', { mediaType: str, data: str }, ['mediaType', 'data']),
        block('audio', { mediaType: str, data: str }, ['mediaType', 'data']),
        block(
          'resource-link',
          {
            uri: str,
            name: str,
            title: str,
            description: str,
            mediaType: str,
            size: { type: 'number' },
            icons: { type: 'array', items: { type: 'object' } },
          },
          ['uri', 'name'],
        ),
        block('resource', { resource: { oneOf: [resourceContents('text'), resourceContents('blob')] } }, ['resource']),
      ],
    },
  },
  'contentSchema',
) as JsonSchemaNode

/** The value an imported tool resolves with. */
interface ImportedValue {
  content: ContentBlock[]
  structuredContent?: JsonValue
  _meta?: JsonValue
}

/**
 * A remote tool failed: the server answered `isError: true`, closed, or timed out. An `isError`
 * answer's own blocks (images, resources, annotations, not only its text) ride `content`, and so
 * become the failed call's content.
 */
export class McpToolError extends ToolgateError {
  readonly code = 'MCP_TOOL_ERROR' as const
  declare readonly content?: readonly ContentBlock[]
  constructor(message: string, content?: readonly ContentBlock[]) {
    super(message)
    this.name = 'McpToolError'
    if (content !== undefined && content.length > 0) Object.defineProperty(this, 'content', { value: content })
  }
}

/**
 * Connect to an MCP server and register each of its tools (named `prefix + name`) through `ctx`
 * (or `options.agent`'s scope). Follows `notifications/tools/list_changed`, forwards cancellation
 * and progress, marks `readOnlyHint` tools concurrency-safe, turns a crashed or hung server into
 * error results and reconnects on the next call. A remote tool that cannot be registered (its
 * prefixed name is taken, its schema is unusable or too deep) is skipped with an
 * `McpConnectionWarning` naming it and the reason; the server's other tools are registered.
 * Closing the connection, or disposing `ctx`, closes the session and removes the registrations.
 * Rejects when the first connection or listing fails, unless `reconnect` is set (then the server
 * is retried with backoff). Messages name the server by `options.name`, never by its arguments,
 * environment or headers.
 */
export async function connectMcpServer(
  ctx: Context,
  server: McpServerSpec,
  options: ConnectMcpServerOptions = {},
): Promise<McpConnection> {
  const spec = checkSpec(server)
  const link = new UpstreamLink(ctx, spec, checkOptions(options, spec))
  await link.start()
  return link.connection()
}

/** The turns given to connections (see registerInTurn), by their options object. */
const registerTurns = new WeakMap<object, Promise<void>>()

/**
 * `options`, with the connection's first tools registered only once `turn` settles: a caller that
 * starts several connections at once registers their tools in its own order, not their answers'.
 */
export function registerInTurn<T extends ConnectMcpServerOptions>(options: T, turn: Promise<void>): T {
  registerTurns.set(options, turn)
  return options
}

/** The checked options of {@link connectMcpServer}. */
interface LinkSettings {
  readonly prefix: string
  /** What the first listing's registrations wait for (see registerInTurn). */
  readonly turn: Promise<void> | undefined
  readonly requestTimeoutMs: number
  readonly maxMessageBytes: number
  readonly name: string
  readonly reconnect: Required<McpReconnectOptions> | undefined
  readonly onStateChange: ((state: McpConnectionState) => void) | undefined
  readonly onOpened: ((features: McpServerFeatures, server: string) => void) | undefined
  readonly onToolSkipped: ((skipped: McpSkippedTool) => void) | undefined
  readonly onLog: ((message: McpLogMessage, server: string) => void) | undefined
  readonly onResourceUpdated: ((uri: string, server: string) => void) | undefined
  readonly onListChanged: ((kind: McpListKind, server: string) => void) | undefined
  readonly onElicitationComplete: ((elicitationId: string, server: string) => void) | undefined
  readonly handlers: McpCapabilityHandlers
  readonly owner: Context
}

const DEFAULT_RECONNECT: Required<McpReconnectOptions> = { initialDelayMs: 1000, maxDelayMs: 60_000 }

function checkOptions(
  options: ConnectMcpServerOptions,
  spec: McpServerSpec,
): Omit<LinkSettings, 'owner'> & { agent?: Agent } {
  const at = (key: string) => `connectMcpServer(ctx, server, options).${key}`
  const prefix = options.prefix ?? ''
  if (typeof prefix !== 'string') throw new ConfigError(at('prefix'), 'expected a string')
  const name = options.name ?? defaultName(spec)
  if (typeof name !== 'string' || name === '') throw new ConfigError(at('name'), 'expected a non-empty string')
  for (const key of [
    'onStateChange',
    'onOpened',
    'onToolSkipped',
    'onLog',
    'onResourceUpdated',
    'onListChanged',
    'onElicitationComplete',
    'elicitation',
    'urlElicitation',
    'sampling',
    'roots',
  ] as const)
    if (options[key] !== undefined && typeof options[key] !== 'function')
      throw new ConfigError(at(key), 'expected a function')
  if (options.samplingTools !== undefined && typeof options.samplingTools !== 'boolean')
    throw new ConfigError(at('samplingTools'), 'expected true or false')
  if (options.samplingTools === true && options.sampling === undefined)
    throw new ConfigError(at('samplingTools'), 'needs a sampling handler (the option `sampling`) to answer them')
  const reconnect = checkReconnect(options.reconnect, at('reconnect'))
  if (reconnect !== undefined && 'transport' in spec)
    throw new ConfigError(at('reconnect'), 'a given transport cannot be reopened, so it cannot reconnect')
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  if (!(typeof requestTimeoutMs === 'number' && requestTimeoutMs > 0 && Number.isFinite(requestTimeoutMs)))
    throw new ConfigError(
      'connectMcpServer(ctx, server, options).requestTimeoutMs',
      'expected a positive number of milliseconds',
    )
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  if (!(Number.isSafeInteger(maxMessageBytes) && maxMessageBytes > 0))
    throw new ConfigError(
      'connectMcpServer(ctx, server, options).maxMessageBytes',
      'expected a positive whole number of bytes',
    )
  return {
    prefix,
    turn: registerTurns.get(options),
    requestTimeoutMs,
    maxMessageBytes,
    name,
    reconnect,
    onStateChange: options.onStateChange,
    onOpened: options.onOpened,
    onToolSkipped: options.onToolSkipped,
    onLog: options.onLog,
    onResourceUpdated: options.onResourceUpdated,
    onListChanged: options.onListChanged,
    onElicitationComplete: options.onElicitationComplete,
    handlers: {
      elicitation: options.elicitation,
      urlElicitation: options.urlElicitation,
      sampling:
        options.samplingTools === true && options.sampling !== undefined
          ? samplingWithTools(options.sampling)
          : options.sampling,
      roots: options.roots,
    },
    agent: options.agent,
  }
}

function checkReconnect(value: unknown, at: string): Required<McpReconnectOptions> | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true) return DEFAULT_RECONNECT
  if (typeof value !== 'object' || value === null)
    throw new ConfigError(at, 'expected true, false or { initialDelayMs?, maxDelayMs? }')
  const { initialDelayMs = DEFAULT_RECONNECT.initialDelayMs, maxDelayMs = DEFAULT_RECONNECT.maxDelayMs } =
    value as McpReconnectOptions
  for (const [key, ms] of [
    ['initialDelayMs', initialDelayMs],
    ['maxDelayMs', maxDelayMs],
  ] as const)
    if (!(typeof ms === 'number' && ms > 0 && Number.isFinite(ms)))
      throw new ConfigError(`${at}.${key}`, 'expected a positive number of milliseconds')
  if (maxDelayMs < initialDelayMs) throw new ConfigError(`${at}.maxDelayMs`, 'expected at least initialDelayMs')
  return { initialDelayMs, maxDelayMs }
}

/**
 * The delay before retry number `attempt` (from 0): doubling from the initial delay up to the
 * maximum, drawn between half and all of it so that servers that failed together do not all
 * come back at the same instant.
 */
export function reconnectDelay(attempt: number, options: Required<McpReconnectOptions>): number {
  const full = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.min(attempt, 52))
  return Math.round(full / 2 + (Math.random() * full) / 2)
}

/** One open session with the server: the SDK client, and why its transport gave up if it did. */
interface Session {
  readonly client: UpstreamClient
  /** The client of a 2025-11-25 session (tool calls, tasks); the same object as `client`. */
  readonly legacy?: LegacyClient
  /** The session of a server that speaks only 2026-07-28. */
  readonly modern?: ModernSession
  /** The lean path for plain tool calls, installed on the session's transport once connected. */
  fast?: FastRequests
  /** Set when the server sent a message over the size limit (the SDK then drops the connection). */
  oversized: boolean
}

/** A registered remote tool: what it was registered from (to notice changes) and how to remove it. */
interface Registration {
  readonly key: string | undefined
  readonly name: string
  readonly dispose: () => void
}

/**
 * The registered tools by their server's name, with the list of their registered names kept until
 * the next change: the gateway reads a connection's `tools` on every call (the upstream cap, the
 * journal's credential), so the getter hands back one array, not a new one each time.
 */
class Registrations extends Map<string, Registration> {
  private names: readonly string[] | undefined

  override set(key: string, value: Registration): this {
    this.names = undefined
    return super.set(key, value)
  }

  override delete(key: string): boolean {
    this.names = undefined
    return super.delete(key)
  }

  override clear(): void {
    this.names = undefined
    super.clear()
  }

  registeredNames(): readonly string[] {
    if (this.names === undefined) this.names = Object.freeze([...this.values()].map((entry) => entry.name))
    return this.names
  }
}

/** The state of one `connectMcpServer` import, each step of its life a method. */
class UpstreamLink {
  private readonly settings: LinkSettings
  private readonly label: string
  private session: Session | undefined
  private connecting: Promise<Session> | undefined
  private closed = false
  private usedTransport = false
  private sessions = 0
  private readonly registered = new Registrations()
  /** Tools skipped at the last listing, by remote name, with the key they were skipped at (warned once). */
  private readonly skipped = new Map<string, string | undefined>()
  /** Tool listings started so far: only the newest one's answer is applied. */
  private generation = 0
  /** The last listing applied to the registrations. */
  private applied: { generation: number; session: Session; tools: Tool[] } | undefined
  /** The newest listing's outcome, which answers for an older one that failed. */
  private latest: Promise<void> = Promise.resolve()
  /** The listing about to start, which requests made before it starts share. */
  private pending: { run: Promise<void>; all: boolean } | undefined
  /** Clients whose session was dropped for an oversized message, so each request can say so. */
  private readonly oversizedClients = new WeakSet<UpstreamClient>()
  /** The tool calls running on the server now, for the capability handlers to route by. */
  private readonly inFlight = new Set<ToolRunContext>()
  /** The partition session each call in flight on one runs on (see callsOn). */
  private readonly partedCalls = new Map<ToolRunContext, UpstreamClient>()
  /**
   * Calls given up on (cancelled, timed out, their client gone) before the server answered, by
   * the session they ran on, until when: the server may still be working on one and ask its
   * client, and that request must not reach whoever happens to be connected now.
   */
  private readonly abandoned = new Map<ToolRunContext, { client: UpstreamClient; until: number }>()
  private disposeEffect: (() => unknown) | undefined
  /** Strings of the spec that could carry secrets, kept out of every message. */
  private readonly secrets: readonly string[]
  private current: McpConnectionState = { status: 'connected' }
  /** Failed retries since the server was last up. */
  private attempt = 0
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private recovering = false
  /** Clients whose session their HTTP server forgot (answered 404); see sessionForgotten. */
  private readonly forgottenClients = new WeakSet<UpstreamClient>()
  /** The log level last asked for, sent again to every new session. */
  private logLevel: McpLogLevel | undefined
  /** Resources, prompts and completions, when the server declares them. */
  private readonly catalog: UpstreamCatalog
  /** The sessions of the spec's partitions, made on the first call. */
  private partitioned: PartitionedSessions | undefined
  /**
   * The era the server was last found to speak: a server that refused 2025-11-25 is spoken to in
   * 2026-07-28 from then on (reconnects included), without asking again.
   */
  private era: McpProtocolEra | undefined
  /**
   * The 2026-07-28 side of a server spoken to in 2025-11-25, for 2026 clients: opened on the first
   * request of one (undefined inside when the server speaks no 2026-07-28).
   */
  private modernSide: Promise<ModernSession | undefined> | undefined
  /** The tools the 2026 side lists, by remote name (undefined until it is open). */
  private modernTools: Map<string, Tool> | undefined
  /** The prompts only the 2026 side offers (undefined until it is open). */
  private modernPrompts: Prompt[] | undefined
  /** The remote names the 2025 session last listed. */
  private legacyNames = new Set<string>()
  private stopDemand: (() => void) | undefined
  /** The questions a 2025 session's server asks during 2026 clients' calls, held for their retries. */
  private readonly bridge: UpstreamInputBridge

  constructor(
    private readonly ctx: Context,
    private readonly spec: McpServerSpec,
    options: Omit<LinkSettings, 'owner'> & { agent?: Agent },
  ) {
    const { agent, ...rest } = options
    this.settings = { ...rest, owner: agent?.ctx ?? ctx }
    this.label = JSON.stringify(this.settings.name)
    this.bridge = new UpstreamInputBridge(this.label)
    this.settings = { ...this.settings, handlers: this.bridge.wrap(this.settings.handlers) }
    this.secrets = secretsOf(spec)
    const { name, onResourceUpdated, onListChanged } = this.settings
    this.catalog = new UpstreamCatalog({
      client: () => this.ensure().then((session) => session.client),
      forgotten: (client, error) => this.sessionForgotten(error, client),
      oversized: (client) => (this.oversizedClients.has(client) ? this.oversizedText() : undefined),
      label: this.label,
      timeoutMs: this.settings.requestTimeoutMs,
      reason: (error) => this.reason(error),
      warn,
      onResourceUpdated: onResourceUpdated && ((uri) => onResourceUpdated(uri, name)),
      onListChanged: onListChanged && ((kind) => onListChanged(kind, name)),
    })
  }

  /**
   * The first connection and listing; on failure everything started is closed again, or, with
   * `reconnect`, the server is marked down and retried.
   */
  async start(): Promise<void> {
    try {
      await this.refresh()
    } catch (error) {
      if (this.settings.reconnect === undefined) {
        await this.close()
        throw error
      }
      this.goDown(error)
    }
    this.stopDemand = onModernDemand(() => this.prepareModern())
    this.disposeEffect = this.ctx.effect(
      () => () => {
        void this.close()
      },
      `connectMcpServer(${this.label})`,
    )
  }

  connection(): McpConnection {
    const link = this
    return {
      get tools() {
        return link.registered.registeredNames()
      },
      prefix: this.settings.prefix,
      get connected() {
        return link.session !== undefined
      },
      get state() {
        return link.current
      },
      refresh: () => this.refresh(),
      get features() {
        return link.catalog.features
      },
      get resources() {
        return link.catalog.resources
      },
      get resourceTemplates() {
        return link.catalog.templates
      },
      get prompts() {
        return link.prompts()
      },
      readResource: (uri, options) => this.catalog.readResource(uri, options),
      subscribeResource: (uri) => this.catalog.subscribeResource(uri),
      unsubscribeResource: (uri) => this.catalog.unsubscribeResource(uri),
      getPrompt: (name, args, options) => this.getPrompt(name, args, options),
      complete: (params, options) => this.catalog.complete(params, options),
      setLogLevel: (level) => this.setLogLevel(level),
      notifyRootsChanged: () => this.notifyRootsChanged(),
      close: () => this.close(),
    }
  }

  /**
   * Start a session in the era the server speaks: 2025-11-25 first (initialize, today's fast paths),
   * and 2026-07-28 once the server refused that with "Unsupported protocol version".
   */
  private async open(): Promise<Session> {
    if (this.era === 'modern') return this.openModern()
    const session = await this.openLegacy()
    return session ?? this.openModern()
  }

  /** A 2026-07-28 session, on the SDK v2 client (loaded only now). */
  private async openModern(): Promise<Session> {
    const { label } = this
    const { openModernSession } = await import('./modern-session.js')
    let session: Session | undefined
    const modern = await openModernSession(this.spec, {
      label,
      timeoutMs: this.settings.requestTimeoutMs,
      handlers: this.settings.handlers,
      reason: (error) => this.reason(error),
      onclose: () => {
        if (session === undefined || this.session !== session) return
        this.session = undefined
        this.recover()
      },
    })
    this.era = 'modern'
    if (this.closed) {
      await modern.client.close().catch(() => {})
      throw new McpToolError(`MCP server ${label}: the connection was closed`)
    }
    session = { client: modern.client, modern, oversized: false }
    return this.opened(session, modern.protocolVersion)
  }

  /**
   * Ready for 2026 clients: a server spoken to in 2025-11-25 over HTTP is also opened in 2026-07-28
   * (once; again after that side closed), and the tools that side lists are registered beside the
   * others. A server that speaks no 2026-07-28 serves 2026 clients over its 2025 session.
   */
  private prepareModern(): Promise<void> {
    const { spec } = this
    if (this.closed || this.era !== 'legacy' || !('url' in spec)) return Promise.resolve()
    // OAuth and per-caller partitions stay on the 2025 session (the 2026 client supports neither here).
    if (spec.authProvider !== undefined || spec.partition !== undefined) return Promise.resolve()
    this.modernSide ??= this.openModernSide()
    return this.modernSide.then(() => {})
  }

  private async openModernSide(): Promise<ModernSession | undefined> {
    let modern: ModernSession
    try {
      const { openModernSession } = await import('./modern-session.js')
      modern = await openModernSession(this.spec, {
        label: this.label,
        timeoutMs: this.settings.requestTimeoutMs,
        handlers: this.settings.handlers,
        reason: (error) => this.reason(error),
        onclose: () => {
          if (this.modernSide === opened) this.modernSide = undefined
        },
      })
    } catch {
      // It speaks no 2026-07-28: its 2025 session answers 2026 clients too.
      return undefined
    }
    const opened = this.modernSide
    if (this.closed) {
      await modern.client.close().catch(() => {})
      return undefined
    }
    try {
      const listed: Tool[] = []
      let cursor: string | undefined
      do {
        const page = await modern.client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.settings.requestTimeoutMs,
        })
        listed.push(...page.tools)
        cursor = page.nextCursor
      } while (cursor !== undefined)
      this.modernTools = new Map(listed.map((tool) => [tool.name, tool]))
      for (const tool of listed) if (!this.registered.has(tool.name)) this.syncTool(tool)
      if (modern.client.getServerCapabilities()?.prompts) {
        const prompts: Prompt[] = []
        do {
          const page = await modern.client.listPrompts(cursor === undefined ? undefined : { cursor }, {
            timeout: this.settings.requestTimeoutMs,
          })
          prompts.push(...page.prompts)
          cursor = page.nextCursor
        } while (cursor !== undefined)
        this.modernPrompts = prompts
        const { onListChanged, name } = this.settings
        if (prompts.some((prompt) => !this.catalog.prompts.some((listed) => listed.name === prompt.name)))
          try {
            onListChanged?.('prompts', name)
          } catch (error) {
            warn(`MCP server ${this.label}: the onListChanged callback threw: ${this.reason(error)}`)
          }
      }
    } catch (error) {
      warn(`MCP server ${this.label}: listing its tools in MCP 2026-07-28 failed: ${this.reason(error)}`)
      await modern.client.close().catch(() => {})
      return undefined
    }
    return modern
  }

  /** The prompts as last listed, with those only the 2026 side offers. */
  private prompts(): readonly Prompt[] {
    const listed = this.catalog.prompts
    const extra = this.modernPrompts?.filter((prompt) => !listed.some((known) => known.name === prompt.name))
    return extra === undefined || extra.length === 0 ? listed : [...listed, ...extra]
  }

  /**
   * `prompts/get`: a 2026 client's request goes over a 2026 session when one offers the prompt (its
   * input-required answer left for the client as it is), a prompt only the 2026 side offers too.
   */
  private async getPrompt(
    name: string,
    args: Readonly<Record<string, string>> | undefined,
    options: McpPromptRequestOptions = {},
  ): Promise<GetPromptResult> {
    const call = modernCall()
    const primary = this.session?.modern
    const side = primary === undefined ? await this.modernSide : undefined
    const onSide = side !== undefined && this.modernPrompts?.some((prompt) => prompt.name === name) === true
    const modern = primary ?? (onSide ? side : undefined)
    if (
      modern === undefined ||
      (call === undefined && primary === undefined && this.catalog.prompts.some((p) => p.name === name))
    )
      return this.catalog.getPrompt(name, args, options)
    const params = { name, ...(args ? { arguments: { ...args } } : {}) }
    if (call === undefined) return this.promptInRounds(modern, params, options)
    let answer: Awaited<ReturnType<ModernSession['getPromptOnce']>>
    try {
      answer = await modern.getPromptOnce(
        params,
        { timeout: this.settings.requestTimeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
        call,
      )
    } catch (error) {
      const { code, data } = error as { code?: unknown; data?: unknown }
      if (typeof code === 'number' && Number.isSafeInteger(code) && code < 0)
        call.rpcError = { code, message: message(error), ...(data !== undefined ? { data } : {}) }
      throw new McpToolError(`MCP server ${this.label}: prompts/get failed: ${this.reason(error)}`)
    }
    if ('result' in answer) return answer.result as GetPromptResult
    call.inputRequired = answer.inputRequired
    throw new McpToolError(`MCP server ${this.label} asked the MCP client for input; the request ends this round`)
  }

  /**
   * `prompts/get` over a 2026 session for a 2025 client (or a library caller): its input-required
   * rounds answered through `options.input` (the asking client's handlers) or the connection's.
   * Fails as the catalog's requests do (an {@link McpRequestError} with the server's code).
   */
  private async promptInRounds(
    modern: ModernSession,
    params: { name: string; arguments?: Record<string, string> },
    options: McpPromptRequestOptions,
  ): Promise<GetPromptResult> {
    try {
      return (await modern.getPrompt(
        params,
        { timeout: this.settings.requestTimeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
        options.input ?? this.settings.handlers,
      )) as GetPromptResult
    } catch (error) {
      const { code, data } = error as { code?: unknown; data?: unknown }
      const rpcCode = typeof code === 'number' && Number.isSafeInteger(code) ? code : JsonRpcCode.InternalError
      const reason = this.reason(error).replace(/^MCP error -?\d+: /, '')
      throw new McpRequestError(`MCP server ${this.label}: prompts/get failed: ${reason}`, rpcCode, reason, data)
    }
  }

  /**
   * Whether a client of `era` is served the remote tool `name`: each era sees what the server lists
   * in it, when the server is spoken to in both; otherwise every client sees every tool.
   */
  private listsFor(name: string, era: McpProtocolEra): boolean {
    if (this.era !== 'legacy' || this.modernTools === undefined) return true
    return era === 'modern' ? this.modernTools.has(name) : this.legacyNames.has(name)
  }

  /**
   * The 2026 session that serves a call of `remoteName`, when one does: a 2026 client's call of a
   * tool the 2026 side lists, and a 2025 client's call of a tool only that side lists.
   */
  private async modernFor(
    remoteName: string,
    session: Session,
    modernClient: boolean,
  ): Promise<ModernSession | undefined> {
    if (session.modern) return session.modern
    const side = await this.modernSide
    if (side === undefined || !this.modernTools?.has(remoteName)) return undefined
    return modernClient || !this.legacyNames.has(remoteName) ? side : undefined
  }

  /**
   * One round of a 2026 client's call over a 2026 session: an input-required answer or a JSON-RPC
   * error is left on `call` for the client (the pipeline sees a failed call).
   */
  private async callModernOnce(
    modern: ModernSession,
    params: { name: string; arguments: Record<string, unknown> },
    options: Parameters<ModernSession['callOnce']>[1],
    call: ModernCall,
  ): Promise<CallToolResult> {
    let answer: Awaited<ReturnType<ModernSession['callOnce']>>
    try {
      answer = await modern.callOnce(params, options, call)
    } catch (error) {
      const { code, data } = error as { code?: unknown; data?: unknown }
      // The server's own refusal (not a transport failure): the client gets it as the server said it.
      if (
        typeof code === 'number' &&
        Number.isSafeInteger(code) &&
        code < 0 &&
        code !== JsonRpcCode.RequestTimeout &&
        code !== JsonRpcCode.ConnectionClosed
      )
        call.rpcError = {
          code,
          message: message(error).replace(/^MCP error -?\d+: /, ''),
          ...(data !== undefined ? { data } : {}),
        }
      throw error
    }
    if ('result' in answer) return answer.result as CallToolResult
    call.inputRequired = answer.inputRequired
    throw new McpToolError(`MCP server ${this.label} asked the MCP client for input; the call ends this round`)
  }

  /**
   * One round of a 2026 client's call over a 2025 session: a question the server asks meanwhile
   * ends the round (the client answers it by retrying), the server's call still running.
   */
  private async callBridged(
    legacy: LegacyClient,
    fast: FastRequests | undefined,
    params: { name: string; arguments: Record<string, unknown> },
    options: Omit<Parameters<ModernSession['callOnce']>[1], 'signal'> & { signal: AbortSignal },
    exec: ToolRunContext,
    call: ModernCall,
  ): Promise<CallToolResult> {
    // The lean path when the session has one: its output-schema checks are the listing's.
    const round = await this.bridge.round(exec, params.name, call, exec.signal, (signal) =>
      fast ? fast.callTool(params, { ...options, signal }) : legacy.callTool(params, { ...options, signal }),
    )
    if ('result' in round) return round.result as CallToolResult
    throw new McpToolError('held' in round ? round.held : round.refused)
  }

  /** What every new session does once connected, whatever its era. */
  private async opened(session: Session, protocolVersion: string | undefined): Promise<Session> {
    const { label } = this
    this.session = session
    this.sessions++
    this.catalog.opened(session.client, protocolVersion)
    try {
      this.settings.onOpened?.(this.catalog.features, this.settings.name)
    } catch (error) {
      warn(`MCP server ${label}: the onOpened callback threw: ${this.reason(error)}`)
    }
    if (this.logLevel !== undefined)
      await this.sendLogLevel(session, this.logLevel).catch((error) =>
        warn(`MCP server ${label}: setting the log level again failed: ${this.reason(error)}`),
      )
    return session
  }

  /**
   * Start a 2025-11-25 session: spawn or dial the server, initialize, follow its list_changed
   * notifications. Undefined when the server answered that it speaks only a later revision.
   */
  private async openLegacy(): Promise<Session | undefined> {
    const { label } = this
    if ('transport' in this.spec && this.usedTransport)
      throw new McpToolError(`MCP server ${label}: the connection closed and a given transport cannot be reopened`)
    const [{ openLegacyClient }, { installFastRequests }, { LazyJsonSchemaValidator }] = await Promise.all([
      import('./legacy-session.js'),
      import('./fast-request.js'),
      import('../protocol/lazy-json-schema-validator.js'),
    ])
    const transport = await createTransport(this.spec, this.settings.maxMessageBytes)
    this.usedTransport = true
    const { handlers, onLog, onElicitationComplete } = this.settings
    const notifications: Record<string, (params: Record<string, unknown>) => void> = {
      'notifications/tools/list_changed': () => {
        this.relist(false).catch((error) => warn(`MCP server ${label}: re-listing tools failed: ${this.reason(error)}`))
      },
    }
    if (onElicitationComplete)
      notifications['notifications/elicitation/complete'] = (params) => {
        try {
          onElicitationComplete(String(params.elicitationId), this.settings.name)
        } catch (error) {
          warn(`MCP server ${label}: the onElicitationComplete callback threw: ${this.reason(error)}`)
        }
      }
    if (onLog)
      notifications['notifications/message'] = (params) => {
        const message: McpLogMessage = {
          level: params.level as McpLogLevel,
          ...(params.logger !== undefined ? { logger: params.logger as string } : {}),
          data: params.data,
        }
        try {
          onLog(message, this.settings.name)
        } catch (error) {
          warn(`MCP server ${label}: the onLog callback threw: ${this.reason(error)}`)
        }
      }
    this.catalog.install((method, handler) => {
      notifications[method] = handler
    })
    // Every session declares and answers the same capabilities, reconnects included.
    const validators = new LazyJsonSchemaValidator()
    const client: LegacyClient = await openLegacyClient({
      handlers,
      label,
      calls: () => this.callsOn(client),
      notifications,
      validators,
    })
    const session: Session = { client, legacy: client, oversized: false }
    // The SDK reports an oversized message here and then closes; the call it was answering only
    // sees "connection closed", so the real cause is kept for its error.
    transport.onerror = (error) => {
      if (/exceeded maximum size/i.test(error.message)) {
        session.oversized = true
        this.oversizedClients.add(client)
      }
      // The HTTP server's own stream answers no call, so nothing else would tell why it stopped.
      else if (/stream sent a message larger than/.test(error.message)) warn(`MCP server ${label}: ${error.message}`)
    }
    client.onclose = () => {
      if (this.session !== session) return
      this.session = undefined
      this.recover()
    }
    try {
      await client.connect(transport, { timeout: this.settings.requestTimeoutMs })
    } catch (error) {
      await client.close().catch(() => {})
      if (refusesLegacyEra(error)) return undefined
      throw new McpToolError(`MCP server ${label} did not start: ${this.reason(error)}`)
    }
    if (this.closed) {
      await client.close().catch(() => {})
      throw new McpToolError(`MCP server ${label}: the connection was closed`)
    }
    session.fast = installFastRequests(client, transport, validators, client.callToolResultSchema)
    this.era = 'legacy'
    return this.opened(session, client.protocolVersion())
  }

  async notifyRootsChanged(): Promise<void> {
    const { session } = this
    if (session === undefined || this.settings.handlers.roots === undefined) return
    try {
      await session.client.sendRootsListChanged()
    } catch (error) {
      throw new McpToolError(`MCP server ${this.label}: notifying the roots change failed: ${this.reason(error)}`)
    }
  }

  /** Remember the level (for later sessions) and send it to the live session, if any. */
  async setLogLevel(level: McpLogLevel): Promise<void> {
    if (!MCP_LOG_LEVELS.includes(level))
      throw new ConfigError('setLogLevel(level)', `expected one of ${MCP_LOG_LEVELS.join(', ')}`)
    this.logLevel = level
    const { session } = this
    if (session !== undefined) await this.sendLogLevel(session, level)
  }

  private async sendLogLevel(session: Session, level: McpLogLevel): Promise<void> {
    // A server that did not declare logging would answer "method not found".
    if (!session.client.getServerCapabilities()?.logging) return
    try {
      await session.client.setLoggingLevel(level, { timeout: this.settings.requestTimeoutMs })
    } catch (error) {
      throw new McpToolError(`MCP server ${this.label}: logging/setLevel failed: ${this.reason(error)}`)
    }
  }

  /** The live session, reconnecting (and re-listing) when the last one ended. */
  private ensure(): Promise<Session> {
    if (this.closed) return Promise.reject(new McpToolError(`MCP server ${this.label}: the connection was closed`))
    if (this.session) return Promise.resolve(this.session)
    if (!this.connecting) {
      const reconnecting = this.sessions > 0
      const connecting = this.open().finally(() => {
        this.connecting = undefined
      })
      this.connecting = connecting
      // A new session may serve a different tool list.
      if (reconnecting)
        connecting
          .then(
            () => this.refresh(),
            () => {}, // the call that reconnected reports the failure itself
          )
          .catch((error) =>
            warn(`MCP server ${this.label}: re-listing tools after reconnecting failed: ${this.reason(error)}`),
          )
    }
    return this.connecting
  }

  /** One `tools/call`, its failures turned into {@link McpToolError}s that say what happened. */
  private async callRemote(
    remoteName: string,
    args: unknown,
    exec: ToolRunContext,
    asTask: boolean,
    retried = false,
  ): Promise<ImportedValue> {
    const parted = await this.partitionOf(exec)
    const session: Session =
      parted === undefined ? await this.ensure() : { client: await parted.client, oversized: false }
    const c = session.client
    const legacy = parted === undefined ? session.legacy : await parted.client
    let result: CallToolResult
    const params = { name: remoteName, arguments: args as Record<string, unknown> }
    const options = {
      signal: exec.signal,
      timeout: this.settings.requestTimeoutMs,
      resetTimeoutOnProgress: true,
      onprogress: (progress: { progress: number; total?: number; message?: string }) => reportProgress(exec, progress),
    }
    // A 2026 client's call (not a Code Mode sub-call, whose retry would run the program again).
    const call = exec.callId === exec.rootCallId ? modernCall() : undefined
    const modern = parted === undefined ? await this.modernFor(remoteName, session, call !== undefined) : undefined
    this.inFlight.add(exec)
    if (parted !== undefined) this.partedCalls.set(exec, c)
    try {
      result = modern
        ? call
          ? await this.callModernOnce(modern, params, options, call)
          : await modern.callTool(params, options, exec)
        : call && legacy && parted === undefined
          ? await this.callBridged(legacy, session.fast, params, options, exec, call)
          : asTask && legacy
            ? await callAsTask(legacy, params, options, exec)
            : session.fast
              ? await session.fast.callTool(params, options)
              : // A session that is not modern has its 2025 client.
                await (legacy as LegacyClient).callTool(params, options)
    } catch (error) {
      if (exec.signal.aborted) throw error
      // The server no longer knows the session (it restarted): it refused the call without running
      // it, so the call goes once more, on a new session, as Streamable HTTP asks of a client.
      if (parted !== undefined && !retried && (error as { code?: unknown }).code === 404) {
        parted.sessions.drop(parted.key, legacy)
        return this.callRemote(remoteName, args, exec, asTask, true)
      }
      if (!retried && this.sessionForgotten(error, session.client))
        return this.callRemote(remoteName, args, exec, asTask, true)
      throw this.callFailure(error, session)
    } finally {
      this.inFlight.delete(exec)
      this.partedCalls.delete(exec)
      if (exec.signal.aborted) this.abandon(exec, c)
    }
    const blocks = Array.isArray(result.content) ? result.content.map(fromMcpContent) : []
    if (result.isError === true) {
      const text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
      throw new McpToolError(text || `${remoteName} failed without a message`, snapshotOrAsIs(blocks))
    }
    const value: ImportedValue = { content: snapshotOrAsIs(blocks) }
    if (result.structuredContent !== undefined)
      value.structuredContent = snapshotJsonValue(result.structuredContent, 'structuredContent')
    if (result._meta !== undefined) value._meta = snapshotJsonValue(result._meta, '_meta')
    return value
  }

  /** The partition session a call runs on, when the spec partitions its calls. */
  private async partitionOf(
    exec: ToolRunContext,
  ): Promise<{ key: string; client: Promise<LegacyClient>; sessions: PartitionedSessions } | undefined> {
    if (!('url' in this.spec) || this.spec.partition === undefined) return undefined
    const key = await this.spec.partition.keyOf(exec)
    if (this.partitioned === undefined) {
      const { PartitionedSessions } = await import('./session-partition.js')
      const { onElicitationComplete, name } = this.settings
      this.partitioned ??= new PartitionedSessions(this.spec.url, this.spec.headers, this.spec.partition, {
        maxMessageBytes: this.settings.maxMessageBytes,
        timeoutMs: this.settings.requestTimeoutMs,
        label: this.label,
        handlers: this.settings.handlers,
        calls: (client) => this.callsOn(client, true),
        onElicitationComplete:
          onElicitationComplete &&
          ((id) => {
            try {
              onElicitationComplete(id, name)
            } catch (error) {
              warn(`MCP server ${this.label}: the onElicitationComplete callback threw: ${this.reason(error)}`)
            }
          }),
      })
    }
    const client = this.partitioned.session(key)
    // Failing to open is the call's failure, said with the server's name.
    await client.catch((error: unknown) => {
      throw new McpToolError(`MCP server ${this.label}: ${this.reason(error)}`)
    })
    return { key, client, sessions: this.partitioned }
  }

  /**
   * Whether an HTTP server answered 404 to a request of a session it had given an id: the session
   * is gone on its side, so it is dropped here and the next request starts a new one. Every request
   * of that client that fails the same way says so too (the first one closed it already).
   */
  private sessionForgotten(error: unknown, client: UpstreamClient): boolean {
    if ((error as { code?: unknown }).code !== 404) return false
    if (!this.forgottenClients.has(client)) {
      if (client.transport?.sessionId === undefined) return false
      this.forgottenClients.add(client)
      if (this.session?.client === client) {
        this.session = undefined
        client.close().catch(() => {})
      }
    }
    return true
  }

  /** The calls a request from the server on `client`'s session may belong to: running or abandoned. */
  private callsOn(client: UpstreamClient, partition = false): ToolRunContext[] {
    const now = Date.now()
    const abandoned: ToolRunContext[] = []
    for (const [exec, entry] of this.abandoned) {
      if (entry.until <= now) this.abandoned.delete(exec)
      else if (entry.client === client) abandoned.push(exec)
    }
    // A partition's session serves only its own calls; the shared one none of the partitions'.
    const running = [...this.inFlight].filter((exec) => {
      const on = this.partedCalls.get(exec)
      return on === undefined ? !partition : on === client
    })
    return [...abandoned, ...running]
  }

  private abandon(exec: ToolRunContext, client: UpstreamClient): void {
    const until = Date.now() + Math.max(this.settings.requestTimeoutMs, ABANDONED_CALL_MS)
    this.abandoned.set(exec, { client, until })
    if (this.abandoned.size > MAX_ABANDONED_CALLS)
      this.abandoned.delete(this.abandoned.keys().next().value as ToolRunContext)
  }

  /** Why a session was dropped for an oversized message: the limit, and how to raise it. */
  private oversizedText(): string {
    const limit = this.settings.maxMessageBytes
    return (
      `MCP server ${this.label} sent a message larger than the ${limit}-byte limit (the maxMessageBytes option), ` +
      'so the connection was dropped (it reconnects on the next request); to raise the limit, set maxMessageBytes ' +
      '(toolgate serve: --max-message-bytes N or the "maxMessageBytes" config key)'
    )
  }

  private callFailure(error: unknown, session: Session): McpToolError {
    const { label } = this
    const code = (error as { code?: unknown }).code
    // A hung server is dropped so the next call starts a fresh session.
    if (code === JsonRpcCode.RequestTimeout && this.session === session) {
      this.session = undefined
      session.client.close().catch(() => {})
      this.recover()
    }
    if (code === JsonRpcCode.ConnectionClosed && session.oversized) return new McpToolError(this.oversizedText())
    if (code === JsonRpcCode.ConnectionClosed)
      return new McpToolError(
        `MCP server ${label} closed the connection during the call (it reconnects on the next call)`,
      )
    return new McpToolError(`MCP server ${label}: ${this.reason(error)}`)
  }

  /**
   * An error's message fit to show: a failed spawn says so without the command line, and any
   * argument, environment value, header value or URL of the spec is masked.
   */
  private reason(error: unknown): string {
    const e = error as { code?: unknown; syscall?: unknown }
    let text =
      typeof e?.syscall === 'string' && e.syscall.startsWith('spawn') && typeof e.code === 'string'
        ? `its command could not be run (${e.code})`
        : message(error)
    for (const secret of this.secrets) text = text.split(secret).join('…')
    return text
  }

  /**
   * The session ended without being closed: with `reconnect`, start a new one now so the tools
   * stay served; if the server cannot be reached, it is marked down and retried.
   */
  private recover(): void {
    if (this.settings.reconnect === undefined || this.closed || this.recovering || this.current.status !== 'connected')
      return
    this.recovering = true
    this.refresh().then(
      () => {
        this.recovering = false
        if (this.session === undefined) this.recover()
      },
      (error) => {
        this.recovering = false
        this.goDown(error)
      },
    )
  }

  /** Unregister the tools, drop any session, and schedule the next attempt. */
  private goDown(error: unknown): void {
    const reconnect = this.settings.reconnect
    if (this.closed || reconnect === undefined) return
    const session = this.session
    this.session = undefined
    session?.client.close().catch(() => {})
    for (const entry of this.registered.values()) entry.dispose()
    this.registered.clear()
    this.skipped.clear()
    this.catalog.clear(true)
    const retryInMs = reconnectDelay(this.attempt++, reconnect)
    clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(() => this.retry(), retryInMs)
    // A host that has nothing else to do may exit while a server is down.
    this.retryTimer.unref?.()
    const text = error instanceof McpToolError ? error.message : `MCP server ${this.label}: ${this.reason(error)}`
    this.setState({ status: 'down', error: text, retryInMs })
    if (this.settings.onStateChange === undefined)
      warn(`${text} (its tools are unregistered; retrying in ${Math.ceil(retryInMs / 1000)} s)`)
  }

  private retry(): void {
    this.retryTimer = undefined
    if (this.closed) return
    this.refresh().then(
      () => {
        if (this.closed) return
        this.attempt = 0
        this.setState({ status: 'connected' })
        if (this.session === undefined) this.recover()
      },
      (error) => this.goDown(error),
    )
  }

  private setState(state: McpConnectionState): void {
    this.current = state
    try {
      this.settings.onStateChange?.(state)
    } catch (error) {
      warn(`MCP server ${this.label}: onStateChange threw: ${message(error)}`)
    }
  }

  /** Every page of `tools/list`, and the session that answered them. */
  private async listAll(): Promise<{ session: Session; tools: Tool[] }> {
    const session = await this.ensure()
    const { client } = session
    const listed: Tool[] = []
    let cursor: string | undefined
    const timeout = this.settings.requestTimeoutMs
    do {
      const params = cursor === undefined ? undefined : { cursor }
      // A 2025 session over toolgate's own transports lists on its lean path (see
      // FastRequests.listTools); a given transport's messages may not be plain JSON (an in-memory
      // one hands the server's own objects over), so the SDK's parse makes them so.
      const page =
        session.fast && !('transport' in this.spec)
          ? await session.fast.listTools(params, { signal: NEVER_ABORTED, timeout })
          : await client.listTools(params, { timeout })
      listed.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return { session, tools: listed }
  }

  /** Bring the registrations in line with the server's list: add, replace what changed, remove what went. */
  private async sync(generation: number, all: boolean): Promise<void> {
    let listing: { session: Session; tools: Tool[] }
    try {
      const { client } = await this.ensure()
      // Its resources and prompts are listed beside its tools, not after them: one round trip fewer
      // before a new server's tools are served. A tools/list_changed lists the tools alone.
      ;[listing] = await Promise.all([this.listAll(), all ? this.catalog.sync(client) : undefined])
    } catch (error) {
      // A newer listing, if any, answers for this one that failed.
      if (generation !== this.generation) return this.latest
      throw error
    }
    if (this.applied === undefined && this.settings.turn !== undefined) await this.settings.turn
    const { applied } = this
    if (applied !== undefined && applied.generation > generation) {
      // A newer listing was applied already: this older one must not be what calls check against.
      return
    }
    if (this.closed) return
    this.applied = { generation, session: listing.session, tools: listing.tools }
    listing.session.fast?.rememberTools(listing.tools)
    const listed = listing.tools
    const seen = new Set<string>()
    for (const tool of listed) {
      seen.add(tool.name)
      this.syncTool(tool)
    }
    this.legacyNames = listing.session.legacy ? seen : new Set()
    // The tools only the 2026 side lists stay registered beside them.
    for (const tool of this.modernTools?.values() ?? [])
      if (!seen.has(tool.name)) {
        seen.add(tool.name)
        this.syncTool(tool)
      }
    for (const [remoteName, entry] of this.registered) {
      if (seen.has(remoteName)) continue
      entry.dispose()
      this.registered.delete(remoteName)
    }
    for (const remoteName of this.skipped.keys()) if (!seen.has(remoteName)) this.skipped.delete(remoteName)
  }

  /** Register one listed tool (again, when it changed); one that cannot be registered is skipped with a warning. */
  private syncTool(tool: Tool): void {
    const key = changeKey(tool)
    const existing = this.registered.get(tool.name)
    if (existing !== undefined && key !== undefined && existing.key === key) return
    existing?.dispose()
    this.registered.delete(tool.name)
    const name = this.settings.prefix + tool.name
    // A NUL in a name would reach journal records and store columns (PostgreSQL's text refuses it).
    if (tool.name.includes('\u0000')) {
      this.skip(tool.name, name, key, 'its name contains a NUL character (U+0000); a tool name never may')
      return
    }
    try {
      const dispose = this.settings.owner.tools.register(
        definitionOf(
          tool,
          name,
          (args, exec) => this.callRemote(tool.name, args, exec, tool.execution?.taskSupport === 'required'),
          (era) => this.listsFor(tool.name, era),
        ),
      )
      this.registered.set(tool.name, { key, name, dispose })
      this.skipped.delete(tool.name)
    } catch (error) {
      this.skip(tool.name, name, key, message(error))
    }
  }

  /** Report a listed tool that cannot be registered, once per version of it. */
  private skip(tool: string, name: string, key: string | undefined, reason: string): void {
    const warned = this.skipped.has(tool) && this.skipped.get(tool) === key
    this.skipped.set(tool, key)
    if (warned) return
    const onSkipped = this.settings.onToolSkipped
    if (onSkipped === undefined) warn(`MCP server ${this.label}: skipped tool ${JSON.stringify(tool)}: ${reason}`)
    else {
      try {
        onSkipped({ tool, name, reason })
      } catch (thrown) {
        warn(`MCP server ${this.label}: onToolSkipped threw: ${message(thrown)}`)
      }
    }
  }

  /** Re-list everything: tools, resources and prompts. */
  refresh(): Promise<void> {
    return this.relist(true)
  }

  /**
   * Start a listing on the next turn of the event loop; requests made before it starts share it (a
   * burst of `list_changed` notifications, a server registering its tools one by one, lists once).
   * A listing does not wait for one in flight. Each answer is applied as it arrives unless a newer
   * listing's answer was applied already: the registrations never go back to an older list, and a
   * caller's listing counts as soon as it, or a newer one, is applied.
   */
  private relist(all: boolean): Promise<void> {
    const pending = this.pending
    if (pending !== undefined) {
      if (all) pending.all = true
      return pending.run
    }
    const entry: { run: Promise<void>; all: boolean } = { run: Promise.resolve(), all }
    entry.run = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.pending = undefined
      const run = this.sync(++this.generation, entry.all)
      this.latest = run
      return run
    })
    this.pending = entry
    return entry.run
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stopDemand?.()
    this.bridge.close()
    clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    const side = this.modernSide
    this.modernSide = undefined
    for (const entry of this.registered.values()) entry.dispose()
    this.registered.clear()
    this.catalog.clear(false)
    const session = this.session
    this.session = undefined
    await session?.client.close().catch(() => {})
    await side?.then((modern) => modern?.client.close()).catch(() => {})
    await this.partitioned?.close()
    this.disposeEffect?.()
    this.current = { status: 'closed' }
  }
}

/**
 * What a listed tool was registered from, to notice when the server changes it; undefined when it
 * cannot be serialized (a schema too deep for JSON.stringify), which registration refuses anyway.
 */
function changeKey(tool: Tool): string | undefined {
  try {
    return JSON.stringify([
      tool.description,
      tool.title,
      tool.inputSchema,
      tool.outputSchema,
      tool.annotations,
      tool.icons,
      tool._meta,
    ])
  } catch {
    return undefined
  }
}

/** The toolgate definition of a remote tool, registered as `name` and run by `call`. */
function definitionOf(
  tool: Tool,
  name: string,
  call: (args: unknown, exec: ToolRunContext) => Promise<ImportedValue>,
  listedFor: (era: McpProtocolEra) => boolean,
): ToolDefinition {
  const remoteOutput = tool.outputSchema as Record<string, unknown> | undefined
  const { description, parameters, meta } = importedToolParts(tool)
  const definition: ToolDefinition = {
    name,
    description,
    parameters,
    output: {
      schema: remoteOutput === undefined ? plainOutputSchema() : outputSchemaOf(remoteOutput),
      render: (_args, value) => (value as unknown as ImportedValue).content,
    },
    execute: call,
    meta,
  }
  if (meta.annotations?.readOnlyHint === true) definition.isConcurrencySafe = () => true
  definition.listedFor = listedFor
  return definition
}

function _snapshotObject(value: object, path: string): JsonObject {
  return snapshotJsonValue(value, path) as JsonObject
}

/**
 * The output schema of a tool that declares none (most of them): one frozen snapshot for all, so
 * that registering such a tool does not copy, check and compile the content blocks' schema again.
 */
let plainOutput: JsonSchemaNode | undefined
function plainOutputSchema(): JsonSchemaNode {
  plainOutput ??= outputSchemaOf(undefined)
  return plainOutput
}

/** The schema of an imported tool's canonical value, as a frozen snapshot. */
function outputSchemaOf(remoteOutput: Record<string, unknown> | undefined): JsonSchemaNode {
  const schema: JsonSchemaNode = {
    type: 'object',
    properties: {
      content: contentSchema,
      structuredContent: supportedOrAny(remoteOutput),
      _meta: { type: 'object', description: 'Metadata the server attached to the result.' },
    },
    required: ['content'],
    additionalProperties: false,
  }
  return snapshotJsonValue(schema, 'outputSchema') as JsonSchemaNode
}

/** The remote output schema when toolgate's validator speaks its dialect; any JSON otherwise. */
function supportedOrAny(schema: Record<string, unknown> | undefined): JsonSchemaNode {
  if (schema === undefined) return { description: 'Structured content, when the server returns it.' }
  const { $schema: _ignored, ...rest } = schema
  try {
    const copy = snapshotJsonValue(rest, 'outputSchema')
    assertSupportedJsonSchema(copy)
    return copy as JsonSchemaNode
  } catch {
    return { description: 'Structured content as declared by the server (validated by the server).' }
  }
}

/**
 * Call a tool the server runs only as a task (MCP 2025-11-25 tasks): create the task, follow its
 * status with `tasks/get` (each status message is the call's progress), and take its result with
 * `tasks/result`, which also carries what the server asks meanwhile. An aborted call cancels the
 * task. (The SDK v2 Client has no task helpers of its own: tasks are an extension from 2026-07-28.)
 */
async function callAsTask(
  client: LegacyClient,
  params: { name: string; arguments: Record<string, unknown> },
  options: { signal: AbortSignal; timeout: number; resetTimeoutOnProgress: boolean },
  exec: ToolRunContext,
): Promise<CallToolResult> {
  let taskId: string | undefined
  const cancel = () => {
    if (taskId !== undefined)
      client.request('tasks/cancel', { taskId }, 'CancelTaskResult', { timeout: options.timeout }).catch(() => {})
  }
  exec.signal.addEventListener('abort', cancel, { once: true })
  try {
    const created = (await client.request('tools/call', { ...params, task: {} }, 'CreateTaskResult', options)) as {
      task: TaskState
    }
    let task = created.task
    taskId = task.taskId
    for (;;) {
      if (task.statusMessage) reportProgress(exec, { progress: 0, message: task.statusMessage })
      if (task.status === 'cancelled') throw new McpToolError(`the task ${taskId} was cancelled`)
      // Finished, failed, or asking its client: tasks/result answers once the task has its result.
      if (task.status === 'completed' || task.status === 'failed' || task.status === 'input_required')
        return (await client.request('tasks/result', { taskId }, 'CallToolResult', options)) as CallToolResult
      // A tiny pollInterval (0) would poll the server hundreds of times a second: it has a floor.
      await sleep(Math.max(TASK_POLL_FLOOR_MS, task.pollInterval ?? TASK_POLL_FLOOR_MS), undefined, {
        signal: options.signal,
      })
      task = (await client.request('tasks/get', { taskId }, 'GetTaskResult', options)) as TaskState
    }
  } finally {
    exec.signal.removeEventListener('abort', cancel)
  }
}

/** What `tasks/get` (and a created task) says of a task. */
interface TaskState {
  readonly taskId: string
  readonly status: string
  readonly statusMessage?: string
  readonly pollInterval?: number
}

/** The shortest wait between two `tasks/get` of one task, whatever pollInterval the server asks for. */
const TASK_POLL_FLOOR_MS = 100

/** Pass an MCP progress notification on as the call's own progress (which restarts an idle timeout). */
function reportProgress(exec: ToolRunContext, progress: { progress: number; total?: number; message?: string }) {
  const { total, message } = progress
  const fraction =
    typeof total === 'number' && total > 0 && Number.isFinite(progress.progress)
      ? Math.min(1, Math.max(0, progress.progress / total))
      : undefined
  try {
    exec.progress({
      ...(typeof message === 'string' ? { message } : {}),
      ...(fraction !== undefined ? { fraction } : {}),
    })
  } catch {
    // A malformed report (or one after the call settled) must not fail the call.
  }
}

async function createTransport(spec: McpServerSpec, maxMessageBytes: number): Promise<McpTransport> {
  if ('transport' in spec) return spec.transport
  if ('url' in spec) {
    const url = new URL(spec.url)
    if (url.protocol === 'http:' || url.protocol === 'https:') {
      // Ours over node:http; the SDK's (below) for any other scheme, which it reports failing.
      const { NodeHttpClientTransport } = await import('./http-client-transport.js')
      return new NodeHttpClientTransport(url, {
        headers: spec.headers,
        authProvider: spec.authProvider,
        ...(spec.headerProvider !== undefined ? { headerProvider: spec.headerProvider } : {}),
        maxMessageBytes,
      })
    }
    const [{ StreamableHTTPClientTransport }, { upstreamFetch }] = await Promise.all([
      import('@modelcontextprotocol/client'),
      import('./http-fetch.js'),
    ])
    return new StreamableHTTPClientTransport(url, {
      fetch: upstreamFetch,
      ...(spec.headers ? { requestInit: { headers: { ...spec.headers } } } : {}),
      // The caller's provider has the SDK's shape (McpOAuthProvider).
      ...(spec.authProvider ? { authProvider: spec.authProvider as never } : {}),
    }) as McpTransport
  }
  if (process.platform !== 'win32') {
    // Ours: it can take over a server the CLI spawned early. Windows keeps the SDK's, whose spawn
    // also finds `.cmd` shims there.
    const [{ LineStdioClientTransport }, { takeEarlySpawn }, { adoptHandshake }] = await Promise.all([
      import('./stdio-client-transport.js'),
      import('./stdio-spawn.js'),
      import('./raw-handshake.js'),
    ])
    const spawned = takeEarlySpawn(spec)
    const transport = new LineStdioClientTransport(spec, { maxBufferSize: maxMessageBytes, spawned })
    // The CLI's first script may have initialized it already: that handshake is adopted, not repeated.
    return spawned?.handshake === undefined ? transport : adoptHandshake(transport, spawned.handshake)
  }
  return (await sdkStdioTransport(spec, maxMessageBytes)) as McpTransport
}

function checkSpec(server: unknown): McpServerSpec {
  const fail = (detail: string): never => {
    throw new ConfigError('connectMcpServer(ctx, server)', detail)
  }
  if (typeof server !== 'object' || server === null)
    fail('expected { command, args?, env?, cwd? }, { url, headers? } or { transport }')
  const s = server as Record<string, unknown>
  if ('transport' in s) {
    if (typeof s.transport !== 'object' || s.transport === null) fail('server.transport: expected an MCP Transport')
  } else if ('url' in s) {
    if (typeof s.url !== 'string') fail('server.url: expected a string')
    try {
      new URL(s.url as string)
    } catch {
      fail(`server.url: "${String(s.url)}" is not a URL`)
    }
    checkStringRecord(s.headers, 'server.headers', fail)
    const auth = s.authProvider as { tokens?: unknown } | null | undefined
    if (auth !== undefined && (typeof auth !== 'object' || auth === null || typeof auth.tokens !== 'function'))
      fail('server.authProvider: expected an OAuthClientProvider (see createMcpOAuthProvider)')
  } else if ('command' in s) {
    if (typeof s.command !== 'string' || s.command === '') fail('server.command: expected a non-empty string')
    if (s.args !== undefined && !(Array.isArray(s.args) && s.args.every((a) => typeof a === 'string')))
      fail('server.args: expected an array of strings')
    checkStringRecord(s.env, 'server.env', fail)
    if (s.cwd !== undefined && typeof s.cwd !== 'string') fail('server.cwd: expected a string')
  } else {
    fail('expected { command, args?, env?, cwd? }, { url, headers? } or { transport }')
  }
  return server as McpServerSpec
}

function checkStringRecord(value: unknown, path: string, fail: (detail: string) => never): void {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(`${path}: expected an object of strings`)
  for (const [key, v] of Object.entries(value as Record<string, unknown>))
    if (typeof v !== 'string') fail(`${path}.${key}: expected a string`)
}

/** A name for a server that was given none: nothing that could hold a secret. */
function defaultName(spec: McpServerSpec): string {
  if ('transport' in spec) return 'custom transport'
  if ('url' in spec) {
    const url = new URL(spec.url)
    return `${url.origin}${url.pathname}`
  }
  return path.basename(spec.command) || 'stdio server'
}

/** What a message must not show: the command line, environment values, header values, the full URL. */
function secretsOf(spec: McpServerSpec): string[] {
  const all =
    'transport' in spec
      ? []
      : 'url' in spec
        ? [spec.url, ...Object.values(spec.headers ?? {})]
        : [spec.command, ...(spec.args ?? []), ...Object.values(spec.env ?? {})]
  // Longest first, so a value inside another is not masked half-way; very short ones would mask
  // ordinary words and hide nothing worth hiding.
  return [...new Set(all)].filter((text) => text.length >= 4).sort((a, b) => b.length - a.length)
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function warn(text: string): void {
  process.emitWarning(text, 'McpConnectionWarning')
}

/**
 * The blocks as one frozen snapshot, which the pipeline's snapshots of the value and of its
 * rendered content then reuse instead of copying them twice more; blocks that cannot be snapshotted
 * go on as they are, for the pipeline to refuse with its own error, as before.
 */
function snapshotOrAsIs(blocks: ContentBlock[]): ContentBlock[] {
  try {
    return snapshotJsonValue(blocks, 'content') as unknown as ContentBlock[]
  } catch {
    return blocks
  }
}
