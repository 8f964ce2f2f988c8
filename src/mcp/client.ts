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

/** Output schema of an imported tool's canonical value. */
const contentSchema: JsonSchemaNode = {
  type: 'array',
  description: 'The content blocks the server returned.',
  items: {
    oneOf: [
      {
        type: 'object',
        properties: { type: { const: 'text' }, text: { type: 'string' } },
        required: ['type', 'text'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { type: { const: 'image' }, mediaType: { type: 'string' }, data: { type: 'string' } },
        required: ['type', 'mediaType', 'data'],
        additionalProperties: false,
      },
    ],
  },
}

/** The value an imported tool resolves with. */
interface ImportedValue {
  content: ContentBlock[]
  structuredContent?: JsonValue
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
 * error results and reconnects on the next call. Closing the connection, or disposing `ctx`,
 * closes the session and removes the registrations. Rejects when the first connection or listing
 * fails, or a remote tool cannot be registered (e.g. its prefixed name is already taken).
 */
export async function connectMcpServer(
  ctx: Context,
  server: McpServerSpec,
  options: ConnectMcpServerOptions = {},
): Promise<McpConnection> {
  const spec = checkSpec(server)
  const prefix = options.prefix ?? ''
  if (typeof prefix !== 'string')
    throw new ConfigError('connectMcpServer(ctx, server, options).prefix', 'expected a string')
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  if (!(typeof requestTimeoutMs === 'number' && requestTimeoutMs > 0 && Number.isFinite(requestTimeoutMs)))
    throw new ConfigError(
      'connectMcpServer(ctx, server, options).requestTimeoutMs',
      'expected a positive number of milliseconds',
    )
  const owner = options.agent?.ctx ?? ctx
  const label = describeSpec(spec)

  let client: Client | undefined
  let connecting: Promise<Client> | undefined
  let closed = false
  let usedTransport = false
  let sessions = 0
  const registered = new Map<string, { key: string; name: string; dispose: () => void }>()
  let refreshing: Promise<void> = Promise.resolve()

  const open = async (): Promise<Client> => {
    if ('transport' in spec && usedTransport)
      throw new McpToolError(`MCP server ${label}: the connection closed and a given transport cannot be reopened`)
    const [{ Client }, { ToolListChangedNotificationSchema }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ])
    const transport = await createTransport(spec)
    usedTransport = true
    const next = new Client(CLIENT_INFO, { capabilities: {} })
    next.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      refresh().catch((error) => warn(`MCP server ${label}: re-listing tools failed: ${message(error)}`))
    })
    next.onclose = () => {
      if (client === next) client = undefined
    }
    try {
      await next.connect(transport, { timeout: requestTimeoutMs })
    } catch (error) {
      await next.close().catch(() => {})
      throw new McpToolError(`MCP server ${label} did not start: ${message(error)}`)
    }
    if (closed) {
      await next.close().catch(() => {})
      throw new McpToolError(`MCP server ${label}: the connection was closed`)
    }
    client = next
    sessions++
    return next
  }

  /** The live client, reconnecting (and re-listing) when the last session ended. */
  const ensure = async (): Promise<Client> => {
    if (closed) throw new McpToolError(`MCP server ${label}: the connection was closed`)
    if (client) return client
    if (!connecting) {
      const reconnecting = sessions > 0
      connecting = open().finally(() => {
        connecting = undefined
      })
      // A new session may serve a different tool list.
      if (reconnecting)
        connecting
          .then(
            () => refresh(),
            () => {}, // the call that reconnected reports the failure itself
          )
          .catch((error) => warn(`MCP server ${label}: re-listing tools after reconnecting failed: ${message(error)}`))
    }
    return connecting
  }

  const callRemote = async (remoteName: string, args: unknown, exec: ToolRunContext): Promise<ImportedValue> => {
    const c = await ensure()
    let result: Awaited<ReturnType<Client['callTool']>>
    try {
      result = await c.callTool({ name: remoteName, arguments: args as Record<string, unknown> }, undefined, {
        signal: exec.signal,
        timeout: requestTimeoutMs,
        resetTimeoutOnProgress: true,
        onprogress: (progress) => reportProgress(exec, progress),
      })
    } catch (error) {
      if (exec.signal.aborted) throw error
      const code = (error as { code?: unknown }).code
      // A hung server is dropped so the next call starts a fresh session.
      if (code === REQUEST_TIMEOUT && client === c) {
        client = undefined
        c.close().catch(() => {})
      }
      if (code === CONNECTION_CLOSED)
        throw new McpToolError(
          `MCP server ${label} closed the connection during the call (it reconnects on the next call)`,
        )
      throw new McpToolError(`MCP server ${label}: ${message(error)}`)
    }
    const blocks = Array.isArray(result.content) ? result.content.map(fromMcpContent) : []
    if (result.isError === true) {
      const text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
      throw new McpToolError(text || `${remoteName} failed without a message`)
    }
    const value: ImportedValue = { content: blocks }
    if (result.structuredContent !== undefined)
      value.structuredContent = snapshotJsonValue(result.structuredContent, 'structuredContent')
    return value
  }

  const definitionOf = (tool: Tool): ToolDefinition => {
    const name = prefix + tool.name
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
          },
          required: ['content'],
          additionalProperties: false,
        },
        render: (_args, value) => (value as unknown as ImportedValue).content,
      },
      execute: (args, exec) => callRemote(tool.name, args, exec),
    }
    if (annotations?.readOnlyHint === true) definition.isConcurrencySafe = () => true
    setMcpToolMeta(definition, {
      imported: true,
      annotations,
      outputSchema: remoteOutput,
    })
    return definition
  }

  const sync = async (): Promise<void> => {
    const c = await ensure()
    const listed: Tool[] = []
    let cursor: string | undefined
    do {
      const page = await c.listTools(cursor === undefined ? undefined : { cursor }, { timeout: requestTimeoutMs })
      listed.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    if (closed) return
    const seen = new Set<string>()
    const failures: string[] = []
    for (const tool of listed) {
      seen.add(tool.name)
      const key = JSON.stringify([tool.description, tool.title, tool.inputSchema, tool.outputSchema, tool.annotations])
      const existing = registered.get(tool.name)
      if (existing?.key === key) continue
      existing?.dispose()
      registered.delete(tool.name)
      try {
        const dispose = owner.tools.register(definitionOf(tool))
        registered.set(tool.name, { key, name: prefix + tool.name, dispose })
      } catch (error) {
        failures.push(message(error))
      }
    }
    for (const [remoteName, entry] of registered) {
      if (seen.has(remoteName)) continue
      entry.dispose()
      registered.delete(remoteName)
    }
    if (failures.length) throw new McpToolError(`MCP server ${label}: ${failures.join('\n')}`)
  }

  // Serialize listings: a burst of list_changed notifications re-lists once per notification, in order.
  const refresh = (): Promise<void> => {
    const run = refreshing.then(sync, sync)
    refreshing = run.catch(() => {})
    return run
  }

  const unregisterAll = () => {
    for (const entry of registered.values()) entry.dispose()
    registered.clear()
  }

  let disposeEffect: (() => unknown) | undefined
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    unregisterAll()
    const c = client
    client = undefined
    await c?.close().catch(() => {})
    disposeEffect?.()
  }

  try {
    await refresh()
  } catch (error) {
    await close()
    throw error
  }
  disposeEffect = ctx.effect(
    () => () => {
      void close()
    },
    `connectMcpServer(${label})`,
  )

  return {
    get tools() {
      return [...registered.values()].map((entry) => entry.name)
    },
    prefix,
    get connected() {
      return client !== undefined
    },
    refresh,
    close,
  }
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

async function createTransport(spec: McpServerSpec): Promise<Transport> {
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
