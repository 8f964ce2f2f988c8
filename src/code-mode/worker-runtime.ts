import { availableParallelism } from 'node:os'
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads'
import { ConfigError } from '../errors/config-error.js'
import { encodeBindingOutcome } from './binding-text.js'
import type {
  CodeBindingOutcome,
  CodeRunFailureReason,
  CodeRunOutcome,
  CodeRunRequest,
  CodeRuntime,
} from './code-runtime.js'
import { droppedLogLines } from './constants.js'
import {
  loadStripper,
  positiveOption,
  type QuickJsLimits,
  type QuickJsRuntimeOptions,
  resolveQuickJsLimits,
} from './quickjs-runtime.js'
import type { StrippedProgram } from './strip-program.js'
import {
  absoluteNow,
  CLOCK_DROPPED,
  CLOCK_IN_SLICE,
  CLOCK_RUN,
  CLOCK_STAMP,
  CLOCK_VM,
  FLAG_ABORT,
  type FromWorker,
  SHARED_BYTES,
  sharedViews,
  type ToWorker,
  type WorkerBoot,
  type WorkerCall,
} from './worker-protocol.js'

/** V8 limits of each worker thread (the `resourceLimits` of `node:worker_threads`), in MiB. */
export interface WorkerResourceLimits {
  readonly maxOldGenerationSizeMb?: number
  readonly maxYoungGenerationSizeMb?: number
  readonly codeRangeSizeMb?: number
  readonly stackSizeMb?: number
}

/** Options of the worker-thread runtime: the per-run limits of QuickJS plus the pool's own. */
export interface WorkerCodeRuntimeOptions extends QuickJsRuntimeOptions {
  /** Worker threads in the pool (started on demand). Default `min(4, os.availableParallelism())`. */
  readonly poolSize?: number
  /**
   * Each worker's own V8 heap and stack limits (the old generation at least 4× `memoryLimitBytes`,
   * since values that size cross into it). Default `{ maxOldGenerationSizeMb: max(256, 4× the memory limit),
   * maxYoungGenerationSizeMb: 32, stackSizeMb: 1 }`. QuickJS's heap lives in WebAssembly memory,
   * outside these; they bound what crosses the boundary (strings, parsed JSON). The 1 MiB stack
   * matches the main thread's, which QuickJS's default stack limit is sized against: a deeper host
   * stack only lets a natively recursive built-in run longer before it fails.
   */
  readonly resourceLimits?: WorkerResourceLimits
  /**
   * How long a run may hold its worker past its CPU budget (a guest stuck where the interrupt
   * handler cannot stop it) or past its cancellation before the worker is terminated. Default 500 ms.
   */
  readonly terminateGraceMs?: number
  /** An idle worker is terminated after this long without a run. Default 30,000 ms. */
  readonly idleTimeoutMs?: number
}

/** Counters of a {@link WorkerCodeRuntime}'s pool. */
export interface WorkerPoolStats {
  /** Workers started since the pool was created (replacements included). */
  readonly started: number
  /** Workers that have exited. */
  readonly exited: number
  /** Workers terminated by the watchdog (a run past its budget or its cancellation). */
  readonly terminated: number
  /** Workers that died on their own (crash, V8 heap limit). */
  readonly crashed: number
  /** Workers alive now (starting, idle or busy). */
  readonly alive: number
  readonly busy: number
  /** Runs waiting for a worker. */
  readonly queued: number
  /** Timers the pool holds (the watchdog while runs are active, one idle timer per idle worker). */
  readonly timers: number
}

const DEFAULT_RESOURCE_LIMITS: WorkerResourceLimits = {
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 1,
}
const WATCHDOG_INTERVAL_MS = 25
const EMPTY: readonly string[] = Object.freeze([])

/** One run on the host side: its request, the logs the worker streamed, and its single settlement. */
interface HostRun {
  readonly id: number
  readonly request: CodeRunRequest
  readonly stripping: Promise<StrippedProgram>
  readonly logs: string[]
  readonly resolve: (outcome: CodeRunOutcome) => void
  worker: PoolWorker | undefined
  abortedAt: number | undefined
  settled: boolean
  readonly onAbort: () => void
}

interface PoolWorker {
  readonly worker: Worker
  /** The host end of the run channel (see {@link WorkerBoot.port}). */
  readonly port: MessagePort
  readonly clock: Float64Array
  readonly flags: Int32Array
  run: HostRun | undefined
  idleTimer: NodeJS.Timeout | undefined
  /** Set once the pool stopped using it (terminated, crashed or exited). */
  gone: boolean
  exited: Promise<void>
}

