import type { Context } from 'cordis'
import type { ToolDispatchExecution, ToolExecutionFailure, ToolExecutionResult } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { fuseSignals, ToolTimeoutError } from '../runtime/index.js'

/** Config of {@link TimeoutPolicy}. */
export interface TimeoutPolicyConfig {
  /** Deadline (ms, positive and finite) for tools that declare neither `timeoutMs` nor `idleTimeoutMs`. Omit: none. */
  readonly defaultTimeoutMs?: number
  /**
   * Idle budget (ms, positive and finite) for tools that declare no `idleTimeoutMs`: a call that
   * reports no `exec.progress(...)` for this long ends as `TOOL_TIMEOUT`. Omit: no idle budget for them.
   */
  readonly idleTimeoutMs?: number
}

/** The part of `ctx.tools` the policy needs. */
interface DefinitionLookup {
  get(
    name: string,
    scope?: ToolDispatchExecution['agent'],
  ): { readonly timeoutMs?: number; readonly idleTimeoutMs?: number } | undefined
}

/** The idle clock of one running call, touched by its progress reports. */
interface IdleClock {
  last: number
}

/**
 * Cooperative `timeoutMs` / `idleTimeoutMs` enforcement, as a `tools/execute` wrapper.
 *
 * For a call whose visible definition declares `timeoutMs` (or when `defaultTimeoutMs` is
 * configured), the wrapper replaces `exec.signal` for its delegated lifetime with one that
 * also aborts at the deadline, awaits the rest of the chain (the pipeline never abandons
 * the body, so this is quiescence), restores the signal, and — when the deadline fired and
 * the signal it was handed had not aborted — reports `TOOL_TIMEOUT`. Caller cancellation
 * wins: its result is left to the pipeline (which reports `ABORTED`).
 *
 * The idle budget (`idleTimeoutMs`, per tool or from the config) works the same way, except that
 * every `tools/progress` report of the call restarts it: a slow but live tool runs as long as it
 * keeps reporting. A tool that declares `idleTimeoutMs` and no `timeoutMs` opted into liveness
 * instead of a fixed deadline, so `defaultTimeoutMs` does not apply to it.
 *
 * Usage: `ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: 30_000, idleTimeoutMs: 10_000 })`.
 */
export class TimeoutPolicy {
  static readonly inject = ['tools']

  readonly defaultTimeoutMs: number | undefined
  readonly idleTimeoutMs: number | undefined
  /** Idle clocks of the calls this policy is timing, by execution token. */
  private readonly clocks = new Map<symbol, IdleClock>()

  constructor(ctx: Context, config: TimeoutPolicyConfig = {}) {
    const checked = validateConfig(config)
    this.defaultTimeoutMs = checked.defaultTimeoutMs
    this.idleTimeoutMs = checked.idleTimeoutMs
    // Look definitions up through the injected service, not the listener's `this`: the
    // visible definition for `exec.agent` is what the pipeline dispatched to. Read once: the
    // policy restarts with the service (it is injected), and every `ctx.tools` read costs a
    // Cordis service lookup.
    const tools = ctx.tools
    ctx.on('tools/execute', (exec, next) => this.wrap(tools, exec, next))
    // A progress report only stamps the clock (no timer churn, however often a tool reports).
    ctx.on('tools/progress', (exec) => {
      const clock = this.clocks.get(exec.token)
      if (clock !== undefined) clock.last = performance.now()
    })
  }

  /** Resolve the budgets of one call from its definition and the config. */
  private budgets(
    lookup: DefinitionLookup,
    exec: ToolDispatchExecution,
  ): { deadline: number | undefined; idle: number | undefined } {
    let own: { readonly timeoutMs?: number; readonly idleTimeoutMs?: number } | undefined
    try {
      own = lookup.get(exec.name, exec.agent)
    } catch {
      own = undefined
    }
    const ownDeadline = positive(own?.timeoutMs)
    const ownIdle = positive(own?.idleTimeoutMs)
    const deadline = ownDeadline ?? (ownIdle === undefined ? this.defaultTimeoutMs : undefined)
    return { deadline, idle: ownIdle ?? this.idleTimeoutMs }
  }

