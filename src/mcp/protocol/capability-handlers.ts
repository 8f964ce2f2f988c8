// The handlers that answer what an MCP server may ask its client (elicitation, sampling, roots):
// the client link declares and calls them, a served session asks through them, and the relay
// hands one side's to the other.
import type { ToolExecution } from '../../contract/execution.js'
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  ListRootsRequest,
  ListRootsResult,
} from './wire-types.js'

/** What a capability handler receives besides the request. */
export interface McpRequestContext {
  /** Aborted when the server cancels the request or the connection closes. */
  readonly signal: AbortSignal
  /**
   * This connection's tool calls in flight when the request arrived (the server sends its requests
   * while one of them runs), so a gateway can route the request to whoever made that call.
   */
  readonly calls: readonly ToolExecution[]
}

/**
 * Answers a server's `elicitation/create` (form mode): accept with `content`, decline or cancel.
 * Fields the handler leaves out of accepted content get their schema `default`.
 */
export type McpElicitationHandler = (
  params: ElicitRequestFormParams,
  context: McpRequestContext,
) => ElicitResult | Promise<ElicitResult>
/**
 * Answers a server's URL-mode `elicitation/create`: the user is sent to `params.url` (out of band)
 * and the answer says whether they agreed to go.
 */
export type McpUrlElicitationHandler = (
  params: ElicitRequestURLParams,
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
  readonly urlElicitation?: McpUrlElicitationHandler
  readonly sampling?: McpSamplingHandler
  readonly roots?: McpRootsHandler
}
