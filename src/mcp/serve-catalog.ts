// The resources, prompts and completions a served scope offers besides its tools: createMcpServer's
// `catalog` option, its capabilities declared only for the parts given, every request passed to
// the source, subscriptions kept per client and released when the client goes.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  type CompleteRequest,
  CompleteRequestSchema,
  type CompleteResult,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListRootsResultSchema,
  type Prompt,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { ConfigError } from '../errors/config-error.js'
import type { McpCapabilityHandlers } from './capabilities.js'
import { JsonRpcCode } from './jsonrpc-codes.js'
import { type InputMethod, requestInput } from './request-input.js'
import type { McpListKind } from './upstream-catalog.js'
import type { AuthInfo } from './wire-types.js'

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

/** Serve the catalog on `server` (not yet connected); returns what to run when it closes. */
export function serveCatalog(server: Server, catalog: McpServerCatalog): () => void {
  const { resources, prompts, watch } = catalog
  server.registerCapabilities(catalogCapabilities(catalog, true))
  const methods = catalogMethods(catalog)

  type Extra = { signal: AbortSignal; sendRequest: unknown; authInfo?: AuthInfo }
  const contextOf = (extra: Extra): McpServeContext => ({
    signal: extra.signal,
    ...(extra.authInfo === undefined ? {} : { authInfo: extra.authInfo }),
    confirm: (question, title) => confirm(server, extra, question, title),
    input: requestInput(
      () => server.getClientCapabilities(),
      (method, params, options) =>
        (extra.sendRequest as SendAny)({ method, params }, resultSchema(method, params), options),
      extra.signal,
    ),
  })
  // Whatever the source throws becomes the client's JSON-RPC error, keeping a numeric code.
  const handle =
    <R, T>(run: (request: R, context: McpServeContext) => Promise<T>) =>
    async (request: R, extra: Extra): Promise<T> => {
      try {
        return await run(request, contextOf(extra))
      } catch (error) {
        throw rpcError(error)
      }
    }

  const on =
    <P, T>(method: (params: P, context: McpServeContext) => Promise<T>) =>
    (request: { params?: P }, extra: Extra): Promise<T> =>
      method(request.params as P, contextOf(extra))
  if (methods['resources/list']) server.setRequestHandler(ListResourcesRequestSchema, on(methods['resources/list']))
  if (methods['resources/templates/list'])
    server.setRequestHandler(ListResourceTemplatesRequestSchema, on(methods['resources/templates/list']))
  if (methods['resources/read']) server.setRequestHandler(ReadResourceRequestSchema, on(methods['resources/read']))
  if (methods['prompts/list']) server.setRequestHandler(ListPromptsRequestSchema, on(methods['prompts/list']))
  if (methods['prompts/get']) server.setRequestHandler(GetPromptRequestSchema, on(methods['prompts/get']))
  if (methods['completion/complete'])
    server.setRequestHandler(CompleteRequestSchema, on(methods['completion/complete']))

  const subscriptions = new Map<string, McpResourceSubscriber>()
  if (resources) {
    const { subscribe, unsubscribe } = resources
    if (subscribe && unsubscribe) {
      server.setRequestHandler(
        SubscribeRequestSchema,
        handle(async (request, context) => {
          const { uri } = request.params
          if (subscriptions.has(uri)) return {}
          // Each URI gets its own subscriber, so that an unsubscribe releases exactly that one.
          const subscriber: McpResourceSubscriber = (updated) => {
            if (server.transport) server.sendResourceUpdated({ uri: updated }).catch(() => {})
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
      server.setRequestHandler(
        UnsubscribeRequestSchema,
        handle(async (request) => {
          const { uri } = request.params
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
        if (closed || !server.transport) return
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

type SendRequest = (
  request: { method: 'elicitation/create'; params: Record<string, unknown> },
  schema: typeof ElicitResultSchema,
  options?: { signal?: AbortSignal; timeout?: number },
) => Promise<{ action: string; content?: Record<string, unknown> }>

type SendAny = (request: { method: string; params: unknown }, schema: unknown, options: unknown) => Promise<unknown>

/** The SDK's check of the client's answer to `method`. */
function resultSchema(method: InputMethod, params: unknown): unknown {
  if (method === 'elicitation/create') return ElicitResultSchema
  if (method === 'roots/list') return ListRootsResultSchema
  const tools = (params as { tools?: unknown } | undefined)?.tools
  return tools === undefined ? CreateMessageResultSchema : CreateMessageResultWithToolsSchema
}

/** A yes-or-no elicitation on the stream of the request being handled. */
async function confirm(
  server: Server,
  extra: { signal: AbortSignal; sendRequest: unknown },
  question: string,
  title: string,
): Promise<{ approved: boolean; reason: string }> {
  if (!server.getClientCapabilities()?.elicitation)
    return { approved: false, reason: 'the MCP client cannot be asked (it did not declare the elicitation capability)' }
  let answer: { action: string; content?: Record<string, unknown> }
  try {
    answer = await (extra.sendRequest as SendRequest)(
      {
        method: 'elicitation/create',
        params: {
          message: question,
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', title, default: false } },
            required: ['approve'],
          },
        },
      },
      ElicitResultSchema,
      { signal: extra.signal, timeout: CONFIRM_TIMEOUT_MS },
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
