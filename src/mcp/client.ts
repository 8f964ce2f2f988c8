// connectMcpServer(): a remote MCP server's tools as ordinary toolgate registrations, so every
// policy (guards, approvals, timeouts, Code Mode) applies to them as to native tools.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'cordis'
import type { ContentBlock } from '../contract/content.js'
import type { Agent, ToolRunContext } from '../contract/execution.js'
import type { JsonSchemaNode } from '../contract/json-schema.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { ToolgateError } from '../errors/toolgate-error.js'
import { snapshotJsonValue } from '../json/index.js'
import { assertSupportedJsonSchema } from '../schema/assert.js'
import { fromMcpContent } from './content.js'
import { type McpToolAnnotations, setMcpToolMeta } from './tool-meta.js'

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
    }
  | {
      /** A transport you built; it cannot be reopened, so there is no reconnect after it closes. */
      readonly transport: Transport
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
   * Largest message read from a stdio server, in bytes (default 10 MiB, the SDK's). A larger one
   * drops the connection and fails the call it answered with an error that says so.
   */
  readonly maxMessageBytes?: number
}

/** A live connection; its tools are registered while it is open. */
export interface McpConnection {
  /** The registered (prefixed) tool names, in the server's order. */
  readonly tools: readonly string[]
  /** The prefix given to the remote names. */
  readonly prefix: string
  /** Whether a session to the server is open right now (calls reconnect when it is not). */
  readonly connected: boolean
  /** Re-list the server's tools and update the registrations. */
  refresh(): Promise<void>
  /** Close the session and remove every registration. Idempotent. */
  close(): Promise<void>
}

const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' }
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000
const CONNECTION_CLOSED = -32000
const REQUEST_TIMEOUT = -32001
/** The SDK's stdio read limit, kept as the default. */
const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024

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
const contentSchema: JsonSchemaNode = {
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
}

/** The value an imported tool resolves with. */
interface ImportedValue {
  content: ContentBlock[]
  structuredContent?: JsonValue
  _meta?: JsonValue
}

/** A remote tool failed: the server answered `isError: true`, closed, or timed out. */
export class McpToolError extends ToolgateError {
  readonly code = 'MCP_TOOL_ERROR' as const
  constructor(message: string) {
    super(message)
    this.name = 'McpToolError'
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
 * Rejects when the first connection or listing fails.
 */
export async function connectMcpServer(
  ctx: Context,
  server: McpServerSpec,
  options: ConnectMcpServerOptions = {},
): Promise<McpConnection> {
  const link = new UpstreamLink(ctx, checkSpec(server), checkOptions(options))
  await link.start()
  return link.connection()
}

/** The checked options of {@link connectMcpServer}. */
interface LinkSettings {
  readonly prefix: string
  readonly requestTimeoutMs: number
  readonly maxMessageBytes: number
  readonly owner: Context
}

function checkOptions(options: ConnectMcpServerOptions): Omit<LinkSettings, 'owner'> & { agent?: Agent } {
  const prefix = options.prefix ?? ''
  if (typeof prefix !== 'string')
    throw new ConfigError('connectMcpServer(ctx, server, options).prefix', 'expected a string')
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
  return { prefix, requestTimeoutMs, maxMessageBytes, agent: options.agent }
}

/** One open session with the server: the SDK client, and why its transport gave up if it did. */
interface Session {
  readonly client: Client
  /** Set when the server sent a message over the size limit (the SDK then drops the connection). */
  oversized: boolean
}

/** A registered remote tool: what it was registered from (to notice changes) and how to remove it. */
interface Registration {
  readonly key: string | undefined
  readonly name: string
  readonly dispose: () => void
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
  private readonly registered = new Map<string, Registration>()
  /** Tools skipped at the last listing, by remote name, with the key they were skipped at (warned once). */
  private readonly skipped = new Map<string, string | undefined>()
  private refreshing: Promise<void> = Promise.resolve()
  /**
   * The content of a failed remote call, by execution, until the pipeline finalizes that call: a
   * thrown error carries only its message, so the finalizer puts the server's own blocks back.
   */
  private readonly failedContent = new Map<ToolRunContext['token'], ContentBlock[]>()
  private disposeEffect: (() => unknown) | undefined

  constructor(
    private readonly ctx: Context,
    private readonly spec: McpServerSpec,
    options: Omit<LinkSettings, 'owner'> & { agent?: Agent },
  ) {
    const { agent, ...rest } = options
    this.settings = { ...rest, owner: agent?.ctx ?? ctx }
    this.label = describeSpec(spec)
  }

  /** The first connection and listing; on failure everything started is closed again. */
  async start(): Promise<void> {
    try {
      await this.refresh()
    } catch (error) {
      await this.close()
      throw error
    }
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
        return [...link.registered.values()].map((entry) => entry.name)
      },
      prefix: this.settings.prefix,
      get connected() {
        return link.session !== undefined
      },
      refresh: () => this.refresh(),
      close: () => this.close(),
    }
  }

  /** Start a session: spawn or dial the server, initialize, follow its list_changed notifications. */
  private async open(): Promise<Session> {
    const { label } = this
    if ('transport' in this.spec && this.usedTransport)
      throw new McpToolError(`MCP server ${label}: the connection closed and a given transport cannot be reopened`)
    const [{ Client }, { ToolListChangedNotificationSchema }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ])
    const transport = await createTransport(this.spec, this.settings.maxMessageBytes)
    this.usedTransport = true
    const client = new Client(CLIENT_INFO, { capabilities: {} })
    const session: Session = { client, oversized: false }
    // The SDK reports an oversized message here and then closes; the call it was answering only
    // sees "connection closed", so the real cause is kept for its error.
    transport.onerror = (error) => {
      if (/exceeded maximum size/i.test(error.message)) session.oversized = true
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.refresh().catch((error) => warn(`MCP server ${label}: re-listing tools failed: ${message(error)}`))
    })
    client.onclose = () => {
      if (this.session === session) this.session = undefined
    }
    try {
      await client.connect(transport, { timeout: this.settings.requestTimeoutMs })
    } catch (error) {
      await client.close().catch(() => {})
      throw new McpToolError(`MCP server ${label} did not start: ${message(error)}`)
    }
    if (this.closed) {
      await client.close().catch(() => {})
      throw new McpToolError(`MCP server ${label}: the connection was closed`)
    }
    this.session = session
    this.sessions++
    return session
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
            warn(`MCP server ${this.label}: re-listing tools after reconnecting failed: ${message(error)}`),
          )
    }
    return this.connecting
  }

  /** One `tools/call`, its failures turned into {@link McpToolError}s that say what happened. */
  private async callRemote(remoteName: string, args: unknown, exec: ToolRunContext): Promise<ImportedValue> {
    const session = await this.ensure()
    const c = session.client
    let result: Awaited<ReturnType<Client['callTool']>>
    try {
      result = await c.callTool({ name: remoteName, arguments: args as Record<string, unknown> }, undefined, {
        signal: exec.signal,
        timeout: this.settings.requestTimeoutMs,
        resetTimeoutOnProgress: true,
        onprogress: (progress) => reportProgress(exec, progress),
      })
    } catch (error) {
      if (exec.signal.aborted) throw error
      throw this.callFailure(error, session)
    }
    const blocks = Array.isArray(result.content) ? result.content.map(fromMcpContent) : []
    if (result.isError === true) {
      const text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
      // After a deadline or cancellation the call is already finalized: nothing would take them.
      if (blocks.length > 0 && !exec.signal.aborted) this.failedContent.set(exec.token, blocks)
      throw new McpToolError(text || `${remoteName} failed without a message`)
    }
    const value: ImportedValue = { content: blocks }
    if (result.structuredContent !== undefined)
      value.structuredContent = snapshotJsonValue(result.structuredContent, 'structuredContent')
    if (result._meta !== undefined) value._meta = snapshotJsonValue(result._meta, '_meta')
    return value
  }

  private callFailure(error: unknown, session: Session): McpToolError {
    const { label } = this
    const code = (error as { code?: unknown }).code
    // A hung server is dropped so the next call starts a fresh session.
    if (code === REQUEST_TIMEOUT && this.session === session) {
      this.session = undefined
      session.client.close().catch(() => {})
    }
    if (code === CONNECTION_CLOSED && session.oversized)
      return new McpToolError(
        `MCP server ${label} sent a message larger than the ${this.settings.maxMessageBytes}-byte limit ` +
          '(the maxMessageBytes option), so the connection was dropped (it reconnects on the next call)',
      )
    if (code === CONNECTION_CLOSED)
      return new McpToolError(
        `MCP server ${label} closed the connection during the call (it reconnects on the next call)`,
      )
    return new McpToolError(`MCP server ${label}: ${message(error)}`)
  }

  /** Every page of `tools/list`. */
  private async listAll(): Promise<Tool[]> {
    const { client } = await this.ensure()
    const listed: Tool[] = []
    let cursor: string | undefined
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: this.settings.requestTimeoutMs,
      })
      listed.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return listed
  }

  /** Bring the registrations in line with the server's list: add, replace what changed, remove what went. */
  private async sync(): Promise<void> {
    const listed = await this.listAll()
    if (this.closed) return
    const seen = new Set<string>()
    for (const tool of listed) {
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
    try {
      const dispose = this.settings.owner.tools.register(
        definitionOf(
          tool,
          name,
          (args, exec) => this.callRemote(tool.name, args, exec),
          (token) => this.takeFailedContent(token),
        ),
      )
      this.registered.set(tool.name, { key, name, dispose })
      this.skipped.delete(tool.name)
    } catch (error) {
      const warned = this.skipped.has(tool.name) && this.skipped.get(tool.name) === key
      this.skipped.set(tool.name, key)
      if (!warned) warn(`MCP server ${this.label}: skipped tool "${tool.name}": ${message(error)}`)
    }
  }

  private takeFailedContent(token: ToolRunContext['token']): ContentBlock[] | undefined {
    const content = this.failedContent.get(token)
    this.failedContent.delete(token)
    return content
  }

  /** Serialize listings: a burst of list_changed notifications re-lists once per notification, in order. */
  refresh(): Promise<void> {
    const sync = () => this.sync()
    const run = this.refreshing.then(sync, sync)
    this.refreshing = run.catch(() => {})
    return run
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const entry of this.registered.values()) entry.dispose()
    this.registered.clear()
    const session = this.session
    this.session = undefined
    await session?.client.close().catch(() => {})
    this.disposeEffect?.()
  }
}

