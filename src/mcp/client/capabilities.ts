// The client capabilities connectMcpServer declares to a server (elicitation, sampling, roots), and
// the request handlers that answer the server's requests through the caller's handlers.
import type { ToolExecution } from '../../contract/execution.js'
import type { McpCapabilityHandlers, McpRequestContext, McpSamplingHandler } from '../protocol/capability-handlers.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type {
  ClientCapabilities,
  CreateMessageRequestParams,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  ListRootsRequest,
} from '../protocol/wire-types.js'
import { checkWithSchema, type StandardSchema } from './upstream-client.js'

type Awaitable<T> = T | Promise<T>

/** Sampling handlers that also answer requests offering tools, declared as `sampling: { tools: {} }`. */
const toolSampling = new WeakSet<McpSamplingHandler>()

/**
 * The handler, as one that also answers sampling requests that offer tools (a gateway whose own
 * client declared `sampling.tools`), so the server may send those.
 */
export function samplingWithTools(handler: McpSamplingHandler): McpSamplingHandler {
  const marked: McpSamplingHandler = (params, context) => handler(params, context)
  toolSampling.add(marked)
  return marked
}

/** Exactly the capabilities whose handlers are given. */
export function declaredCapabilities(handlers: McpCapabilityHandlers): ClientCapabilities {
  const capabilities: ClientCapabilities = {}
  if (handlers.elicitation || handlers.urlElicitation)
    capabilities.elicitation = {
      ...(handlers.elicitation ? { form: {} } : {}),
      ...(handlers.urlElicitation ? { url: {} } : {}),
    }
  if (handlers.sampling) capabilities.sampling = toolSampling.has(handlers.sampling) ? { tools: {} } : {}
  // The connection's notifyRootsChanged() tells the server when the roots changed.
  if (handlers.roots) capabilities.roots = { listChanged: true }
  return capabilities
}

/** The server-to-client requests a connection answers. */
export type McpCapabilityMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list'

/**
 * Where the handlers go: the SDK v2 Client's `setRequestHandler(method, …)`, its request's
 * `params` and its context's abort signal handed on.
 */
export type CapabilityRegistrar = (
  method: McpCapabilityMethod,
  handler: (params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>,
) => void

/** The result schemas a handler's answer is checked against (the SDK's, by name). */
export interface CapabilityResultSchemas {
  readonly ElicitResult: StandardSchema
  readonly CreateMessageResult: StandardSchema
  readonly CreateMessageResultWithTools: StandardSchema
  readonly ListRootsResult: StandardSchema
}

/**
 * Route the server's requests to the given handlers. A handler that throws, or answers something
 * that is not a valid result, becomes an error response to the server; nothing reaches the host.
 */
export function registerCapabilityHandlers(
  register: CapabilityRegistrar,
  schemas: CapabilityResultSchemas,
  handlers: McpCapabilityHandlers,
  label: string,
  calls: () => readonly ToolExecution[],
): void {
  // The SDK sends a thrown value's numeric `code` and `message` as the error response; an error
  // with an "MCP error" prefix in its message would reach the server's SDK, which adds it again.
  const rpcError = (message: string) => ({ code: JsonRpcCode.InternalError, message })
  const run = async (kind: string, call: () => Awaitable<unknown>): Promise<unknown> => {
    try {
      return await call()
    } catch (error) {
      // A ProtocolError (or a plain { code, message }) keeps the code the handler chose; anything else
      // is reported by its message.
      if (error instanceof Error || isRpcError(error)) throw error
      throw rpcError(`the ${kind} handler of MCP client ${label} failed: ${String(error)}`)
    }
  }
  const check = <T>(kind: string, schema: StandardSchema, value: unknown): T => {
    const checked = checkWithSchema(schema, value)
    if (checked.ok) return checked.value as T
    throw rpcError(`the ${kind} handler of MCP client ${label} answered an invalid result: ${checked.problems}`)
  }

  const { elicitation, urlElicitation, sampling, roots } = handlers
  const contextOf = (signal: AbortSignal): McpRequestContext => ({ signal, calls: calls() })
  if (elicitation || urlElicitation)
    register('elicitation/create', async (request, signal) => {
      // The SDK has refused a mode that was not declared before this runs.
      if (request.mode === 'url' && urlElicitation) {
        const params = request as unknown as ElicitRequestURLParams
        const answer = await run('elicitation', () => urlElicitation(params, contextOf(signal)))
        return check<ElicitResult>('elicitation', schemas.ElicitResult, answer)
      }
      const params = request as unknown as ElicitRequestFormParams
      if (!elicitation) throw rpcError(`MCP client ${label} does not answer form-mode elicitation`)
      const answer = await run('elicitation', () => elicitation(params, contextOf(signal)))
      return applyElicitationDefaults(check<ElicitResult>('elicitation', schemas.ElicitResult, answer), params)
    })
  if (sampling)
    register('sampling/createMessage', async (request, signal) => {
      const params = request as unknown as CreateMessageRequestParams
      const answer = await run('sampling', () => sampling(params, contextOf(signal)))
      const withTools = params.tools !== undefined || params.toolChoice !== undefined
      return withTools
        ? check('sampling', schemas.CreateMessageResultWithTools, answer)
        : check('sampling', schemas.CreateMessageResult, answer)
    })
  if (roots)
    register('roots/list', async (request, signal) => {
      const answer = await run('roots', () => roots(request as ListRootsRequest['params'], contextOf(signal)))
      return check('roots', schemas.ListRootsResult, answer)
    })
}

/** A JSON-RPC error a handler threw on purpose: its code and message go to the server as they are. */
function isRpcError(value: unknown): value is { code: number; message: string } {
  if (typeof value !== 'object' || value === null) return false
  const { code, message } = value as { code?: unknown; message?: unknown }
  return Number.isSafeInteger(code) && typeof message === 'string'
}

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
