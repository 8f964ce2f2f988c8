// What the upstream link and its catalog ask of a connected upstream, whatever revision it speaks:
// the SDK v2 Client answers it (a 2025-11-25 session through clientAdapter, a 2026-07-28 one
// through the adapter in modern-session.ts). toolgate's own shapes: no declaration here names an
// SDK package.
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  Tool,
} from '../protocol/wire-types.js'

type ListResult<K extends string, T> = { [key in K]: T[] } & { nextCursor?: string }
type ListToolsResult = ListResult<'tools', Tool>
type ListResourcesResult = ListResult<'resources', Resource>
type ListResourceTemplatesResult = ListResult<'resourceTemplates', ResourceTemplate>
type ListPromptsResult = ListResult<'prompts', Prompt>

/** Options of one request to an upstream (the SDK's request options have this shape). */
export interface UpstreamRequestOptions {
  readonly signal?: AbortSignal
  readonly timeout?: number
  readonly resetTimeoutOnProgress?: boolean
  readonly onprogress?: (progress: { progress: number; total?: number; message?: string }) => void
}

type Page = { cursor?: string } | undefined

/** The requests of a session with an upstream server (tool calls go their own way per era). */
export interface UpstreamClient {
  getServerCapabilities(): ServerCapabilities | undefined
  listTools(params?: Page, options?: UpstreamRequestOptions): Promise<ListToolsResult>
  listResources(params?: Page, options?: UpstreamRequestOptions): Promise<ListResourcesResult>
  listResourceTemplates(params?: Page, options?: UpstreamRequestOptions): Promise<ListResourceTemplatesResult>
  listPrompts(params?: Page, options?: UpstreamRequestOptions): Promise<ListPromptsResult>
  readResource(params: { uri: string }, options?: UpstreamRequestOptions): Promise<ReadResourceResult>
  subscribeResource(params: { uri: string }, options?: UpstreamRequestOptions): Promise<unknown>
  unsubscribeResource(params: { uri: string }, options?: UpstreamRequestOptions): Promise<unknown>
  getPrompt(
    params: { name: string; arguments?: Record<string, string> },
    options?: UpstreamRequestOptions,
  ): Promise<GetPromptResult>
  complete(params: CompleteRequest['params'], options?: UpstreamRequestOptions): Promise<CompleteResult>
  setLoggingLevel(level: string, options?: UpstreamRequestOptions): Promise<unknown>
  sendRootsListChanged(): Promise<void>
  close(): Promise<void>
  /** The session's transport, for its id (a Streamable HTTP session); none for a 2026-07-28 session. */
  readonly transport: { readonly sessionId?: string } | undefined
}

/** The protocol era a session speaks: `legacy` up to 2025-11-25, `modern` from 2026-07-28. */
export type McpProtocolEra = 'legacy' | 'modern'

/**
 * A failed request as toolgate reports it (the shape the SDK v1's `McpError` had, which messages
 * and relayed errors keep): the JSON-RPC `code`, the message after "MCP error CODE: ", its `data`.
 */
export class UpstreamRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`MCP error ${code}: ${message}`)
    this.name = 'McpError'
  }
}

/**
 * An SDK v2 error as toolgate has always reported it: a JSON-RPC error (`ProtocolError`) keeps its
 * code with "MCP error CODE: " before its message; a timeout and a closed connection (the SDK's
 * `SdkError` with a string code) become -32001 and -32000 as before. Anything else (a transport's
 * own error, say an HTTP status) goes on as it is.
 */
export function upstreamError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof UpstreamRpcError) return error
  const { code, data } = error as { code?: unknown; data?: unknown }
  if (error.name === 'ProtocolError' && typeof code === 'number') return new UpstreamRpcError(code, error.message, data)
  if (error.name === 'SdkError') {
    if (code === 'REQUEST_TIMEOUT') return new UpstreamRpcError(JsonRpcCode.RequestTimeout, error.message, data)
    if (code === 'CONNECTION_CLOSED') return new UpstreamRpcError(JsonRpcCode.ConnectionClosed, error.message, data)
    // A transport's failure to send (an HTTP error, a refused connection) is reported as it was.
    const cause = (error as { cause?: unknown }).cause
    if (code === 'SEND_FAILED' && cause instanceof Error) return cause
  }
  return error
}

