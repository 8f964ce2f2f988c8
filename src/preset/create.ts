/// <reference lib="esnext.disposable" preserve="true" />
import { Context } from 'cordis'
import { ConfigError } from '../errors/config-error.js'
import { type PolicyInput, parsePolicy } from '../policy/index.js'
import { CallbackApproval, type CallbackApprovalConfig, TerminalApproval, TimeoutPolicy } from '../scheduling/index.js'
import { ToolRuntime, type ToolRuntimeConfig } from './tool-runtime.js'

/** Options of {@link createToolRuntime}: the service config plus the policies a newcomer needs. */
export interface CreateToolRuntimeOptions extends ToolRuntimeConfig {
  /**
   * Install the approval service that answers every ask (a `needsApproval` tool, a
   * `tools/pre-execute` listener returning `{ kind: 'ask' }`): a `decide(request, context)`
   * callback, or `'terminal'` to ask `y/N` on stdin/stdout. Omit: an ask is denied
   * ("no approval service is available") unless you load one with `ctx.plugin(...)`.
   */
  approval?: CallbackApprovalConfig['decide'] | 'terminal'
  /**
   * Deadline in ms for tools that declare no `timeoutMs` (they end as `TOOL_TIMEOUT`). The timeout
   * policy is always installed, so a tool's own `timeoutMs` is enforced with or without it.
   */
  defaultTimeoutMs?: number
  /**
   * The policy document (the gateway config's `policy`): allow, deny, ask, deadlines and rules
   * with `who`, `when` and `quota`. Checked as the gateway checks its config: an invalid one throws
   * a `ConfigError` listing every problem with its path. Change it later with `tools.setPolicy`.
   */
  policy?: PolicyInput
}

/** What {@link createToolRuntime} returns: the root context, the service, and their lifetime. */
export interface ToolRuntimeHandle {
  /** The root Cordis context: load further plugins (policies, approval services) with `ctx.plugin(...)`. */
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
 * For users without their own Cordis app: a root context with the `tools` service, the timeout
 * policy and (optionally) an approval service ready (the `ToolRuntime` preset). Nothing in the runtime
 * core imports this convenience constructor.
 */
export async function createToolRuntime(options: CreateToolRuntimeOptions = {}): Promise<ToolRuntimeHandle> {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('createToolRuntime(options)', 'expected an object')
  const { approval, defaultTimeoutMs, policy, ...config } = options
  const compiledCheck = policy === undefined ? undefined : parsePolicy(policy, 'createToolRuntime(options).policy')
  if (approval !== undefined && approval !== 'terminal' && typeof approval !== 'function') {
    throw new ConfigError(
      'createToolRuntime(options).approval',
      `expected a decide(request, context) function or 'terminal', got ${typeof approval === 'string' ? JSON.stringify(approval) : typeof approval}`,
    )
  }
  if (
    defaultTimeoutMs !== undefined &&
    !(typeof defaultTimeoutMs === 'number' && Number.isFinite(defaultTimeoutMs) && defaultTimeoutMs > 0)
  ) {
    throw new ConfigError(
      'createToolRuntime(options).defaultTimeoutMs',
      `expected a positive finite number of milliseconds, got ${String(defaultTimeoutMs)}`,
    )
  }
  const ctx = new Context()
  await ctx.plugin(ToolRuntime, config)
  const tools = ctx.tools
  const host = tools.host
  try {
    await ctx.plugin(TimeoutPolicy, defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs })
    if (compiledCheck !== undefined) tools.setPolicy(compiledCheck)
    if (approval === 'terminal') await ctx.plugin(TerminalApproval)
    else if (approval !== undefined) await ctx.plugin(CallbackApproval, { decide: approval })
  } catch (error) {
    await ctx.fiber.dispose()
    throw error
  }
  let disposing: Promise<void> | undefined
  const dispose = (): Promise<void> => {
    disposing ??= (async () => {
      host.halt()
      await ctx.fiber.dispose()
      await host.settled()
    })()
    return disposing
  }
  return Object.freeze({ ctx, tools, dispose, [Symbol.asyncDispose]: dispose })
}
