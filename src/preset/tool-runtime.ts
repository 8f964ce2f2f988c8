import type { Context } from 'cordis'
import { RUN_CODE_NAME } from '../code-mode/constants.js'
import { installCodeMode } from '../code-mode/plugin.js'
import type { CodeModeOptions } from '../code-mode/run-code.js'
import { sdkOf } from '../code-mode/transport.js'
import type { Agent, ScopeKey } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { Store } from '../journal/store.js'
import {
  compilePolicy,
  enforcePolicyDocument,
  MemoryQuotaCounter,
  type PolicyDecision,
  type PolicyEnforcement,
  type PolicyInput,
  type QuotaCounter,
  storeQuotaCounter,
} from '../policy/index.js'
import { ToolRuntimeCore, type ToolRuntimeCoreConfig } from '../runtime/index.js'
import {
  installToolSearch,
  SEARCH_TOOLS_NAME,
  type ToolSearch,
  type ToolSearchCallOptions,
  type ToolSearchMatch,
  type ToolSearchOptions,
} from '../search/index.js'

/** `ctx.tools` configuration. */
export interface ToolRuntimeConfig extends ToolRuntimeCoreConfig {
  /** Code Mode options: the sandbox runtime, sub-call parallelism, the `run_code` description. */
  codeMode?: CodeModeOptions
  /** Tool search options: another engine, a ranker (`'text'`, `'hybrid'`, or a function), how to tell a tool's server. */
  search?: ToolSearchOptions
  /** The same options as `search`, under the name tool search goes by elsewhere; give one of the two. */
  toolSearch?: ToolSearchOptions
  /**
   * Where the policy's quotas count: a store (`createPostgresStore` from `toolgate/store`) that
   * every runtime on it shares, as the gateway's `--store` does. Omitted: this process's memory.
   */
  quotaStore?: Pick<Store, 'take' | 'dropBuckets'>
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
    readonly toolSearch?: ToolSearchOptions
    readonly quotaStore?: Pick<Store, 'take' | 'dropBuckets'>
  }
  private readonly toolSearch: ToolSearch
  private readonly rootCtx: Context
  private readonly quotaCounter: QuotaCounter
  /** The policy set for the global layer (key `null`) and for each agent. */
  private readonly policies = new Map<Agent | null, { enforcement: PolicyEnforcement; hidden: () => void }>()

  constructor(ctx: Context, config: ToolRuntimeConfig = {}) {
    super(ctx, config)
    this.rootCtx = ctx
    const store = config?.quotaStore
    if (store !== undefined && (typeof store?.take !== 'function' || typeof store?.dropBuckets !== 'function'))
      throw new ConfigError('tools config.quotaStore', 'expected a store (take and dropBuckets methods)')
    this.quotaCounter = store === undefined ? new MemoryQuotaCounter() : storeQuotaCounter(store)
    installCodeMode(ctx, this, config?.codeMode)
    if (config?.search !== undefined && config?.toolSearch !== undefined)
      throw new ConfigError(
        'tools config.toolSearch',
        'give the tool search options as search or as toolSearch, not both',
      )
    this.toolSearch = installToolSearch(ctx, this, config?.search ?? config?.toolSearch)
  }

  /**
   * The tools that best match `query`, best first, among those `options.agent` (omitted: the global
   * layer) may see: deferred or not, never a hidden or denied one. Ranking only; nothing is loaded.
   */
  /**
   * Get the search ready for `query`: with `search: { ranker: 'hybrid' }` it embeds the request
   * (and waits for the tools still being embedded), so the next `search` of it fuses both rankings.
   */
  prepareSearch(query: string): Promise<void> {
    return this.toolSearch.prepare(query)
  }

  search(query: string, options?: ToolSearchCallOptions): ToolSearchMatch[] {
    return this.toolSearch.search(query, options)
  }

  /**
   * Set the policy document (the gateway config's `policy`) of `agent`, or of the global layer
   * when omitted; it replaces the one set before, and `null` removes it. Every call of the scope is
   * decided by it, Code Mode sub-calls included: `who` and `when` read the calling agent's
   * `identity` (see `createAgent`), a denial fails the call with `TOOL_DENIED`, an `ask` goes to
   * the approval service, a used-up quota fails it with `QUOTA_EXCEEDED`. An invalid document
   * throws a `ConfigError` listing every problem with its path; nothing is changed then.
   */
  setPolicy(policy: PolicyInput | null, agent?: Agent): void {
    const compiled = policy === null ? undefined : compilePolicy(policy, 'tools.setPolicy(policy)')
    if (agent !== undefined && (typeof agent !== 'object' || agent === null || !('ctx' in agent)))
      throw new ConfigError('tools.setPolicy(policy, agent)', 'expected an agent made by createAgent')
    const key = agent ?? null
    const previous = this.policies.get(key)
    previous?.enforcement.dispose()
    previous?.hidden()
    this.policies.delete(key)
    if (compiled === undefined) return
    // What an agent may never call, whatever the arguments, leaves its listing (as in the gateway);
    // each view asks for its own agent's identity, a global policy's included.
    const exempt = (name: string) => name === RUN_CODE_NAME || name === SEARCH_TOOLS_NAME
    const hider = this.host.hide(
      (name, of) => !exempt(name) && compiled.refusal(name, (of ?? agent)?.identity) !== undefined,
      agent,
    )
    const enforcement = enforcePolicyDocument(agent?.ctx ?? this.rootCtx, compiled, {
      identityOf: (of) => of?.identity,
      quotas: this.quotaCounter,
      // As in the gateway: run_code and search_tools reach only what the scope may call, so the
      // policy decides their sub-calls and loads, never them.
      exempt,
    })
    this.policies.set(key, { enforcement, hidden: hider.remove })
  }

  /**
   * What the policy would decide for a call, without running or counting it: the decision (`allow`,
   * `deny`, `ask`, or `quota` when a quota is used up), the rules that matched and the one that
   * decided, the deadline, and the policy's digest. The agent's own policy answers, else the global one.
   */
  explain(call: {
    readonly name: string
    readonly arguments?: unknown
    readonly agent?: Agent
    readonly parentTool?: string
  }): Promise<PolicyDecision> {
    const enforcement = ((call.agent && this.policies.get(call.agent)) ?? this.policies.get(null))?.enforcement
    if (enforcement === undefined)
      return Promise.resolve(
        Object.freeze({ decision: 'allow' as const, reason: 'no policy is set', matched: [], quotas: [], policy: '' }),
      )
    return enforcement.explain({
      tool: call.name,
      args: call.arguments,
      identity: call.agent?.identity,
      ...(call.parentTool !== undefined ? { parentTool: call.parentTool, depth: 1 } : {}),
    })
  }

  /** The policy decision taken for a call (by its token), for a journal or an audit hook. */
  policyDecision(exec: { readonly token: symbol; readonly agent?: Agent }): PolicyDecision | undefined {
    const token = exec.token as Parameters<PolicyEnforcement['decisionOf']>[0]
    return (
      (exec.agent && this.policies.get(exec.agent)?.enforcement.decisionOf(token)) ??
      this.policies.get(null)?.enforcement.decisionOf(token)
    )
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
