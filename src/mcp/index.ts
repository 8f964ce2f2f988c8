// toolgate/mcp: import MCP servers' tools as registrations, and serve a scope as an MCP server.

/** MCP tool annotations (hints), as the protocol defines them: a tool's `meta.annotations`. */
export type { ToolAnnotations as McpToolAnnotations } from '../contract/tool-definition.js'
export {
  type ConnectMcpServerOptions,
  connectMcpServer,
  type McpConnection,
  type McpConnectionState,
  type McpPromptRequestOptions,
  type McpReconnectOptions,
  type McpServerSpec,
  type McpSkippedTool,
  McpToolError,
} from './client/client.js'
export {
  createMcpOAuthProvider,
  type McpOAuthClientCredentials,
  type McpOAuthOptions,
  type McpOAuthRefreshToken,
} from './client/oauth.js'
export type { McpSessionPartition } from './client/session-partition.js'
export { McpRequestError, type McpRequestOptions, type McpServerFeatures } from './client/upstream-catalog.js'
export type {
  McpCapabilityHandlers,
  McpElicitationHandler,
  McpRequestContext,
  McpRootsHandler,
  McpSamplingHandler,
  McpUrlElicitationHandler,
} from './protocol/capability-handlers.js'
export type { McpListKind } from './protocol/list-kind.js'
export type { McpLogLevel, McpLogMessage } from './protocol/logging.js'
// The MCP shapes toolgate's API names, its own rather than an SDK's.
export type * from './protocol/wire-types.js'
export { createMcpRelay, type McpRelay, type McpRelayOptions, type McpRelayTimeouts } from './relay/relay.js'
export {
  type McpCallChannel,
  McpClientDirectory,
  type McpClientRequestOptions,
  type McpClientSession,
} from './server/client-directory.js'
export type {
  McpPromptSource,
  McpResourceSource,
  McpResourceSubscriber,
  McpServeContext,
  McpServerCatalog,
} from './server/serve-catalog.js'
export {
  type CreateMcpServerOptions,
  createMcpServer,
  type McpCallKeeper,
  type McpKeptCall,
  type McpServerHandle,
  type McpServerLogging,
} from './server/server.js'
