import { Context } from 'cordis'
import { ToolRuntime, type ToolRuntimeConfig } from './tool-runtime.js'

/**
 * For users without their own Cordis app: a root context with the `tools` service ready (the
 * `ToolRuntime` preset). Nothing in the runtime core imports this convenience constructor.
 */
export async function createToolRuntime(config?: ToolRuntimeConfig): Promise<{ ctx: Context; tools: ToolRuntime }> {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime, config ?? {})
  return { ctx, tools: ctx.tools }
}
