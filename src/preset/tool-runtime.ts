import type { Context } from 'cordis'
import { installCodeMode } from '../code-mode/plugin.js'
import type { CodeModeOptions } from '../code-mode/run-code.js'
import { sdkOf } from '../code-mode/transport.js'
import type { ScopeKey } from '../contract/execution.js'
import { ToolRuntimeCore, type ToolRuntimeCoreConfig } from '../runtime/index.js'

/** `ctx.tools` configuration. */
export interface ToolRuntimeConfig extends ToolRuntimeCoreConfig {
  /** Code Mode options: the sandbox runtime, sub-call parallelism, the `run_code` description. */
  codeMode?: CodeModeOptions
}

/**
 * The tool registry and execution pipeline, a Cordis 4 service registered as `tools`: the runtime
 * core with Code Mode installed as its transport.
 *
 * Which scope a method acts on:
 * - **The caller's scope**, i.e. the context `ctx.tools` was reached through (the root context: the
 *   global layer; `agent.ctx.tools`: that agent): `register`, `restrict`, `guard`, `presentAs`. What
 *   they add belongs to the calling plugin (or agent) and goes when it is disposed.
 * - **A scope argument** (an `Agent` from `createAgent`, or omitted for the global layer), whatever
 *   context the service was reached through: `get(name, scope?)`, `schemas(scope?)`, `sdk(scope?)`,
 *   `standingApprovals(scope?)`, `revokeStandingApproval(name, scope?)`.
 * - **The call's input**: `execute(input)` and `executionMode(input)` run as `input.agent` (omitted:
 *   the global layer), also when reached through `agent.ctx.tools`.
 *
 * In a hot loop, read the service once (`const tools = ctx.tools`, or `agent.ctx.tools` for an
 * agent's registrations): every `ctx.tools` read goes through Cordis's context proxy, which captures
 * a stack for its diagnostics and costs several microseconds. The handle keeps the caller's scope.
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
    return sdkOf(this.host.visibleTools(scope))
  }
}

declare module 'cordis' {
  interface Context {
    tools: ToolRuntime
  }
}
