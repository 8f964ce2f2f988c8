// MCP logging as both sides see it: the severities (a server sends them, a client sets the least it
// wants) and one message as a server sent it.

/** The severities of MCP logging, least severe first. */
export type McpLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'

/** One log message from a server, as it sent it. */
export interface McpLogMessage {
  readonly level: McpLogLevel
  /** The server's own name for the source of the message, when it gave one. */
  readonly logger?: string
  /** Any JSON value the server sent. */
  readonly data: unknown
}

/** The MCP log severities, least severe first. */
export const MCP_LOG_LEVELS: readonly McpLogLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]