/**
 * The worker's entry module: the compiled `worker-entry.js` beside this file in the built package;
 * from sources (vitest, tsx) a bundle of `worker-entry.ts` made once with esbuild, because a worker
 * thread does not inherit the parent's TypeScript loader.
 */
function workerEntry(): URL | Promise<URL> {
  if (!import.meta.url.endsWith('.ts')) return new URL('./worker-entry.js', import.meta.url)
  return import('../util/worker-source-bundle.js').then((bundle) =>
    bundle.bundleWorkerEntry(new URL('./worker-entry.ts', import.meta.url)),
  )
}

let entryUrl: URL | undefined
let entryLoading: Promise<URL> | undefined

/** The entry URL, synchronously once known. */
function loadEntry(): URL | Promise<URL> {
  if (entryUrl !== undefined) return entryUrl
  if (entryLoading === undefined) {
    const found = workerEntry()
    if (found instanceof URL) {
      entryUrl = found
      return found
    }
    const loading = found.then((url) => {
      entryUrl = url
      return url
    })
    entryLoading = loading
    loading.catch(() => {
      if (entryLoading === loading) entryLoading = undefined
    })
  }
  return entryLoading!
}

/**
 * The default {@link CodeRuntime}: every program runs in one of a pool of `worker_threads`, each
 * with its own QuickJS WebAssembly module (a fresh QuickJS runtime per run) and V8 limits. The
 * host thread only strips types (esbuild, in its own process) and serves bindings, so a busy guest
 * never blocks the host's event loop. A worker whose run overstays its CPU budget or its
 * cancellation by {@link WorkerCodeRuntimeOptions.terminateGraceMs} is terminated and replaced;
 * a crashed worker is replaced too. Idle workers do not keep the process alive.
 */
export class WorkerCodeRuntime implements CodeRuntime {
  private readonly limits: QuickJsLimits
  private readonly poolSize: number
  private readonly resourceLimits: WorkerResourceLimits
  private readonly graceMs: number
  private readonly idleTimeoutMs: number
  private readonly workers = new Set<PoolWorker>()
  private readonly queue: HostRun[] = []
  private watchdog: NodeJS.Timeout | undefined
  private disposed = false
  private nextId = 0
  private counts = { started: 0, exited: 0, terminated: 0, crashed: 0 }

  constructor(options?: WorkerCodeRuntimeOptions) {
    const where = 'createWorkerRuntime(options)'
    this.limits = resolveQuickJsLimits(options, where)
    const size = positiveOption(`${where}.poolSize`, options?.poolSize, Math.min(4, availableParallelism()))
    if (!Number.isInteger(size)) throw new ConfigError(`${where}.poolSize`, `expected a positive integer, got ${size}`)
    this.poolSize = size
    const limits = options?.resourceLimits
    if (limits !== undefined && (typeof limits !== 'object' || limits === null))
      throw new ConfigError(`${where}.resourceLimits`, 'expected an object')
    for (const [key, value] of Object.entries(limits ?? {})) positiveOption(`${where}.resourceLimits.${key}`, value, 1)
    // Values up to the sandbox's memory limit cross into the worker's V8 heap; a V8 heap that cannot
    // hold one fails inside message deserialization, which aborts the whole process, not the worker.
    const neededMb = Math.ceil((4 * this.limits.memoryLimitBytes) / (1024 * 1024))
    const oldGeneration = limits?.maxOldGenerationSizeMb
    if (oldGeneration !== undefined && oldGeneration < neededMb)
      throw new ConfigError(
        `${where}.resourceLimits.maxOldGenerationSizeMb`,
        `expected at least ${neededMb} (4× memoryLimitBytes), got ${oldGeneration}`,
      )
    this.resourceLimits = {
      ...DEFAULT_RESOURCE_LIMITS,
      maxOldGenerationSizeMb: Math.max(DEFAULT_RESOURCE_LIMITS.maxOldGenerationSizeMb ?? 0, neededMb),
      ...limits,
    }
    this.graceMs = positiveOption(`${where}.terminateGraceMs`, options?.terminateGraceMs, 500)
    this.idleTimeoutMs = positiveOption(`${where}.idleTimeoutMs`, options?.idleTimeoutMs, 30_000)
  }

