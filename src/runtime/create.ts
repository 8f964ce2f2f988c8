/// <reference lib="esnext.disposable" preserve="true" />
import { Context } from 'cordis'
import { coreOf, ToolRuntime, type ToolRuntimeConfig } from './tool-runtime.js'

/** What {@link createToolRuntime} returns: the root context, the service, and their lifetime. */
export interface ToolRuntimeHandle {
  /** The root Cordis context: load plugins (policies, approval services) with `ctx.plugin(...)`. */
  readonly ctx: Context
  /** The `tools` service. A reference kept past `dispose()` refuses work with `RUNTIME_DISPOSED`. */
  readonly tools: ToolRuntime
  /**
   * Dispose the runtime: `register`, `restrict`, `execute` (and so `run_code`) fail with
   * `RUNTIME_DISPOSED` from now on, running tool bodies are aborted through their signal, every
   * plugin loaded on `ctx` is unloaded, and the promise settles once each call in flight has
   * produced its one result. Idempotent.
   */
  dispose(): Promise<void>
  /** `await using runtime = await createToolRuntime()` disposes at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * For users without their own Cordis app: a root context with the `tools` service ready (the
 * `ToolRuntime` preset). Nothing in the runtime core imports this convenience constructor.
 */
export async function createToolRuntime(config?: ToolRuntimeConfig): Promise<ToolRuntimeHandle> {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime, config ?? {})
  const tools = ctx.tools
  const core = tools[coreOf]
  let disposing: Promise<void> | undefined
  const dispose = (): Promise<void> => {
    disposing ??= (async () => {
      core.lifetime.dispose()
      await ctx.fiber.dispose()
      await core.lifetime.drain(core.live)
    })()
    return disposing
  }
  return Object.freeze({ ctx, tools, dispose, [Symbol.asyncDispose]: dispose })
}
