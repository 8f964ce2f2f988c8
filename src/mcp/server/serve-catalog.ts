// The resources, prompts and completions a served scope offers besides its tools: createMcpServer's
// `catalog` option, its capabilities declared only for the parts given, every request passed to
// the source, subscriptions kept per client and released when the client goes.

import { ConfigError } from '../../errors/config-error.js'
import type { McpCapabilityHandlers } from '../protocol/capability-handlers.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { McpListKind } from '../protocol/list-kind.js'
import type {
  AuthInfo,
  ClientCapabilities,
  CompleteRequest,
  CompleteResult,
  ElicitRequestFormParams,
  ElicitResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
} from '../protocol/wire-types.js'
import { requestInput, type SendToClient } from './request-input.js'

/**
 * What a served scope offers besides tools. Each part given is declared to the client (`resources`,
 * with `subscribe` when the source can subscribe; `prompts`; `completions`), and a part left out
 * is not: its methods answer "method not found".
 */
export interface McpServerCatalog {
  readonly resources?: McpResourceSource
  readonly prompts?: McpPromptSource
  /** Answers `completion/complete` for prompt and resource-template arguments. */
  readonly complete?: (params: CompleteRequest['params'], context: McpServeContext) => Promise<CompleteResult>
  /**
   * Start telling `listener` when the resources (or templates) or the prompts change; returns how
   * to stop (called when the server closes). When given, `listChanged` is declared, and each
   * change reaches the client as `notifications/resources/list_changed` or `…/prompts/list_changed`.
   */
  readonly watch?: (listener: (kind: McpListKind) => void) => () => void
}

/** The resources served. */
export interface McpResourceSource {
  /** The whole list (served as one page). */
  list(context: McpServeContext): Promise<readonly Resource[]>
  /** The resource templates (default none). */
  templates?(context: McpServeContext): Promise<readonly ResourceTemplate[]>
  read(uri: string, context: McpServeContext): Promise<ReadResourceResult>
  /**
   * The client subscribed to `uri`: call `subscriber(uri)` on each update until `unsubscribe` with
   * the same subscriber. Given, the server declares `subscribe`; each server (one per client)
   * passes its own subscriber, and unsubscribes whatever is left when it closes.
   */
  subscribe?(uri: string, subscriber: McpResourceSubscriber, context: McpServeContext): Promise<void>
  unsubscribe?(uri: string, subscriber: McpResourceSubscriber): Promise<void>
}

/** Receives the URI of each update of a subscribed resource. */
export type McpResourceSubscriber = (uri: string) => void

/** The prompts served. */
export interface McpPromptSource {
  /** The whole list (served as one page). */
  list(context: McpServeContext): Promise<readonly Prompt[]>
  get(name: string, args: Readonly<Record<string, string>>, context: McpServeContext): Promise<GetPromptResult>
}

/** What a source receives with each client request. */
export interface McpServeContext {
  /** Aborted when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal
  /** Who is asking, when the transport authenticated the request (the SDK's `extra.authInfo`). */
  readonly authInfo?: AuthInfo
  /**
   * Ask the client's user a yes-or-no question (an elicitation with one boolean). Resolves with
   * whether the user approved; false when the client cannot be asked (it did not declare
   * elicitation), declined, cancelled or failed, with the reason.
   */
  confirm(question: string, title: string): Promise<{ readonly approved: boolean; readonly reason: string }>
  /**
   * Handlers that ask this request's client (on the request's own stream) what an upstream asks
   * while answering it, each kind only when the client declared it: give them as
   * `McpConnection.getPrompt`'s `input`. Absent where the client is asked otherwise (an MCP
   * 2026-07-28 client answers by retrying).
   */
  readonly input?: McpCapabilityHandlers
}

/** How long a person may take to answer a confirmation. */
const CONFIRM_TIMEOUT_MS = 10 * 60_000

/** Check the option (path-qualified errors). */
export function checkCatalog(catalog: unknown, at: string): McpServerCatalog {
  if (typeof catalog !== 'object' || catalog === null) throw new ConfigError(at, 'expected an object')
  const c = catalog as Record<string, unknown>
  const fn = (value: unknown, path: string, required: boolean) => {
    if (value === undefined && !required) return
    if (typeof value !== 'function') throw new ConfigError(path, 'expected a function')
  }
  for (const [key, methods] of [
    ['resources', ['list', 'read']],
    ['prompts', ['list', 'get']],
  ] as const) {
    const source = c[key]
    if (source === undefined) continue
    if (typeof source !== 'object' || source === null) throw new ConfigError(`${at}.${key}`, 'expected an object')
    for (const method of methods) fn((source as Record<string, unknown>)[method], `${at}.${key}.${method}`, true)
  }
  const resources = c.resources as Record<string, unknown> | undefined
  if (resources) {
    fn(resources.templates, `${at}.resources.templates`, false)
    fn(resources.subscribe, `${at}.resources.subscribe`, false)
    fn(resources.unsubscribe, `${at}.resources.unsubscribe`, resources.subscribe !== undefined)
  }
  fn(c.complete, `${at}.complete`, false)
  fn(c.watch, `${at}.watch`, false)
  return catalog as McpServerCatalog
}

