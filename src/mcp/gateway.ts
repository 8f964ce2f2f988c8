// The gateway's door into src/mcp: src/gateway imports this module and nothing else of src/mcp, and
// no other folder imports it (they use index.ts, the door of `toolgate/mcp`). It names the inner
// pieces the gateway builds on, which are not public API. What only some runs need (the 2026 legs,
// the server transports, the fast path) is a loader, not a re-export, so it stays off the cold start
// of the runs that do not use it; a re-export here loads with every module that imports the door.

export { declaredCapabilities } from './client/capabilities.js'
export {
  type ConnectMcpServerOptions,
  connectMcpServer,
  type McpConnection,
  type McpServerSpec,
  type McpSkippedTool,
  registerInTurn,
} from './client/client.js'
export { importedToolParts } from './client/imported-tool.js'
export { createMcpOAuthProvider, type McpOAuthOptions } from './client/oauth.js'
export {
  discardEarlySpawns,
  peekEarlySpawns,
  type RawHandshake,
  type SpawnedStdio,
  type StdioSpawnSpec,
  spawnEarlyMissing,
} from './client/stdio-spawn.js'
export { McpRequestError, type McpServerFeatures } from './client/upstream-catalog.js'
export { authInfoFor, type Identity, identityOf } from './protocol/identity.js'
export { isInitializeResult } from './protocol/initialize-answer.js'
export { JsonRpcCode } from './protocol/jsonrpc-codes.js'
export type { McpListKind } from './protocol/list-kind.js'
export { MCP_LOG_LEVELS, type McpLogLevel, type McpLogMessage } from './protocol/logging.js'
export { DEFAULT_MAX_MESSAGE_BYTES } from './protocol/message-limit.js'
export { fastRequest, MODERN_REVISION, modernTools, plainDiscover, stamped } from './protocol/modern-request.js'
export type * from './protocol/wire-types.js'
export { createMcpRelay } from './relay/relay.js'
export { handlersForClient } from './relay/relay-capabilities.js'
export type { SpentNonces } from './server/approval-state.js'
export { type McpCallChannel, McpClientDirectory } from './server/client-directory.js'
export type { KeptAnswers, KeptPause, KeptProgramRounds, KeptRound } from './server/kept-program-rounds.js'
export type { McpResourceSubscriber, McpServeContext, McpServerCatalog } from './server/serve-catalog.js'
export { listedTool, listTools } from './server/serve-tools.js'
export {
  createMcpServer,
  type McpCallKeeper,
  type McpKeptCall,
  type McpServerHandle,
  type McpServerLogging,
} from './server/server.js'
export type { ModernHttpLeg, ModernHttpOptions } from './server/server-modern.js'
export type { ModernStdioOptions } from './server/server-modern-stdio.js'
export { TASKS_CAPABILITY } from './server/server-tasks.js'
export type { LineStdioServerTransport } from './server/stdio-transport.js'

/** The 2026-07-28 leg of `serve --http`, which only the first request of that era loads. */
export const loadModernHttp = () => import('./server/server-modern.js')
/** The 2026-07-28 face of `serve` over stdio, loaded when the client speaks that era. */
export const loadModernStdio = () => import('./server/server-modern-stdio.js')
/** The Streamable HTTP server transport (`serve --http` only). */
export const loadHttpServerTransport = () => import('./server/http-server-transport.js')
/** The line-delimited stdio server transport, and the message size limit both faces share. */
export const loadStdioServerTransport = () => import('./server/stdio-transport.js')
/** The resumability event store of `serve --http`. */
export const loadEventStore = () => import('./server/event-store.js')
/** The served `tools/call` fast path of the 2025 sessions. */
export const loadFastPath = () => import('./server/fast-path.js')
