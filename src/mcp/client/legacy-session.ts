// A session with an upstream in MCP 2025-11-25 (initialize, then requests), on the SDK v2 Client,
// loaded only here, at the first connection. The Client runs the plain 2025 handshake
// (`versionNegotiation` left at `legacy`): the link itself moves to 2026-07-28 when a server
// refuses it (see UpstreamLink.open in client.ts). What the link asks of it is toolgate's own shape
// (no declaration here names an SDK package); its failures keep the codes and messages toolgate
// has always reported (upstreamError).
import type { ToolExecution } from '../../contract/execution.js'
import type { McpCapabilityHandlers } from '../protocol/capability-handlers.js'
import type { SchemaValidators } from '../protocol/lazy-json-schema-validator.js'
import type { CallToolResult, McpTransport } from '../protocol/wire-types.js'
import { type CapabilityResultSchemas, declaredCapabilities, registerCapabilityHandlers } from './capabilities.js'
import {
  clientAdapter,
  type StandardSchema,
  type UpstreamClient,
  type UpstreamRequestOptions,
  upstreamRequest,
} from './upstream-client.js'

const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' }

/** The notifications a session follows, by method, each handler given the notification's params. */
export type LegacyNotificationHandlers = Readonly<Record<string, (params: Record<string, unknown>) => void>>

/** What {@link openLegacyClient} makes a session from. */
export interface LegacyClientOptions {
  readonly handlers: McpCapabilityHandlers
  /** The server's name as messages show it (quoted). */
  readonly label: string
  /** The calls a server's request may belong to (see McpRequestContext.calls). */
  readonly calls: () => readonly ToolExecution[]
  readonly notifications?: LegacyNotificationHandlers
  /** Compiles the output schemas of listed tools (the Client checks a call's structured content). */
  readonly validators?: SchemaValidators
}

/** A result schema of the SDK, by its name in the schema. */
type SchemaName = 'CallToolResult' | 'CreateTaskResult' | 'GetTaskResult' | 'CancelTaskResult'

/** A 2025-11-25 session (not yet connected): the upstream's requests, tool calls and tasks. */
export interface LegacyClient extends UpstreamClient {
  connect(transport: McpTransport, options: { timeout: number }): Promise<void>
  /** `tools/call`, the result checked against the listed tool's output schema. */
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    options: UpstreamRequestOptions,
  ): Promise<CallToolResult>
  /** Any request of the 2025 protocol, its result checked against the SDK's schema `schema`. */
  request(
    method: string,
    params: Record<string, unknown>,
    schema: SchemaName,
    options: UpstreamRequestOptions,
  ): Promise<unknown>
  /** The revision the server agreed to, once connected. */
  protocolVersion(): string | undefined
  /** The SDK's `CallToolResult` schema, for the fast path's uncommon results. */
  readonly callToolResultSchema: StandardSchema
  onclose: (() => void) | undefined
  onerror: ((error: Error) => void) | undefined
}

/** Make a 2025-11-25 client that declares and answers the handlers' capabilities. */
export async function openLegacyClient(options: LegacyClientOptions): Promise<LegacyClient> {
  const sdk = await import('@modelcontextprotocol/client')
  const { handlers, label } = options
  const client = new sdk.Client(CLIENT_INFO, {
    // toolgate's own declaration; the SDK checks it on the wire.
    capabilities: declaredCapabilities(handlers) as never,
    ...(options.validators ? { jsonSchemaValidator: options.validators } : {}),
    // The link walks what it lists, as the v1 Client let it; no cap beyond the server's own end.
    listMaxPages: 0,
  })
  const schemas = sdk.specTypeSchemas as unknown as CapabilityResultSchemas & Record<SchemaName, StandardSchema>
  registerCapabilityHandlers(
    (method, handler) =>
      client.setRequestHandler(method, ((
        request: { params?: Record<string, unknown> },
        ctx: { mcpReq: { signal: AbortSignal } },
      ) => handler(request.params ?? {}, ctx.mcpReq.signal)) as never),
    schemas,
    handlers,
    label,
    options.calls,
  )
  for (const [method, handler] of Object.entries(options.notifications ?? {}))
    client.setNotificationHandler(
      method as 'notifications/message',
      ((notification: { params?: Record<string, unknown> }) => handler(notification.params ?? {})) as never,
    )
  const adapter = clientAdapter(client)
  // A listing is always fetched (a server's ttlMs must not make the link serve an old list); it
  // still lands in the Client's cache, whose output schemas callTool checks against.
  const fresh = (options: UpstreamRequestOptions | undefined) => ({ ...options, cacheMode: 'refresh' as const })
  return {
    ...adapter,
    listTools: (params, opts) => adapter.listTools(params, fresh(opts)),
    listResources: (params, opts) => adapter.listResources(params, fresh(opts)),
    listResourceTemplates: (params, opts) => adapter.listResourceTemplates(params, fresh(opts)),
    listPrompts: (params, opts) => adapter.listPrompts(params, fresh(opts)),
    get transport() {
      return client.transport
    },
    connect: (transport, connectOptions) => upstreamRequest(client.connect(transport as never, connectOptions)),
    callTool: (params, callOptions) => upstreamRequest(client.callTool(params, callOptions)) as Promise<CallToolResult>,
    request: (method, params, schema, requestOptions) =>
      upstreamRequest(client.request({ method, params }, sdk.specTypeSchemas[schema], requestOptions)),
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    callToolResultSchema: schemas.CallToolResult,
    get onclose() {
      return client.onclose
    },
    set onclose(handler) {
      client.onclose = handler
    },
    get onerror() {
      return client.onerror
    },
    set onerror(handler) {
      client.onerror = handler
    },
  }
}
