import type { Context } from 'cordis'
import { installCodeMode } from '../code-mode/plugin.js'
import type { CodeModeOptions } from '../code-mode/run-code.js'
import { sdkOf } from '../code-mode/transport.js'
import type { ScopeKey } from '../contract/execution.js'
import { ToolRuntimeCore, type ToolRuntimeCoreConfig } from '../runtime/index.js'
import {
  installToolSearch,
  type ToolSearch,
  type ToolSearchCallOptions,
  type ToolSearchMatch,
  type ToolSearchOptions,
} from '../search/index.js'

/** `ctx.tools` configuration. */
export interface ToolRuntimeConfig extends ToolRuntimeCoreConfig {
  /** Code Mode options: the sandbox runtime, sub-call parallelism, the `run_code` description. */
  codeMode?: CodeModeOptions
  /** Tool search options: another engine, or how to tell a tool's server for the index. */
  search?: ToolSearchOptions
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
  declare readonly config: ToolRuntimeCore['config'] & {
    readonly codeMode?: CodeModeOptions
    readonly search?: ToolSearchOptions
  }
  private readonly toolSearch: ToolSearch

  constructor(ctx: Context, config: ToolRuntimeConfig = {}) {
    super(ctx, config)
    installCodeMode(ctx, this, config?.codeMode)
    this.toolSearch = installToolSearch(ctx, this, config?.search)
  }

  /**
   * The tools that best match `query`, best first, among those `options.agent` (omitted: the global
   * layer) may see: deferred or not, never a hidden or denied one. Ranking only; nothing is loaded.
   */
  search(query: string, options?: ToolSearchCallOptions): ToolSearchMatch[] {
    return this.toolSearch.search(query, options)
  }

  /**
   * The Code Mode SDK a scope's model sees (for a system prompt): TypeScript declarations of every
   * visible tool, reached as `tools.<name>(args)` inside a `run_code` program; deferred tools as a
   * one-line index (or only their count, past 100) with `tools.$search(query)` to find them.
   */
  sdk(scope?: ScopeKey): string {
    return sdkOf(this.host.visibleTools(scope), this.host.deferredTools(scope), this.host.finderName() !== undefined)
  }
}

declare module 'cordis' {
  interface Context {
    tools: ToolRuntime
  }
}