/**
 * What a listed tool was registered from, to notice when the server changes it; undefined when it
 * cannot be serialized (a schema too deep for JSON.stringify), which registration refuses anyway.
 */
function changeKey(tool: Tool): string | undefined {
  try {
    return JSON.stringify([tool.description, tool.title, tool.inputSchema, tool.outputSchema, tool.annotations])
  } catch {
    return undefined
  }
}

/** The toolgate definition of a remote tool, registered as `name` and run by `call`. */
function definitionOf(
  tool: Tool,
  name: string,
  call: (args: unknown, exec: ToolRunContext) => Promise<ImportedValue>,
  failedContent: (token: ToolRunContext['token']) => ContentBlock[] | undefined,
): ToolDefinition {
  const annotations = tool.annotations as McpToolAnnotations | undefined
  const remoteOutput = tool.outputSchema as Record<string, unknown> | undefined
  const definition: ToolDefinition = {
    name,
    description: tool.description ?? tool.title ?? '',
    parameters: snapshotJsonValue(tool.inputSchema, `tools[${tool.name}].inputSchema`),
    output: {
      schema: {
        type: 'object',
        properties: {
          content: contentSchema,
          structuredContent: supportedOrAny(remoteOutput),
          _meta: { type: 'object', description: 'Metadata the server attached to the result.' },
        },
        required: ['content'],
        additionalProperties: false,
      },
      render: (_args, value) => (value as unknown as ImportedValue).content,
    },
    execute: call,
    // A server's failure keeps its own blocks (images, resources, annotations), not only its text.
    finalizeContent: (exec, result) => {
      const content = failedContent(exec.token)
      return result.isError && result.error.info?.code === 'MCP_TOOL_ERROR' ? content : undefined
    },
  }
  if (annotations?.readOnlyHint === true) definition.isConcurrencySafe = () => true
  setMcpToolMeta(definition, {
    imported: true,
    annotations,
    outputSchema: remoteOutput,
  })
  return definition
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

async function createTransport(spec: McpServerSpec, maxMessageBytes: number): Promise<Transport> {
  if ('transport' in spec) return spec.transport
  if ('url' in spec) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    return new StreamableHTTPClientTransport(new URL(spec.url), {
      requestInit: spec.headers ? { headers: { ...spec.headers } } : undefined,
    })
  }
  const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js')
  return new StdioClientTransport({
    command: spec.command,
    args: spec.args ? [...spec.args] : undefined,
    env: { ...getDefaultEnvironment(), ...spec.env },
    cwd: spec.cwd,
    stderr: 'inherit',
    maxBufferSize: maxMessageBytes,
  })
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

function describeSpec(spec: McpServerSpec): string {
  if ('transport' in spec) return '(custom transport)'
  if ('url' in spec) return spec.url
  return JSON.stringify([spec.command, ...(spec.args ?? [])].join(' '))
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function warn(text: string): void {
  process.emitWarning(text, 'McpConnectionWarning')
}
