// toolgate/mcp: import MCP servers' tools as registrations, and serve a scope as an MCP server.

/** MCP tool annotations (hints), as the protocol defines them: a tool's `meta.annotations`. */
export type { ToolAnnotations as McpToolAnnotations } from '../contract/tool-definition.js'
export type {
  McpCapabilityHandlers,
  McpElicitationHandler,
  McpRequestContext,
  McpRootsHandler,
  McpSamplingHandler,
  McpUrlElicitationHandler,
} from './capabilities.js'
export {
  type ConnectMcpServerOptions,
  connectMcpServer,
  type McpConnection,
  type McpConnectionState,
  type McpLogLevel,
  type McpLogMessage,
  type McpPromptRequestOptions,
  type McpReconnectOptions,
  type McpServerSpec,
  type McpSkippedTool,
  McpToolError,
} from './client.js'
export {
  type McpCallChannel,
  McpClientDirectory,
  type McpClientRequestOptions,
  type McpClientSession,
} from './client-directory.js'
export {
  createMcpOAuthProvider,
  type McpOAuthClientCredentials,
  type McpOAuthOptions,
  type McpOAuthRefreshToken,
} from './oauth.js'
export { createMcpRelay, type McpRelay, type McpRelayOptions, type McpRelayTimeouts } from './relay.js'
export type {
  McpPromptSource,
  McpResourceSource,
  McpResourceSubscriber,
  McpServeContext,
  McpServerCatalog,
} from './serve-catalog.js'
export {
  type CreateMcpServerOptions,
  createMcpServer,
  type McpCallKeeper,
  type McpKeptCall,
  type McpServerHandle,
  type McpServerLogging,
} from './server.js'
export type { McpSessionPartition } from './session-partition.js'
export {
  type McpListKind,
  McpRequestError,
  type McpRequestOptions,
  type McpServerFeatures,
} from './upstream-catalog.js'
// The MCP shapes toolgate's API names, its own rather than an SDK's.
export type * from './wire-types.js'