/** `request`, its failure turned into {@link upstreamError}'s. */
export function upstreamRequest<T>(request: Promise<T>): Promise<T> {
  return request.catch((error: unknown) => {
    throw upstreamError(error)
  })
}

/** What {@link clientAdapter} reads of an SDK v2 Client (its public methods). */
// biome-ignore lint/suspicious/noExplicitAny: the SDK's overloaded methods, checked where the Client is made
type AnyMethod = (...args: any[]) => Promise<any>
export interface SdkClientLike {
  getServerCapabilities(): unknown
  listTools: AnyMethod
  listResources: AnyMethod
  listResourceTemplates: AnyMethod
  listPrompts: AnyMethod
  readResource: AnyMethod
  subscribeResource: AnyMethod
  unsubscribeResource: AnyMethod
  getPrompt: AnyMethod
  complete: AnyMethod
  setLoggingLevel: AnyMethod
  sendRootsListChanged(): Promise<void>
  close(): Promise<void>
  readonly transport: { readonly sessionId?: string } | undefined
}

/**
 * A 2025-11-25 session's SDK v2 Client as an {@link UpstreamClient}: the same requests, each failure
 * reported as {@link upstreamError} says. (A list asked for without a cursor comes back whole: the
 * v2 Client walks the pages itself.)
 */
export function clientAdapter(client: SdkClientLike): UpstreamClient {
  const page = (params: Page) => params
  return {
    getServerCapabilities: () => client.getServerCapabilities() as ServerCapabilities | undefined,
    listTools: (params, options) => upstreamRequest(client.listTools(page(params), options)),
    listResources: (params, options) => upstreamRequest(client.listResources(page(params), options)),
    listResourceTemplates: (params, options) => upstreamRequest(client.listResourceTemplates(page(params), options)),
    listPrompts: (params, options) => upstreamRequest(client.listPrompts(page(params), options)),
    readResource: (params, options) => upstreamRequest(client.readResource(params, options)),
    subscribeResource: (params, options) => upstreamRequest(client.subscribeResource(params, options)),
    unsubscribeResource: (params, options) => upstreamRequest(client.unsubscribeResource(params, options)),
    getPrompt: (params, options) => upstreamRequest(client.getPrompt(params, options)),
    complete: (params, options) => upstreamRequest(client.complete(params, options)),
    setLoggingLevel: (level, options) => upstreamRequest(client.setLoggingLevel(level, options)),
    sendRootsListChanged: () => upstreamRequest(client.sendRootsListChanged()),
    close: () => client.close(),
    get transport() {
      return client.transport
    },
  }
}

/**
 * Whether a failed `initialize` says the server speaks only a later revision: it answered -32022
 * (an SDK error carrying the code, or, over Streamable HTTP, the JSON-RPC error in the body of the
 * HTTP error our transport reports). Anything else is an ordinary failure.
 */
export function refusesLegacyEra(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (code === JsonRpcCode.UnsupportedProtocolVersion) return true
  const text = error instanceof Error ? error.message : undefined
  if (text === undefined || typeof code !== 'number' || code < 400 || code > 499) return false
  const start = text.indexOf('{')
  if (start < 0) return false
  try {
    const body = JSON.parse(text.slice(start)) as { error?: { code?: unknown } }
    return body?.error?.code === JsonRpcCode.UnsupportedProtocolVersion
  } catch {
    return false
  }
}

/** A Standard Schema (the SDK v2's schemas are), read through its one public method. */
export interface StandardSchema {
  readonly '~standard': { validate(value: unknown): StandardResult | Promise<StandardResult> }
}

type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | { readonly issues: readonly { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] }[] }

/**
 * `value` checked against an SDK schema: the parsed value, or what is wrong with it, each problem
 * as `path: message` (`(result)` for the value itself).
 */
export function checkWithSchema(
  schema: StandardSchema,
  value: unknown,
): { ok: true; value: unknown } | { ok: false; problems: string } {
  const result = schema['~standard'].validate(value)
  // The SDK's schemas are synchronous; a promise would mean another kind of schema.
  if (result instanceof Promise) return { ok: false, problems: '(result): the schema is not synchronous' }
  if (result.issues === undefined) return { ok: true, value: result.value }
  const problems = result.issues
    .map((issue) => {
      const path = (issue.path ?? []).map((key) => String(typeof key === 'object' ? key.key : key))
      return `${path.length ? path.join('.') : '(result)'}: ${issue.message}`
    })
    .join('; ')
  return { ok: false, problems }
}