  run(request: CodeRunRequest): Promise<CodeRunOutcome> {
    if (this.disposed) return Promise.resolve(disposedOutcome(EMPTY))
    if (request.signal.aborted) return Promise.resolve(failed('aborted', 'the run was cancelled', EMPTY))
    if (typeof request.code !== 'string')
      return Promise.resolve(failed('syntax', 'the program must be a string', EMPTY))
    return new Promise((resolve) => {
      const run: HostRun = {
        id: ++this.nextId,
        request,
        // Type stripping starts now and overlaps with the worker booting the run's QuickJS runtime.
        stripping: loadStripper().then(
          (stripper) => stripper.stripProgram(request.code),
          (error: unknown) => {
            // Not the program's fault: the run ends as internal (the worker's later report is dropped).
            const message = `esbuild failed to load: ${describe(error)}`
            this.settle(run, failed('internal', message, EMPTY))
            return { ok: false, message }
          },
        ),
        logs: [],
        resolve,
        worker: undefined,
        abortedAt: undefined,
        settled: false,
        onAbort: () => this.abort(run),
      }
      request.signal.addEventListener('abort', run.onAbort, { once: true })
      const entry = loadEntry()
      if (entry instanceof URL) this.enqueue(run, entry)
      else
        entry.then(
          (url) => this.enqueue(run, url),
          (error: unknown) =>
            this.settle(run, failed('internal', `the sandbox worker could not be prepared: ${describe(error)}`, EMPTY)),
        )
    })
  }

  private enqueue(run: HostRun, entry: URL): void {
    if (run.settled) return
    if (this.disposed) {
      this.settle(run, disposedOutcome(EMPTY))
      return
    }
    const worker = this.acquire(entry)
    if (worker === undefined) this.queue.push(run)
    else this.assign(worker, run)
  }

  /** Pool counters (for monitoring and tests). */
  stats(): WorkerPoolStats {
    let busy = 0
    let timers = this.watchdog === undefined ? 0 : 1
    for (const worker of this.workers) {
      if (worker.run !== undefined) busy++
      if (worker.idleTimer !== undefined) timers++
    }
    return { ...this.counts, alive: this.workers.size, busy, queued: this.queue.length, timers }
  }

  /**
   * Terminate every worker and clear every timer: runs in flight and queued ones end as
   * `internal` failures, later runs fail the same way. Resolves once every worker has exited.
   */
  async dispose(): Promise<void> {
    this.disposed = true
    this.stopWatchdog()
    for (const run of this.queue.splice(0)) this.settle(run, disposedOutcome(run.logs))
    const exits: Promise<void>[] = []
    for (const worker of [...this.workers]) {
      if (worker.run !== undefined) this.settle(worker.run, disposedOutcome(worker.run.logs))
      exits.push(worker.exited)
      this.drop(worker)
    }
    await Promise.all(exits)
  }

  // -------------------------------------------------------------------------------------------
  // Workers.

  /** An idle worker, a new one if the pool has room, or undefined (the run waits). */
  private acquire(entry: URL): PoolWorker | undefined {
    for (const worker of this.workers) if (worker.run === undefined) return worker
    if (this.workers.size < this.poolSize) return this.spawn(entry)
    return undefined
  }

  /** A new worker (the entry is known: workers exist only after the first one was started). */
  private spawn(entry = entryUrl!): PoolWorker {
    const shared = new SharedArrayBuffer(SHARED_BYTES)
    const { clock, flags } = sharedViews(shared)
    const { port1, port2 } = new MessageChannel()
    const boot: WorkerBoot = { shared, port: port2 }
    const worker = new Worker(entry, {
      workerData: boot,
      transferList: [port2],
      resourceLimits: this.resourceLimits,
      execArgv: [],
      stdout: false,
      stderr: false,
    })
    const member: PoolWorker = {
      worker,
      port: port1,
      clock,
      flags,
      run: undefined,
      idleTimer: undefined,
      gone: false,
      exited: new Promise((resolve) => worker.once('exit', () => resolve())),
    }
    this.counts.started++
    this.workers.add(member)
    port1.on('message', (message: FromWorker) => this.onMessage(member, message))
    port1.unref()
    worker.on('error', (error: Error) => this.onCrash(member, error))
    worker.once('exit', (code) => {
      this.counts.exited++
      if (!member.gone) this.onCrash(member, new Error(`the worker exited with code ${code}`))
    })
    worker.unref()
    return member
  }

