import type { ToolExecutionInput, ToolExecutionMode } from '../contract/execution.js'

/** Overlapping parallel calls at most, when the caller sets no bound (batches and Code Mode sub-calls alike). */
export const DEFAULT_MAX_PARALLEL = 8

const EXCLUSIVE: ToolExecutionMode = Object.freeze({ kind: 'exclusive' })
const PARALLEL: ToolExecutionMode = Object.freeze({ kind: 'parallel' })

/**
 * Classify one call, failing closed: anything but an exact `{ kind: 'parallel' }` answer (or a
 * throw) is exclusive, so a broken classifier can only cost concurrency, never safety.
 */
export function classifyCall(
  executionMode: (input: ToolExecutionInput) => ToolExecutionMode,
  call: ToolExecutionInput,
): ToolExecutionMode {
  try {
    return executionMode(call)?.kind === 'parallel' ? PARALLEL : EXCLUSIVE
  } catch {
    return EXCLUSIVE
  }
}

/** Options of {@link CallScheduler}. */
export interface CallSchedulerOptions {
  /** Upper bound of overlapping parallel calls; the caller validates it. Default {@link DEFAULT_MAX_PARALLEL}. */
  readonly maxParallel?: number
  /**
   * Start queued calls from a microtask instead of inside `submit()`. Code Mode needs this: its
   * calls are submitted from inside the sandbox's synchronous slice, where nothing may start.
   */
  readonly deferStart?: boolean
}

interface Job {
  readonly exclusive: boolean
  readonly start: () => Promise<unknown>
}

/**
 * The one scheduling rule of toolgate, shared by `executeBatch` and Code Mode sub-calls.
 *
 * Calls start in submission order. An exclusive call is a barrier: it starts only once every
 * earlier call has settled, and nothing submitted after it starts until it has settled. Parallel
 * calls between barriers overlap through a rolling pool of at most `maxParallel`: the next one
 * starts as soon as any in-flight one settles.
 *
 * `start` should not reject (both callers contain failures into results); if one does anyway,
 * the call counts as settled so the queue never stalls.
 */
export class CallScheduler {
  private readonly maxParallel: number
  private readonly deferStart: boolean
  private readonly queue: Job[] = []
  private head = 0
  private running = 0
  private exclusiveRunning = false
  private pumpQueued = false
  private idleWaiters: Array<() => void> = []

  constructor(options: CallSchedulerOptions = {}) {
    this.maxParallel = options.maxParallel ?? DEFAULT_MAX_PARALLEL
    this.deferStart = options.deferStart === true
  }

  /** Queue one call; `start` is invoked when the rule allows it. */
  submit(mode: ToolExecutionMode, start: () => Promise<unknown>): void {
    this.queue.push({ exclusive: mode.kind !== 'parallel', start })
    if (!this.deferStart) {
      this.pump()
      return
    }
    if (this.pumpQueued) return
    this.pumpQueued = true
    queueMicrotask(() => {
      this.pumpQueued = false
      this.pump()
    })
  }

  /** Resolves once no call is queued or in flight. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve()
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve)
    })
  }

  private isIdle(): boolean {
    return this.head === this.queue.length && this.running === 0
  }

  private pump(): void {
    while (this.head < this.queue.length && !this.exclusiveRunning) {
      const job = this.queue[this.head]
      if (job.exclusive ? this.running > 0 : this.running >= this.maxParallel) break
      this.queue[this.head++] = undefined as unknown as Job
      this.launch(job)
    }
    if (this.head === this.queue.length) {
      // Everything queued has started: reclaim the slots so a long-lived scheduler holds nothing per call.
      this.queue.length = 0
      this.head = 0
    }
    if (this.isIdle() && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters
      this.idleWaiters = []
      for (const wake of waiters) wake()
    }
  }

  private launch(job: Job): void {
    this.running++
    if (job.exclusive) this.exclusiveRunning = true
    const settle = () => {
      this.running--
      if (job.exclusive) this.exclusiveRunning = false
      this.pump()
    }
    let started: Promise<unknown>
    try {
      started = Promise.resolve(job.start())
    } catch {
      started = Promise.resolve()
    }
    started.then(settle, settle)
  }
}
