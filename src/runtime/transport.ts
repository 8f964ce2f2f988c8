import type { ToolDefinition } from '../contract/tool-definition.js'

/**
 * The transport slot of the runtime core: one tool through which an agent under `code` or `both`
 * presentation reaches its other tools (Code Mode's `run_code` is the one the preset installs).
 * The core only adds the definition to `code`/`both` views, reserves its name, renders its
 * description per scope, and sends model-direct calls of hidden tools back to it; everything else
 * (how it runs, what it logs) belongs to the feature that installed it.
 */
export interface ToolTransport {
  /** The transport tool itself; its name is reserved while the transport is installed. */
  readonly definition: ToolDefinition
  /**
   * Model-facing description of the transport for one scope's visible tools (the transport
   * excluded); `deferred` names the visible tools not loaded yet (list them briefly, or not at all).
   */
  describe(visible: ReadonlyMap<string, ToolDefinition>, deferred: ReadonlySet<string>): string
  /** Message of the `UNKNOWN_TOOL` error for a model-direct call of `name` under `code`: the way back. */
  redirect(name: string): string
}
