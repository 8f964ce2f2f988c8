import { AgentDisposedError, RuntimeDisposedError, type ToolPipelineError } from './errors.js'
import type { Scope } from './scope.js'
import type { FusedSignal } from './signal-fusion.js'

/**
 * The registry's lifetime: whether the runtime was disposed, the bodies to abort when it or an
 * agent goes, and a way to wait until every call in flight has produced its result.
 */
export class Lifetime {
  disposed = false
  /** Bodies that read their signal and are still running. */
  readonly running = new Set<BodySignal>()
  /** Callers waiting on something disposal must cut short (an approval that would never answer). */
  private readonly waiters = new Set<{ readonly scope: Scope; readonly stop: () => void }>()
  private drained: (() => void) | undefined
  private drainPromise: Promise<void> | undefined

  /** Why `scope` cannot act any more (runtime first, then the nearest disposed agent), or `undefined`. */
  halted(scope: Scope, action: string): ToolPipelineError | undefined {
    if (this.disposed) return new RuntimeDisposedError(action)
    for (const layer of scope.chain) {
      if (layer.disposed) return new AgentDisposedError(layer.agent?.id ?? '', action)
    }
    return undefined
  }

  /** Mark the runtime disposed and abort every running body that observes its signal. */
  dispose(): void {
    if (this.disposed) return
    this.disposed = true
    for (const body of [...this.running]) body.abort(new RuntimeDisposedError('the call'))
    for (const waiter of [...this.waiters]) waiter.stop()
  }

  /** Mark an agent disposed and abort the running bodies of its scope and the scopes below it. */
  disposeScope(scope: Scope): void {
    if (scope.disposed) return
    scope.disposed = true
    const reason = new AgentDisposedError(scope.agent?.id ?? '', 'the call')
    for (const body of [...this.running]) if (body.scope.chain.has(scope)) body.abort(reason)
    for (const waiter of [...this.waiters]) if (waiter.scope.chain.has(scope)) waiter.stop()
  }

  /** `work`'s value, or `halted` as soon as the runtime or an agent on `scope`'s chain is disposed. */
  async untilHalted<T, H>(scope: Scope, work: PromiseLike<T>, halted: H): Promise<T | H> {
    if (this.halted(scope, 'the call')) return halted
    let waiter: { scope: Scope; stop: () => void } | undefined
    const stopped = new Promise<H>((resolve) => {
      waiter = { scope, stop: () => resolve(halted) }
      this.waiters.add(waiter)
    })
    try {
      return await Promise.race([work, stopped])
    } finally {
      if (waiter) this.waiters.delete(waiter)
    }
  }

  /** Resolves once `live` (the calls in flight) is empty; the pipeline calls `settled()` as each ends. */
  drain(live: { readonly size: number }): Promise<void> {
    if (live.size === 0) return Promise.resolve()
    this.drainPromise ??= new Promise<void>((resolve) => {
      this.drained = resolve
    })
    return this.drainPromise
  }

  settled(live: { readonly size: number }): void {
    if (this.drained === undefined || live.size > 0) return
    const done = this.drained
    this.drained = undefined
    this.drainPromise = undefined
    done()
  }
}

/**
 * The signal a tool body sees, made lazily: only a body that reads `exec.signal` can observe
 * cancellation, so only then is a controller linked to the caller's signal and made abortable
 * by disposal. A body that never reads it costs nothing extra on the per-call path.
 */
export class BodySignal {
  private controller: Pick<AbortController, 'signal' | 'abort'> | undefined
  private readonly forward = () => this.abort(this.base.reason)
  private released = false

  /**
   * `base` is the signal the body would see; `fused`, when given, is the fusion whose signal
   * `base` is, owned by this call alone: disposal then aborts it directly instead of a controller
   * linked on top of it (one signal and one listener fewer per call).
   */
  constructor(
    private readonly lifetime: Lifetime,
    readonly scope: Scope,
    private readonly base: AbortSignal,
    private readonly fused?: FusedSignal,
  ) {}

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal
    if (this.released) return this.base
    const halted = this.lifetime.halted(this.scope, 'the call')
    if (this.fused !== undefined) {
      // The fusion already follows the caller's signal; only disposal is left to link.
      this.controller = { signal: this.base, abort: this.fused.abort }
      if (this.base.aborted) return this.base
      if (halted) this.fused.abort(halted)
      else this.lifetime.running.add(this)
      return this.base
    }
    const controller = new AbortController()
    this.controller = controller
    if (this.base.aborted) controller.abort(this.base.reason)
    else if (halted) controller.abort(halted)
    else {
      this.base.addEventListener('abort', this.forward, { once: true })
      this.lifetime.running.add(this)
    }
    return controller.signal
  }

  /** Whether disposal (not the caller) aborted this body. */
  get disposed(): boolean {
    const reason: unknown = this.controller?.signal.reason
    return reason instanceof RuntimeDisposedError || reason instanceof AgentDisposedError
  }

  abort(reason: unknown): void {
    this.controller?.abort(reason)
    this.release()
  }

  /** The body settled: unlink from the caller's signal and the lifetime. */
  release(): void {
    if (this.released) return
    this.released = true
    // Linked only when the body read its signal (and no fusion of this call stood in for the link).
    if (this.controller === undefined) return
    if (this.fused === undefined) this.base.removeEventListener('abort', this.forward)
    this.lifetime.running.delete(this)
  }
}
