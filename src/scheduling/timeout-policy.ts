import type { Context } from 'cordis'
import type { ToolDispatchExecution, ToolExecutionFailure, ToolExecutionResult } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { directListener, followSignal, ToolTimeoutError } from '../runtime/index.js'

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

/** One call the policy is timing: its idle clock, touched by progress reports, and its pause. */
interface TimedCall {
  last: number
  /** Tokens of this call's sub-calls whose approval question is open; the budgets stop while any is. */
  readonly waiting: Set<symbol>
  pause(): void
  resume(): void
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
 * A call's budgets start when it starts to run, after its own approval. A call that makes
 * sub-calls (a Code Mode program) would otherwise pay for theirs: while at least one of its
 * sub-calls waits for an approval answer, both its deadline and its idle budget stand still (the
 * deadline keeps what was left, the idle budget starts afresh when the last answer arrives).
 *
 * Usage: `ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: 30_000, idleTimeoutMs: 10_000 })`.
 */
export class TimeoutPolicy {
  static readonly inject = ['tools']

  readonly defaultTimeoutMs: number | undefined
  readonly idleTimeoutMs: number | undefined
  /** The calls this policy is timing, by execution token. */
  private readonly clocks = new Map<symbol, TimedCall>()

  constructor(ctx: Context, config: TimeoutPolicyConfig = {}) {
    const checked = validateConfig(config)
    this.defaultTimeoutMs = checked.defaultTimeoutMs
    this.idleTimeoutMs = checked.idleTimeoutMs
    // Look definitions up through the injected service, not the listener's `this`: the
    // visible definition for `exec.agent` is what the pipeline dispatched to. Read once: the
    // policy restarts with the service (it is injected), and every `ctx.tools` read costs a
    // Cordis service lookup.
    // The method too is read once (each read through the service's tracing proxy walks its
    // prototype chain); it is still called on the service.
    const tools = ctx.tools
    const get = tools.get
    const lookup: DefinitionLookup = { get: (name, scope) => get.call(tools, name, scope) }
    ctx.on(
      'tools/execute',
      directListener((exec, next) => {
        const budgets = this.budgets(lookup, exec)
        // Nothing to enforce, or the call is already cancelled (the caller's outcome wins): the call
        // goes on as it came, without an async frame of this policy around it.
        if ((budgets.deadline === undefined && budgets.idle === undefined) || exec.signal.aborted) return next()
        return this.wrap(exec, next, budgets)
      }),
    )
    // A progress report only stamps the clock (no timer churn, however often a tool reports).
    ctx.on('tools/progress', (exec) => {
      const clock = this.clocks.get(exec.token)
      if (clock !== undefined) clock.last = performance.now()
    })
    // The pipeline announces every ask and its answer; a sub-call names the timed call as `parent`.
    // Tracked by sub-call token, so overlapping asks pause once and a stray answer changes nothing.
    ctx.on('tools/approval-asked', (_request, exec) => {
      const call = exec.parent === undefined ? undefined : this.clocks.get(exec.parent)
      if (call === undefined || call.waiting.has(exec.token)) return
      call.waiting.add(exec.token)
      if (call.waiting.size === 1) call.pause()
    })
    ctx.on('tools/approval-answered', (_request, _outcome, _source, exec) => {
      const call = exec.parent === undefined ? undefined : this.clocks.get(exec.parent)
      if (call === undefined || !call.waiting.delete(exec.token)) return
      if (call.waiting.size === 0) call.resume()
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
    exec: ToolDispatchExecution,
    next: () => Promise<ToolExecutionResult>,
    { deadline, idle }: { deadline: number | undefined; idle: number | undefined },
  ): Promise<ToolExecutionResult> {
    const previous = exec.signal

    // The body's signal: the caller's cancellation or this policy's timeout, whichever comes first.
    // Released in `finally`: a long-lived caller signal must not keep this call's deadline alive.
    const own = followSignal(previous)
    let fired: ToolTimeoutError | undefined
    const fire = (error: ToolTimeoutError): void => {
      if (fired !== undefined) return
      fired = error
      own.abort(error)
    }
    let deadlineTimer: ReturnType<typeof setTimeout> | undefined
    let idleTimer: ReturnType<typeof setTimeout> | undefined
    // What is left of the deadline, and since when it has been running (it stands still while paused).
    let remaining = deadline ?? 0
    let since = 0
    const call: TimedCall = { last: performance.now(), waiting: new Set(), pause: () => {}, resume: () => {} }
    const armDeadline = (): void => {
      if (deadline === undefined) return
      since = performance.now()
      deadlineTimer = setTimeout(() => fire(new ToolTimeoutError(exec.name, deadline)), remaining)
    }
    // One idle timer at a time: when it fires early (progress arrived), re-arm for the remainder.
    const checkIdle = (): void => {
      if (idle === undefined) return
      const quiet = performance.now() - call.last
      if (quiet >= idle) fire(new ToolTimeoutError(exec.name, idle, { idle: true }))
      else idleTimer = setTimeout(checkIdle, idle - quiet)
    }
    const stop = (): void => {
      clearTimeout(deadlineTimer)
      clearTimeout(idleTimer)
      deadlineTimer = undefined
      idleTimer = undefined
    }
    call.pause = () => {
      if (deadlineTimer !== undefined) remaining = Math.max(0, remaining - (performance.now() - since))
      stop()
    }
    call.resume = () => {
      if (fired !== undefined) return
      armDeadline()
      if (idle !== undefined) {
        call.last = performance.now()
        idleTimer = setTimeout(checkIdle, idle)
      }
    }
    armDeadline()
    if (idle !== undefined) idleTimer = setTimeout(checkIdle, idle)
    this.clocks.set(exec.token, call)
    exec.signal = own.signal
    let result: ToolExecutionResult | undefined
    let failure: { error: unknown } | undefined
    try {
      result = await next()
    } catch (error) {
      // The pipeline's next() normalizes failures; a rejection only comes from a foreign chain.
      failure = { error }
    } finally {
      stop()
      if (this.clocks.get(exec.token) === call) this.clocks.delete(exec.token)
      own.release()
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
