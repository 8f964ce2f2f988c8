// The client capabilities connectMcpServer declares to a server (elicitation, sampling, roots), and
// the request handlers that answer the server's requests through the caller's handlers.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type * as McpTypes from '@modelcontextprotocol/sdk/types.js'
import type {
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestFormParams,
  ElicitResult,
  ListRootsRequest,
  ListRootsResult,
} from '@modelcontextprotocol/sdk/types.js'

/** What a capability handler receives besides the request. */
export interface McpRequestContext {
  /** Aborted when the server cancels the request or the connection closes. */
  readonly signal: AbortSignal
}

type Awaitable<T> = T | Promise<T>

/**
 * Answers a server's `elicitation/create` (form mode): accept with `content`, decline or cancel.
 * Fields the handler leaves out of accepted content get their schema `default`.
 */
export type McpElicitationHandler = (
  params: ElicitRequestFormParams,
  context: McpRequestContext,
) => ElicitResult | Promise<ElicitResult>
/** Answers a server's `sampling/createMessage` with the model's message. */
export type McpSamplingHandler = (
  params: CreateMessageRequestParams,
  context: McpRequestContext,
) => CreateMessageResult | CreateMessageResultWithTools | Promise<CreateMessageResult | CreateMessageResultWithTools>
/** Answers a server's `roots/list` with the roots it may work in. */
export type McpRootsHandler = (
  params: ListRootsRequest['params'],
  context: McpRequestContext,
) => ListRootsResult | Promise<ListRootsResult>

/** The handlers of the client capabilities; a capability without one is not declared. */
export interface McpCapabilityHandlers {
  readonly elicitation?: McpElicitationHandler
  readonly sampling?: McpSamplingHandler
  readonly roots?: McpRootsHandler
}

/** Exactly the capabilities whose handlers are given. */
export function declaredCapabilities(handlers: McpCapabilityHandlers): ClientCapabilities {
  const capabilities: ClientCapabilities = {}
  if (handlers.elicitation) capabilities.elicitation = { form: {} }
  if (handlers.sampling) capabilities.sampling = {}
  // There is no way to tell the server the roots changed, so none is promised.
  if (handlers.roots) capabilities.roots = { listChanged: false }
  return capabilities
}

/**
 * Route the server's requests to the given handlers. A handler that throws, or answers something
 * that is not a valid result, becomes an error response to the server; nothing reaches the host.
 */
export function registerCapabilityHandlers(
  client: Client,
  types: typeof McpTypes,
  handlers: McpCapabilityHandlers,
  label: string,
): void {
  const { ErrorCode } = types
  // The SDK sends a thrown value's numeric `code` and `message` as the error response; an McpError
  // would put its "MCP error" prefix into the message, which the server's SDK then adds again.
  const rpcError = (message: string) => ({ code: ErrorCode.InternalError, message })
  const run = async (kind: string, call: () => Awaitable<unknown>): Promise<unknown> => {
    try {
      return await call()
    } catch (error) {
      // An McpError keeps the code the handler chose; anything else is reported by its message.
      if (error instanceof Error) throw error
      throw rpcError(`the ${kind} handler of MCP client ${label} failed: ${String(error)}`)
    }
  }
  const check = <T>(kind: string, schema: { safeParse(value: unknown): SafeParse<T> }, value: unknown): T => {
    const parsed = schema.safeParse(value)
    if (parsed.success) return parsed.data
    const problems = parsed.error.issues
      .map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(result)'}: ${issue.message}`)
      .join('; ')
    throw rpcError(`the ${kind} handler of MCP client ${label} answered an invalid result: ${problems}`)
  }

  const { elicitation, sampling, roots } = handlers
  if (elicitation)
    client.setRequestHandler(types.ElicitRequestSchema, async (request, extra) => {
      // Only form mode is declared, so the SDK has refused any other before this runs.
      const params = request.params as ElicitRequestFormParams
      const answer = await run('elicitation', () => elicitation(params, { signal: extra.signal }))
      return applyElicitationDefaults(check('elicitation', types.ElicitResultSchema, answer), params)
    })
  if (sampling)
    client.setRequestHandler(types.CreateMessageRequestSchema, async (request, extra) => {
      const { params } = request
      const answer = await run('sampling', () => sampling(params, { signal: extra.signal }))
      const withTools = params.tools !== undefined || params.toolChoice !== undefined
      return withTools
        ? check('sampling', types.CreateMessageResultWithToolsSchema, answer)
        : check('sampling', types.CreateMessageResultSchema, answer)
    })
  if (roots)
    client.setRequestHandler(types.ListRootsRequestSchema, async (request, extra) => {
      const answer = await run('roots', () => roots(request.params, { signal: extra.signal }))
      return check('roots', types.ListRootsResultSchema, answer)
    })
}

type SafeParse<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } }

/**
 * An accepted form gets the `default` of every requested field it leaves out, so the server reads
 * the value the user saw preselected rather than a missing field.
 */
export function applyElicitationDefaults(result: ElicitResult, params: ElicitRequestFormParams): ElicitResult {
  if (result.action !== 'accept') return result
  const properties = params.requestedSchema?.properties ?? {}
  let content = result.content
  for (const [key, property] of Object.entries(properties)) {
    if (property === null || typeof property !== 'object' || !('default' in property)) continue
    const value = (property as { default?: unknown }).default
    if (value === undefined || (content !== undefined && content[key] !== undefined)) continue
    content = { ...content, [key]: value as NonNullable<ElicitResult['content']>[string] }
  }
  return content === result.content ? result : { ...result, content }
}