  private assign(worker: PoolWorker, run: HostRun): void {
    if (worker.idleTimer !== undefined) clearTimeout(worker.idleTimer)
    worker.idleTimer = undefined
    worker.run = run
    run.worker = worker
    // A busy worker keeps the process alive: the caller is waiting for its outcome.
    worker.worker.ref()
    const tape = run.request.replayTape
    this.post(worker, { t: 'run', id: run.id, limits: this.limits, ...(tape === undefined ? {} : { tape: [...tape] }) })
    void run.stripping.then((stripped) => {
      if (worker.run === run) this.post(worker, { t: 'code', id: run.id, stripped })
    })
    if (run.abortedAt !== undefined) this.abort(run)
    this.startWatchdog()
  }

  private release(worker: PoolWorker): void {
    worker.run = undefined
    if (worker.gone) return
    const next = this.queue.shift()
    if (next !== undefined) {
      this.assign(worker, next)
      return
    }
    worker.worker.unref()
    worker.idleTimer = setTimeout(() => this.drop(worker), this.idleTimeoutMs)
    worker.idleTimer.unref()
  }

  /** Stop using a worker and terminate it (idempotent). */
  private drop(worker: PoolWorker): void {
    if (worker.gone) return
    worker.gone = true
    this.workers.delete(worker)
    if (worker.idleTimer !== undefined) clearTimeout(worker.idleTimer)
    worker.idleTimer = undefined
    worker.port.removeAllListeners('message')
    worker.port.close()
    // Errors after this point (the terminated thread's own) are expected; keep a listener so none escapes.
    worker.worker.removeAllListeners('error')
    worker.worker.on('error', () => {})
    void worker.worker.terminate().catch(() => {})
    if (!this.disposed && this.queue.length > 0) {
      const replacement = this.spawn()
      this.assign(replacement, this.queue.shift()!)
    }
  }

  /**
   * Replace a worker that is gone. After a termination or a retirement the replacement starts at
   * once, so the pool keeps its capacity warm; after a crash only when runs are waiting (a worker
   * that cannot start must not be restarted in a loop).
   */
  private replace(eager = true): void {
    if (this.disposed || this.workers.size >= this.poolSize) return
    if (!eager && this.queue.length === 0) return
    const worker = this.spawn()
    const next = this.queue.shift()
    if (next !== undefined) this.assign(worker, next)
    else this.release(worker)
  }

  private post(worker: PoolWorker, message: ToWorker): void {
    if (!worker.gone) worker.port.postMessage(message)
  }

  private onMessage(worker: PoolWorker, message: FromWorker): void {
    const run = worker.run
    if (run === undefined || run.id !== message.id) return
    switch (message.t) {
      case 'log':
        run.logs.push(message.line)
        return
      case 'calls':
        for (const call of message.calls) this.callTool(worker, run, call)
        return
      case 'done':
        this.settle(run, message.outcome)
        if (message.retire) {
          this.drop(worker)
          this.replace()
        } else {
          this.release(worker)
        }
        return
    }
  }

  private callTool(worker: PoolWorker, run: HostRun, { index, name, args, draws }: WorkerCall): void {
    let pending: Promise<CodeBindingOutcome>
    try {
      pending = run.request.callTool(draws === undefined ? { name, args } : { name, args, draws })
    } catch (error) {
      pending = Promise.resolve({ ok: false, toolName: name, message: describe(error) })
    }
    void pending
      .catch((error: unknown) => ({ ok: false as const, toolName: name, message: describe(error) }))
      .then((outcome) => {
        if (worker.run !== run) return
        this.post(worker, {
          t: 'outcome',
          id: run.id,
          index,
          outcome: encodeBindingOutcome(outcome, this.limits.memoryLimitBytes),
        })
      })
  }

  private onCrash(worker: PoolWorker, error: Error): void {
    if (worker.gone) return
    const run = worker.run
    // Keep the log lines it sent before it died; nothing else of a dead worker's is trusted.
    for (let got = receiveMessageOnPort(worker.port); got !== undefined; got = receiveMessageOnPort(worker.port)) {
      const message = got.message as FromWorker
      if (run !== undefined && message.t === 'log' && message.id === run.id) run.logs.push(message.line)
    }
    this.counts.crashed++
    this.drop(worker)
    if (run !== undefined) {
      const code = (error as { code?: unknown }).code
      this.settle(
        run,
        code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? failed(
              'memory-limit',
              `the program exhausted its worker's heap (resourceLimits) and the worker was terminated: ${error.message}`,
              this.logsOf(worker, run),
            )
          : failed('internal', `the sandbox worker failed: ${describe(error)}`, this.logsOf(worker, run)),
      )
    }
    this.replace(false)
  }

