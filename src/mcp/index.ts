// toolgate/mcp: import MCP servers' tools as registrations, and serve a scope as an MCP server.

export {
  type ConnectMcpServerOptions,
  connectMcpServer,
  type McpConnection,
  type McpServerSpec,
  McpToolError,
} from './client.js'
export { type CreateMcpServerOptions, createMcpServer } from './server.js'
export type { McpToolAnnotations } from './tool-meta.js'
