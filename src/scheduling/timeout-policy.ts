import type { Context } from 'cordis'
import { TOOL_TIMEOUT, ToolTimeoutError } from '../runtime/errors.js'
import type { ToolDispatchExecution, ToolExecutionFailure, ToolExecutionResult } from '../runtime/types.js'

/** Config of {@link TimeoutPolicy}. */
export interface TimeoutPolicyConfig {
  /** Deadline (ms, positive and finite) for tools that declare no `timeoutMs`. Omit: no deadline for them. */
  readonly defaultTimeoutMs?: number
}

/** The part of `ctx.tools` the policy needs. */
interface DefinitionLookup {
  get(name: string, scope?: ToolDispatchExecution['agent']): { readonly timeoutMs?: number } | undefined
}

/**
 * Cooperative `timeoutMs` enforcement (R-SCHED-2), as a `tools/execute` wrapper.
 *
 * For a call whose visible definition declares `timeoutMs` (or when `defaultTimeoutMs` is
 * configured), the wrapper replaces `exec.signal` for its delegated lifetime with one that
 * also aborts at the deadline, awaits the rest of the chain (the pipeline never abandons
 * the body, so this is quiescence), restores the signal, and — when the deadline fired and
 * the signal it was handed had not aborted — reports `TOOL_TIMEOUT`. Caller cancellation
 * wins: its result is left to the pipeline (which reports `ABORTED`).
 *
 * Usage: `ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: 30_000 })`.
 */
export class TimeoutPolicy {
  static readonly inject = ['tools']

  readonly defaultTimeoutMs: number | undefined

  constructor(ctx: Context, config: TimeoutPolicyConfig = {}) {
    this.defaultTimeoutMs = validateConfig(config)
    // Look definitions up through the injected service, not the listener's `this`: the
    // visible definition for `exec.agent` is what the pipeline dispatched to.
    ctx.on('tools/execute', (exec, next) => this.wrap(ctx.tools, exec, next))
  }

  /** Resolve the budget of one call: its definition's `timeoutMs`, else the default. */
  private budget(lookup: DefinitionLookup, exec: ToolDispatchExecution): number | undefined {
    let own: number | undefined
    try {
      own = lookup.get(exec.name, exec.agent)?.timeoutMs
    } catch {
      own = undefined
    }
    return typeof own === 'number' && own > 0 && Number.isFinite(own) ? own : this.defaultTimeoutMs
  }

  private async wrap(
    lookup: DefinitionLookup,
    exec: ToolDispatchExecution,
    next: () => Promise<ToolExecutionResult>,
  ): Promise<ToolExecutionResult> {
    const timeoutMs = this.budget(lookup, exec)
    const previous = exec.signal
    // Nothing to enforce, or the call is already cancelled (the caller's outcome wins).
    if (timeoutMs === undefined || previous.aborted) return next()

    const deadline = new AbortController()
    const timeout = new ToolTimeoutError(exec.name, timeoutMs)
    const timer = setTimeout(() => deadline.abort(timeout), timeoutMs)
    exec.signal = AbortSignal.any([previous, deadline.signal])
    let result: ToolExecutionResult | undefined
    let failure: { error: unknown } | undefined
    try {
      result = await next()
    } catch (error) {
      // The pipeline's next() normalizes failures; a rejection only comes from a foreign chain.
      failure = { error }
    } finally {
      clearTimeout(timer)
      exec.signal = previous
    }
    if (deadline.signal.aborted && !previous.aborted) return timeoutFailure(timeout, result)
    if (failure) throw failure.error
    return result as ToolExecutionResult
  }
}

/**
 * A fired deadline always reports `TOOL_TIMEOUT`, whatever the body produced after it:
 * a late success exceeded its budget, and a failure after the abort is almost always the
 * abort's own consequence. Only the tool-deferred contexts survive (they ride the result
 * even when the body fails).
 */
function timeoutFailure(timeout: ToolTimeoutError, result: ToolExecutionResult | undefined): ToolExecutionFailure {
  const failure: ToolExecutionFailure = {
    isError: true,
    error: {
      message: timeout.message,
      info: { name: 'ToolTimeoutError', code: TOOL_TIMEOUT, timeoutMs: timeout.timeoutMs },
    },
    content: [{ type: 'text', text: timeout.message }],
  }
  const contexts = result?.additionalContexts
  return contexts?.length ? { ...failure, additionalContexts: contexts } : failure
}

function validateConfig(config: TimeoutPolicyConfig | undefined): number | undefined {
  if (config === undefined || config === null) return undefined
  if (typeof config !== 'object') throw new TypeError('TimeoutPolicy: config must be an object')
  const ms = config.defaultTimeoutMs
  if (ms === undefined) return undefined
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
    throw new RangeError(`TimeoutPolicy: config.defaultTimeoutMs must be a positive finite number, got ${String(ms)}`)
  }
  return ms
}