  // -------------------------------------------------------------------------------------------
  // Cancellation and the watchdog.

  private abort(run: HostRun): void {
    if (run.settled) return
    run.abortedAt ??= performance.now()
    const worker = run.worker
    if (worker === undefined) {
      // Still queued: it never reached a worker.
      const at = this.queue.indexOf(run)
      if (at >= 0) this.queue.splice(at, 1)
      this.settle(run, failed('aborted', 'the run was cancelled', run.logs))
      return
    }
    // The flag reaches a guest that holds the thread; the message reaches one awaiting a tool.
    Atomics.store(worker.flags, FLAG_ABORT, run.id)
    this.post(worker, { t: 'abort', id: run.id })
  }

  private startWatchdog(): void {
    if (this.watchdog !== undefined) return
    this.watchdog = setInterval(() => this.check(), WATCHDOG_INTERVAL_MS)
    this.watchdog.unref()
  }

  private stopWatchdog(): void {
    if (this.watchdog !== undefined) clearInterval(this.watchdog)
    this.watchdog = undefined
  }

  /** Terminate workers whose run overstayed its CPU budget or its cancellation. */
  private check(): void {
    let busy = 0
    const now = performance.now()
    const absolute = absoluteNow()
    for (const worker of [...this.workers]) {
      // Judge the run on everything the worker already sent: this timer can fire before queued port
      // messages are dispatched, and terminating the worker would drop them (a log line, or the
      // `done` of a run that ended in time).
      this.drain(worker)
      const run = worker.run
      if (run === undefined || worker.gone) continue
      busy++
      const clock = worker.clock
      if (run.abortedAt !== undefined && now - run.abortedAt > this.graceMs) {
        this.kill(worker, run, failed('aborted', 'the run was cancelled', this.logsOf(worker, run)))
        continue
      }
      if (clock[CLOCK_RUN] !== run.id || clock[CLOCK_IN_SLICE] !== 1) continue
      // Guest time as the worker last published it, plus the wall time since: a guest stuck in
      // native code (a long built-in, a spin the interrupt cannot end) stops publishing.
      const guestMs = clock[CLOCK_VM] + Math.max(0, absolute - clock[CLOCK_STAMP])
      if (guestMs > this.limits.cpuTimeMs + this.graceMs) {
        this.kill(
          worker,
          run,
          failed(
            'cpu-limit',
            `the program exceeded its CPU budget of ${this.limits.cpuTimeMs} ms (its worker was terminated)`,
            this.logsOf(worker, run),
          ),
        )
      }
    }
    if (busy === 0) this.stopWatchdog()
  }

  /** Dispatch every message the worker has queued on its channel, synchronously. */
  private drain(worker: PoolWorker): void {
    for (
      let got = receiveMessageOnPort(worker.port);
      got !== undefined && !worker.gone;
      got = receiveMessageOnPort(worker.port)
    )
      this.onMessage(worker, got.message as FromWorker)
  }

  private kill(worker: PoolWorker, run: HostRun, outcome: CodeRunOutcome): void {
    this.counts.terminated++
    this.settle(run, outcome)
    this.drop(worker)
    this.replace()
  }

  private logsOf(worker: PoolWorker, run: HostRun): readonly string[] {
    const dropped = worker.clock[CLOCK_RUN] === run.id ? worker.clock[CLOCK_DROPPED] : 0
    return Object.freeze(dropped > 0 ? [...run.logs, droppedLogLines(dropped)] : [...run.logs])
  }

  private settle(run: HostRun, outcome: CodeRunOutcome): void {
    if (run.settled) return
    run.settled = true
    run.request.signal.removeEventListener('abort', run.onAbort)
    run.resolve(outcome)
  }
}

function failed(reason: CodeRunFailureReason, message: string, logs: readonly string[]): CodeRunOutcome {
  return { ok: false, reason, message, logs: Object.isFrozen(logs) ? logs : Object.freeze([...logs]) }
}

function disposedOutcome(logs: readonly string[]): CodeRunOutcome {
  return failed('internal', 'the Code Mode worker pool was disposed', logs)
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}

/** Create the worker-thread {@link CodeRuntime} (Code Mode's default). */
export function createWorkerRuntime(options?: WorkerCodeRuntimeOptions): WorkerCodeRuntime {
  return new WorkerCodeRuntime(options)
}