/**
 * The catalog's requests, whatever the protocol era that carries them: each takes the request's
 * params and what the source receives, and throws the client's JSON-RPC error (see {@link rpcError}).
 * Only the parts the catalog has are present.
 */
export interface CatalogMethods {
  readonly 'resources/list'?: (params: unknown, context: McpServeContext) => Promise<{ resources: Resource[] }>
  readonly 'resources/templates/list'?: (
    params: unknown,
    context: McpServeContext,
  ) => Promise<{ resourceTemplates: ResourceTemplate[] }>
  readonly 'resources/read'?: (params: { uri: string }, context: McpServeContext) => Promise<ReadResourceResult>
  readonly 'prompts/list'?: (params: unknown, context: McpServeContext) => Promise<{ prompts: Prompt[] }>
  readonly 'prompts/get'?: (
    params: { name: string; arguments?: Record<string, string> },
    context: McpServeContext,
  ) => Promise<GetPromptResult>
  readonly 'completion/complete'?: (
    params: CompleteRequest['params'],
    context: McpServeContext,
  ) => Promise<CompleteResult>
}

/** The capabilities a catalog declares (`subscribe` only where the era has resource subscriptions). */
export function catalogCapabilities(catalog: McpServerCatalog, subscriptions: boolean): ServerCapabilities {
  const { resources, prompts, complete, watch } = catalog
  const listChanged = watch !== undefined
  const capabilities: ServerCapabilities = {}
  if (resources) capabilities.resources = { subscribe: subscriptions && resources.subscribe !== undefined, listChanged }
  if (prompts) capabilities.prompts = { listChanged }
  if (complete) capabilities.completions = {}
  return capabilities
}

/** The era-neutral bodies of the catalog's requests (see {@link CatalogMethods}). */
export function catalogMethods(catalog: McpServerCatalog): CatalogMethods {
  const { resources, prompts, complete } = catalog
  // Whatever the source throws becomes the client's JSON-RPC error, keeping a numeric code.
  const guarded =
    <P, T>(run: (params: P, context: McpServeContext) => Promise<T>) =>
    async (params: P, context: McpServeContext): Promise<T> => {
      try {
        return await run(params, context)
      } catch (error) {
        throw rpcError(error)
      }
    }
  return {
    ...(resources
      ? {
          'resources/list': guarded(async (_params: unknown, context) => ({
            resources: [...(await resources.list(context))],
          })),
          'resources/templates/list': guarded(async (_params: unknown, context) => ({
            resourceTemplates: [...((await resources.templates?.(context)) ?? [])],
          })),
          'resources/read': guarded((params: { uri: string }, context) => resources.read(params.uri, context)),
        }
      : {}),
    ...(prompts
      ? {
          'prompts/list': guarded(async (_params: unknown, context) => ({
            prompts: [...(await prompts.list(context))],
          })),
          'prompts/get': guarded((params: { name: string; arguments?: Record<string, string> }, context) =>
            prompts.get(params.name, params.arguments ?? {}, context),
          ),
        }
      : {}),
    ...(complete
      ? { 'completion/complete': guarded((params: CompleteRequest['params'], context) => complete(params, context)) }
      : {}),
  }
}

/** What one request's handler knows: its cancellation, its caller, and how to ask its client. */
export interface CatalogRequest {
  readonly signal: AbortSignal
  readonly authInfo?: AuthInfo
  /** Send `elicitation/create` to the client on this request's stream. */
  elicit(params: ElicitRequestFormParams, options: { signal: AbortSignal; timeout: number }): Promise<ElicitResult>
  /** Send an elicitation, sampling or roots request to the client on this request's stream. */
  readonly send: SendToClient
}

/** The session server a catalog is served on (createMcpServer's, with the SDK kept out of sight). */
export interface CatalogServer {
  registerCapabilities(capabilities: ServerCapabilities): void
  /** Answer `method` with `handler`; what it throws is the request's JSON-RPC error. */
  handle(method: string, handler: (params: never, request: CatalogRequest) => Promise<unknown>): void
  /** Whether a transport is connected (notifications are sent only then). */
  connected(): boolean
  getClientCapabilities(): ClientCapabilities | undefined
  sendResourceUpdated(params: { uri: string }): Promise<void>
  sendResourceListChanged(): Promise<void>
  sendPromptListChanged(): Promise<void>
}

