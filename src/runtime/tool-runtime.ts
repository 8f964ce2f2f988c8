import type { Context } from 'cordis'
import { installCodeMode } from '../code-mode/plugin.js'
import type { CodeModeOptions } from '../code-mode/run-code.js'
import { scopeSdk } from '../code-mode/transport.js'
import { ToolRuntimeCore, type ToolRuntimeCoreConfig } from './service.js'
import type { ScopeKey } from './types.js'

/** `ctx.tools` configuration. */
export interface ToolRuntimeConfig extends ToolRuntimeCoreConfig {
  /** Code Mode options: the sandbox runtime, sub-call parallelism, the `run_code` description. */
  codeMode?: CodeModeOptions
}

/**
 * The tool registry and execution pipeline, a Cordis 4 service registered as `tools`: the runtime
 * core with Code Mode installed as its transport. Every method's calling scope is the context
 * through which `ctx.tools` was reached.
 */
export class ToolRuntime extends ToolRuntimeCore {
  declare readonly config: ToolRuntimeCore['config'] & { readonly codeMode?: CodeModeOptions }

  constructor(ctx: Context, config: ToolRuntimeConfig = {}) {
    super(ctx, config)
    installCodeMode(ctx, this, config?.codeMode)
  }

  /**
   * The Code Mode SDK a scope's model sees (for a system prompt): TypeScript declarations of every
   * visible tool, reached as `tools.<name>(args)` inside a `run_code` program.
   */
  sdk(scope?: ScopeKey): string {
    return scopeSdk(this, scope)
  }
}

/** The core's hook, re-exported for modules that reach the core through the preset. */
export { coreOf } from './service.js'

declare module 'cordis' {
  interface Context {
    tools: ToolRuntime
  }
}
