// What toolgate remembers about a tool imported from an MCP server, so serving it again (a
// gateway) hands the client the remote's own annotations, output schema and structured content.
import type { ToolDefinition } from '../schema/tool-definition.js'

/** MCP tool annotations (hints), as the protocol defines them. */
export interface McpToolAnnotations {
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

export interface McpToolMeta {
  /** The remote's annotations, passed on unchanged. */
  readonly annotations?: McpToolAnnotations
  /** The remote's declared output schema (MCP requires an object root). */
  readonly outputSchema?: Record<string, unknown>
  /** The value is `{ content, structuredContent? }` (an imported tool) rather than the tool's own output. */
  readonly imported?: boolean
}

const metaOf = new WeakMap<ToolDefinition, McpToolMeta>()

export function setMcpToolMeta(definition: ToolDefinition, meta: McpToolMeta): void {
  metaOf.set(definition, meta)
}

export function getMcpToolMeta(definition: ToolDefinition): McpToolMeta | undefined {
  return metaOf.get(definition)
}
