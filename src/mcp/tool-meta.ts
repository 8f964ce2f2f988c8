// What toolgate remembers about a tool imported from an MCP server, so serving it again (a
// gateway) hands the client the remote's own annotations, output schema and structured content.
import type { ToolDefinition } from '../contract/tool-definition.js'

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
  /** The remote runs it as a task (`optional`) or only as one (`required`). */
  readonly taskSupport?: 'optional' | 'required'
  /** The value is `{ content, structuredContent? }` (an imported tool) rather than the tool's own output. */
  readonly imported?: boolean
  /** The remote's display title, icons, task support (`execution`) and tool-level `_meta`, passed on unchanged. */
  readonly title?: string
  readonly execution?: Readonly<Record<string, unknown>>
  readonly icons?: readonly unknown[]
  readonly meta?: Readonly<Record<string, unknown>>
  /**
   * Whether clients of a protocol era are served it: an upstream spoken to in both eras may list
   * different tools in each. Absent: every client.
   */
  readonly listedFor?: (era: 'legacy' | 'modern') => boolean
}

// Keyed by the `execute` function: the registry stores a frozen snapshot of a definition, but
// keeps its callbacks' identity, so this is what survives registration.
const metaOf = new WeakMap<object, McpToolMeta>()

export function setMcpToolMeta(definition: ToolDefinition, meta: McpToolMeta): void {
  metaOf.set(definition.execute, meta)
}

export function getMcpToolMeta(definition: ToolDefinition): McpToolMeta | undefined {
  return typeof definition.execute === 'function' ? metaOf.get(definition.execute) : undefined
}