/** Serve the catalog on `server` (not yet connected); returns what to run when it closes. */
export function serveCatalog(server: CatalogServer, catalog: McpServerCatalog): () => void {
  const { resources, prompts, watch } = catalog
  server.registerCapabilities(catalogCapabilities(catalog, true))
  const methods = catalogMethods(catalog)

  const contextOf = (request: CatalogRequest): McpServeContext => ({
    signal: request.signal,
    ...(request.authInfo === undefined ? {} : { authInfo: request.authInfo }),
    confirm: (question, title) => confirm(server, request, question, title),
    input: requestInput(() => server.getClientCapabilities(), request.send, request.signal),
  })
  // Whatever the source throws becomes the client's JSON-RPC error, keeping a numeric code.
  const handle =
    <P, T>(run: (params: P, context: McpServeContext) => Promise<T>) =>
    async (params: P, request: CatalogRequest): Promise<T> => {
      try {
        return await run(params, contextOf(request))
      } catch (error) {
        throw rpcError(error)
      }
    }

  const on =
    <P, T>(method: (params: P, context: McpServeContext) => Promise<T>) =>
    (params: P, request: CatalogRequest): Promise<T> =>
      method(params, contextOf(request))
  for (const method of [
    'resources/list',
    'resources/templates/list',
    'resources/read',
    'prompts/list',
    'prompts/get',
    'completion/complete',
  ] as const) {
    const body = methods[method] as ((params: never, context: McpServeContext) => Promise<unknown>) | undefined
    if (body) server.handle(method, on(body))
  }

  const subscriptions = new Map<string, McpResourceSubscriber>()
  if (resources) {
    const { subscribe, unsubscribe } = resources
    if (subscribe && unsubscribe) {
      server.handle(
        'resources/subscribe',
        handle(async ({ uri }: { uri: string }, context) => {
          if (subscriptions.has(uri)) return {}
          // Each URI gets its own subscriber, so that an unsubscribe releases exactly that one.
          const subscriber: McpResourceSubscriber = (updated) => {
            if (server.connected()) server.sendResourceUpdated({ uri: updated }).catch(() => {})
          }
          subscriptions.set(uri, subscriber)
          try {
            await subscribe.call(resources, uri, subscriber, context)
          } catch (error) {
            if (subscriptions.get(uri) === subscriber) subscriptions.delete(uri)
            throw error
          }
          return {}
        }),
      )
      server.handle(
        'resources/unsubscribe',
        handle(async ({ uri }: { uri: string }) => {
          const subscriber = subscriptions.get(uri)
          if (subscriber === undefined) return {}
          subscriptions.delete(uri)
          await unsubscribe.call(resources, uri, subscriber)
          return {}
        }),
      )
    }
  }

  // A burst of changes (an upstream re-listing) is one notification per kind and microtask.
  let closed = false
  const pending = new Set<McpListKind>()
  const stopWatching =
    watch?.((kind) => {
      if (closed || pending.has(kind)) return
      pending.add(kind)
      queueMicrotask(() => {
        pending.delete(kind)
        if (closed || !server.connected()) return
        if (kind === 'resources' && resources) server.sendResourceListChanged().catch(() => {})
        if (kind === 'prompts' && prompts) server.sendPromptListChanged().catch(() => {})
      })
    }) ?? (() => {})

  return () => {
    if (closed) return
    closed = true
    if (typeof stopWatching === 'function') stopWatching()
    // A source that throws (even synchronously) must not break the server's close.
    for (const [uri, subscriber] of subscriptions)
      Promise.resolve()
        .then(() => resources?.unsubscribe?.(uri, subscriber))
        .catch(() => {})
    subscriptions.clear()
  }
}

/** A JSON-RPC error the SDK sends as it is: numeric code, the message without the SDK's prefix. */
function rpcError(error: unknown): { code: number; message: string; data?: unknown } {
  const e = error as { code?: unknown; rpcCode?: unknown; reason?: unknown; data?: unknown; message?: unknown }
  if (typeof e?.rpcCode === 'number' && typeof e.reason === 'string')
    return { code: e.rpcCode, message: e.reason, ...(e.data !== undefined ? { data: e.data } : {}) }
  const code = typeof e?.code === 'number' && Number.isSafeInteger(e.code) ? e.code : JsonRpcCode.InternalError
  const message = (typeof e?.message === 'string' ? e.message : String(error)).replace(/^MCP error -?\d+: /, '')
  return { code, message, ...(e?.data !== undefined ? { data: e.data } : {}) }
}

/** A yes-or-no elicitation on the stream of the request being handled. */
async function confirm(
  server: CatalogServer,
  request: CatalogRequest,
  question: string,
  title: string,
): Promise<{ approved: boolean; reason: string }> {
  if (!server.getClientCapabilities()?.elicitation)
    return { approved: false, reason: 'the MCP client cannot be asked (it did not declare the elicitation capability)' }
  let answer: { action: string; content?: Record<string, unknown> }
  try {
    answer = await request.elicit(
      {
        message: question,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title, default: false } },
          required: ['approve'],
        },
      },
      { signal: request.signal, timeout: CONFIRM_TIMEOUT_MS },
    )
  } catch (error) {
    return {
      approved: false,
      reason: `asking the MCP client failed: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
  if (answer.action === 'accept' && answer.content?.approve === true) return { approved: true, reason: 'approved' }
  if (answer.action === 'cancel') return { approved: false, reason: 'the MCP client cancelled the approval request' }
  return { approved: false, reason: 'the MCP client declined' }
}