  private async wrap(
    lookup: DefinitionLookup,
    exec: ToolDispatchExecution,
    next: () => Promise<ToolExecutionResult>,
  ): Promise<ToolExecutionResult> {
    const { deadline, idle } = this.budgets(lookup, exec)
    const previous = exec.signal
    // Nothing to enforce, or the call is already cancelled (the caller's outcome wins).
    if ((deadline === undefined && idle === undefined) || previous.aborted) return next()

    const controller = new AbortController()
    let fired: ToolTimeoutError | undefined
    const fire = (error: ToolTimeoutError): void => {
      if (fired !== undefined) return
      fired = error
      controller.abort(error)
    }
    const timers: Array<ReturnType<typeof setTimeout>> = []
    if (deadline !== undefined) {
      timers.push(setTimeout(() => fire(new ToolTimeoutError(exec.name, deadline)), deadline))
    }
    let clock: IdleClock | undefined
    if (idle !== undefined) {
      clock = { last: performance.now() }
      const current = clock
      this.clocks.set(exec.token, current)
      // One timer at a time: when it fires early (progress arrived), re-arm for the remainder.
      const check = (): void => {
        const quiet = performance.now() - current.last
        if (quiet >= idle) fire(new ToolTimeoutError(exec.name, idle, { idle: true }))
        else timers[slot] = setTimeout(check, idle - quiet)
      }
      const slot = timers.length
      timers.push(setTimeout(check, idle))
    }
    // Released in `finally`: a long-lived caller signal must not keep this call's deadline alive.
    const fused = fuseSignals(previous, controller.signal)
    exec.signal = fused.signal
    let result: ToolExecutionResult | undefined
    let failure: { error: unknown } | undefined
    try {
      result = await next()
    } catch (error) {
      // The pipeline's next() normalizes failures; a rejection only comes from a foreign chain.
      failure = { error }
    } finally {
      for (const timer of timers) clearTimeout(timer)
      if (clock !== undefined && this.clocks.get(exec.token) === clock) this.clocks.delete(exec.token)
      fused.release()
      exec.signal = previous
    }
    if (fired !== undefined && !previous.aborted) return timeoutFailure(fired, result)
    if (failure) throw failure.error
    return result as ToolExecutionResult
  }
}

function positive(ms: unknown): number | undefined {
  return typeof ms === 'number' && ms > 0 && Number.isFinite(ms) ? ms : undefined
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
      info: {
        name: 'ToolTimeoutError',
        code: 'TOOL_TIMEOUT',
        timeoutMs: timeout.timeoutMs,
        ...(timeout.idle ? { idle: true } : {}),
      },
    },
    content: [{ type: 'text', text: timeout.message }],
  }
  const contexts = result?.additionalContexts
  return contexts?.length ? { ...failure, additionalContexts: contexts } : failure
}

function validateConfig(config: TimeoutPolicyConfig | undefined): {
  defaultTimeoutMs: number | undefined
  idleTimeoutMs: number | undefined
} {
  if (config === undefined || config === null) return { defaultTimeoutMs: undefined, idleTimeoutMs: undefined }
  if (typeof config !== 'object') throw new ConfigError('TimeoutPolicy config', 'expected an object')
  const read = (key: 'defaultTimeoutMs' | 'idleTimeoutMs'): number | undefined => {
    const ms = config[key]
    if (ms === undefined) return undefined
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
      throw new ConfigError(`TimeoutPolicy config.${key}`, `expected a positive finite number, got ${String(ms)}`)
    }
    return ms
  }
  return { defaultTimeoutMs: read('defaultTimeoutMs'), idleTimeoutMs: read('idleTimeoutMs') }
}
