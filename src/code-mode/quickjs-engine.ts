import { randomBytes } from 'node:crypto'
import { debuglog } from 'node:util'
import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync'
import {
  type CustomizeVariantOptions,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core'
import type { JsonValue } from '../contract/json-value.js'
import { type EncodedBindingOutcome, encodeBindingOutcome } from './binding-text.js'
import type {
  CodeBindingCall,
  CodeBindingOutcome,
  CodeDraws,
  CodeRunFailureReason,
  CodeRunOutcome,
  CodeRunRequest,
} from './code-runtime.js'
import { droppedLogLines, PROGRAM_FILE as FILE } from './constants.js'
import { PRELUDE_SOURCE } from './prelude.js'
import type { QuickJsLimits as Limits } from './quickjs-runtime.js'
import type { StrippedProgram } from './strip-program.js'

type WasmMemory = ReturnType<QuickJSWASMModule['getWasmMemory']>

/** The parser recurses natively far more per QuickJS-counted byte than the interpreter: compile low. */
const COMPILE_STACK_BYTES = 24 * 1024
/**
 * QuickJS's own heap limit is only partly effective in this build (no malloc_usable_size: it caps
 * single allocations and block counts, not bytes), so the interrupt handler also measures the heap:
 * when the WebAssembly memory grew by this much, and periodically.
 */
const MEMORY_GROWTH_TRIGGER_BYTES = 4 * 1024 * 1024
const MEMORY_CHECK_INTERVAL_MS = 100
/** After a run, a module whose memory grew past this (or past one memory limit) is replaced. */
const RETIRE_MODULE_BYTES = 512 * 1024 * 1024

/** A run request as the engine takes it: a binding may also answer with its outcome already encoded. */
export interface EngineRequest extends Omit<CodeRunRequest, 'callTool'> {
  callTool(call: CodeBindingCall): Promise<CodeBindingOutcome | EncodedBindingOutcome>
}

/**
 * What a worker thread's host needs from a run it cannot otherwise observe while the guest holds
 * the thread: the guest time spent so far (published at slice boundaries and every interrupt
 * check, so a watchdog can tell a guest stuck in native code), and an abort flag the interrupt
 * handler polls (a message cannot arrive while the thread is busy).
 */
export interface RunMonitor {
  publish(vmTimeMs: number, inSlice: boolean): void
  abortRequested(): boolean
  /** A log line was captured (so the host keeps the logs of a run it has to terminate). */
  logged(line: string): void
  /** Lines dropped past the log caps so far. */
  dropped(count: number): void
}

// ---------------------------------------------------------------------------------------------
// The shared WebAssembly module: loaded once, replaced only when a run poisoned it.

/**
 * A loaded module plus its memory governor. WebAssembly memory only grows, and QuickJS cannot
 * cap total bytes here, so growth of the module's memory is refused (malloc fails, QuickJS throws
 * "out of memory" in the allocating program) beyond the baseline plus twice the memory limit of
 * every run currently active on the module.
 */
interface LoadedModule {
  readonly module: QuickJSWASMModule
  readonly memory: WasmMemory | undefined
  readonly baselineBytes: number
  reservedBytes: number
  /** Runs active on the module now, and runs started on it so far (to attribute growth to a run). */
  active: number
  started: number
}

let modulePromise: Promise<LoadedModule> | undefined

/**
 * Whatever the engine itself prints (emscripten's stdout and stderr, e.g. an assertion's
 * "Aborted(...)") goes to this debug channel, never to the host's output: the host did not ask for
 * it and cannot act on it. Shown with `NODE_DEBUG=toolgate`.
 */
const engineDebug = debuglog('toolgate')
const engineText =
  (stream: string) =>
  (...parts: unknown[]) =>
    engineDebug('quickjs %s: %s', stream, parts.join(' '))
// Emscripten reads `print` and `printErr` from the module options; the loader's type leaves them out.
const outputHooks: NonNullable<CustomizeVariantOptions['emscriptenModule']> & {
  print(...parts: unknown[]): void
  printErr(...parts: unknown[]): void
} = { print: engineText('stdout'), printErr: engineText('stderr') }
const QUIET_VARIANT = newVariant(RELEASE_SYNC, { emscriptenModule: outputHooks })

const stats = { created: 0, disposed: 0, abandoned: 0, modulesLoaded: 0, growthRefused: 0 }

function governModule(module: QuickJSWASMModule): LoadedModule {
  let memory: WasmMemory | undefined
  try {
    memory = module.getWasmMemory()
  } catch {
    memory = undefined
  }
  const loaded: LoadedModule = {
    module,
    memory,
    baselineBytes: memory?.buffer.byteLength ?? 0,
    reservedBytes: 0,
    active: 0,
    started: 0,
  }
  if (memory !== undefined) {
    const grow = memory.grow
    // Emscripten grows its heap through this method; refusing makes the allocation fail cleanly.
    Object.defineProperty(memory, 'grow', {
      configurable: true,
      value(this: WasmMemory, delta: number): number {
        const after = this.buffer.byteLength + delta * 65_536
        if (after > loaded.baselineBytes + loaded.reservedBytes) {
          stats.growthRefused++
          throw new RangeError('toolgate: QuickJS heap growth refused (memory limit)')
        }
        return grow.call(this, delta)
      },
    })
  }
  return loaded
}

function loadModule(): Promise<LoadedModule> {
  if (modulePromise === undefined) {
    const loading = newQuickJSWASMModuleFromVariant(QUIET_VARIANT).then(
      (module) => {
        stats.modulesLoaded++
        return governModule(module)
      },
      (error: unknown) => {
        if (modulePromise === loading) modulePromise = undefined
        throw error
      },
    )
    modulePromise = loading
  }
  return modulePromise
}

/** Stop starting runs on `loaded` (torn by a host exception, or grown large); a fresh module serves the next run. */
function retireModule(loaded: LoadedModule): void {
  const current = modulePromise
  if (current === undefined) return
  void current.then((active) => {
    if (active === loaded && modulePromise === current) {
      modulePromise = undefined
    }
  })
}

/**
 * Internal test hook: QuickJS runtimes created, disposed and abandoned (left undisposed because a
 * host exception tore their state), WebAssembly modules loaded, and heap growths refused.
 * Not part of the public API.
 */
export function quickJsRuntimeStats(): {
  readonly created: number
  readonly disposed: number
  readonly abandoned: number
  readonly alive: number
  readonly modulesLoaded: number
  readonly growthRefused: number
} {
  return { ...stats, alive: stats.created - stats.disposed - stats.abandoned }
}

// ---------------------------------------------------------------------------------------------
// One run.

class LogBuffer {
  readonly lines: string[] = []
  private chars = 0
  private dropped = 0
  constructor(
    private readonly limits: Limits,
    private readonly monitor: RunMonitor | undefined,
  ) {}

  push(level: string, text: string): void {
    if (this.lines.length >= this.limits.maxLogLines || this.chars >= this.limits.maxLogChars) {
      this.dropped++
      this.monitor?.dropped(this.dropped)
      return
    }
    const prefix = level === 'warn' ? '[warn] ' : level === 'error' ? '[error] ' : ''
    let line = prefix + text
    const room = this.limits.maxLogChars - this.chars
    if (line.length > room) line = `${line.slice(0, room)}… (truncated)`
    this.chars += line.length
    this.lines.push(line)
    this.monitor?.logged(line)
  }

  snapshot(): readonly string[] {
    const lines = this.dropped === 0 ? [...this.lines] : [...this.lines, droppedLogLines(this.dropped)]
    return Object.freeze(lines)
  }
}

type Failure = { readonly reason: CodeRunFailureReason; readonly message: string }

function classifyThrown(message: string): CodeRunFailureReason {
  if (/^InternalError: out of memory/.test(message)) return 'memory-limit'
  if (/^(InternalError|RangeError|SyntaxError): stack overflow/.test(message)) return 'stack-limit'
  if (/^InternalError: interrupted/.test(message)) return 'cpu-limit'
  return 'thrown'
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`
}

function resultTooLarge(size: string, cap: number): string {
  return `the return value is ${size} of JSON, over the limit of ${formatBytes(cap)} (maxResultBytes); return a smaller value`
}

function describeHostError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}

class QuickJsRun {
  private runtime: QuickJSRuntime | undefined
  private context: QuickJSContext | undefined
  private readonly deferreds = new Set<QuickJSDeferredPromise>()
  private readonly logs: LogBuffer
  private cpuUsedMs = 0
  private sliceStart = 0
  private sliceStartCpu: NodeJS.CpuUsage = { user: 0, system: 0 }
  private inSlice = false
  private failure: Failure | undefined
  private settled: CodeRunOutcome | undefined
  private finished = false
  private poisoned = false
  private hitMemoryCap = false
  private inFlight = 0
  private calls = 0
  private readonly wasmMemory: WasmMemory | undefined
  private readonly module: QuickJSWASMModule
  private reserved = false
  private startedAs = 0
  private soleAtStart = false
  private startWasmBytes = 0
  private lastWasmBytes = 0
  private lastMemoryCheckAt = 0
  private memoryCheckCostMs = 0
  private startFn: QuickJSHandle | undefined
  /** Set while the guest's jobs run: a context made then is a stray (see runJobs). */
  private collectingStrays = false
  private readonly strays: QuickJSContext[] = []
  private resolveOutcome: (outcome: CodeRunOutcome) => void = () => {}
  private readonly onAbort = () => {
    this.fail('aborted', 'the run was cancelled')
    if (!this.inSlice) this.checkDone()
  }

  constructor(
    private readonly loaded: LoadedModule,
    private readonly request: EngineRequest,
    private readonly limits: Limits,
    private readonly monitor: RunMonitor | undefined,
  ) {
    this.logs = new LogBuffer(limits, monitor)
    this.module = loaded.module
    this.wasmMemory = loaded.memory
    this.lastWasmBytes = loaded.memory?.buffer.byteLength ?? 0
  }

  /** Create the runtime and context and evaluate the prelude (overlaps with type stripping). */
  prepare(): void {
    this.loaded.reservedBytes += 2 * this.limits.memoryLimitBytes
    this.loaded.active++
    this.startedAs = ++this.loaded.started
    this.soleAtStart = this.loaded.active === 1
    this.startWasmBytes = this.wasmMemory?.buffer.byteLength ?? 0
    this.reserved = true
    this.boot()
  }

  /** Run the stripped program (or, with a failure, just dispose and report it). */
  start(stripped: StrippedProgram): Promise<CodeRunOutcome> {
    const outcome = new Promise<CodeRunOutcome>((resolve) => {
      this.resolveOutcome = resolve
    })
    if (!stripped.ok) {
      this.fail('syntax', stripped.message)
      this.checkDone()
      return outcome
    }
    this.request.signal.addEventListener('abort', this.onAbort, { once: true })
    if (this.request.signal.aborted) this.onAbort()
    if (!this.finished) this.launch(stripped.js)
    return outcome
  }

  private fail(reason: CodeRunFailureReason, message: string): void {
    this.failure ??= { reason, message }
  }

  /** Run guest code with CPU accounting; a host exception escaping the VM poisons the runtime. */
  private slice(body: () => void): void {
    if (this.finished || this.poisoned) return
    this.inSlice = true
    this.sliceStart = performance.now()
    this.sliceStartCpu = process.cpuUsage()
    this.monitor?.publish(this.cpuUsedMs, true)
    const refusedBefore = stats.growthRefused
    try {
      body()
    } catch (error) {
      this.poisoned = true
      const stack = error instanceof RangeError
      this.failure = {
        reason: stack ? 'stack-limit' : 'internal',
        message: stack
          ? 'the program exhausted the host stack (deeply recursive built-in); lower the nesting of its values or calls'
          : `the sandbox failed: ${describeHostError(error)}`,
      }
    } finally {
      this.cpuUsedMs += this.sliceElapsedMs()
      this.inSlice = false
      this.monitor?.publish(this.cpuUsedMs, false)
      // Slices are synchronous, so a refusal during this one was caused by this program.
      if (stats.growthRefused !== refusedBefore) this.hitMemoryCap = true
    }
  }

  /**
   * Time the current slice has run: wall time, but never more than the process's CPU time over the
   * same span, so a loaded machine that deschedules the thread does not spend the guest's budget.
   */
  private sliceElapsedMs(): number {
    const wall = performance.now() - this.sliceStart
    const cpu = process.cpuUsage(this.sliceStartCpu)
    return Math.min(wall, (cpu.user + cpu.system) / 1000)
  }

  /** Failure for a program-level throw, attributing allocation failures to the memory limit. */
  private thrown(description: string): Failure {
    const reason = classifyThrown(description)
    if (reason === 'memory-limit' || (reason === 'thrown' && this.hitMemoryCap)) {
      return {
        reason: 'memory-limit',
        message: `the program exceeded its memory limit of ${formatBytes(this.limits.memoryLimitBytes)} (${description})`,
      }
    }
    if (reason === 'stack-limit')
      return { reason, message: `the program exceeded the sandbox stack limit (${description})` }
    return { reason, message: `the program threw ${description}` }
  }

  /**
   * The library reports a throwing interrupt handler on the host's console; a failure here ends
   * the run as internal instead.
   */
  private readonly interrupt = (): boolean => {
    try {
      return this.shouldInterrupt()
    } catch (error) {
      this.fail('internal', `the sandbox failed: ${describeHostError(error)}`)
      return true
    }
  }

  private shouldInterrupt(): boolean {
    if (this.failure !== undefined) return true
    if (this.request.signal.aborted || this.monitor?.abortRequested() === true) {
      this.fail('aborted', 'the run was cancelled')
      return true
    }
    const vmTime = this.cpuUsedMs + this.sliceElapsedMs()
    this.monitor?.publish(vmTime, true)
    if (vmTime > this.limits.cpuTimeMs) {
      this.fail('cpu-limit', `the program exceeded its CPU budget of ${this.limits.cpuTimeMs} ms`)
      return true
    }
    const memory = this.wasmMemory
    const grown = memory !== undefined && memory.buffer.byteLength - this.lastWasmBytes >= MEMORY_GROWTH_TRIGGER_BYTES
    const due = vmTime - this.lastMemoryCheckAt >= Math.max(MEMORY_CHECK_INTERVAL_MS, 20 * this.memoryCheckCostMs)
    if ((grown || due) && this.overMemory(vmTime)) return true
    return false
  }

  /** Precise heap measurement (a walk of the QuickJS heap; throttled by its own cost). */
  private overMemory(vmTime: number): boolean {
    const runtime = this.runtime
    if (runtime === undefined) return false
    if (this.wasmMemory !== undefined) this.lastWasmBytes = this.wasmMemory.buffer.byteLength
    this.lastMemoryCheckAt = vmTime
    if (this.grewPastLimit()) return true
    const started = performance.now()
    const report = runtime.dumpMemoryUsage()
    this.memoryCheckCostMs = performance.now() - started
    const used = /memory used\s+\d+\s+(\d+)/.exec(report)
    if (used === null || Number(used[1]) <= this.limits.memoryLimitBytes) return false
    this.fail('memory-limit', `the program exceeded its memory limit of ${formatBytes(this.limits.memoryLimitBytes)}`)
    return true
  }

  /**
   * The heap walk does not see string bytes in this build, so memory growth is a second measure:
   * while this run has had the module to itself (always, in a worker), the module's growth since
   * the run started is this run's, and growth past the limit (plus a quarter for fragmentation)
   * fails it.
   */
  private grewPastLimit(): boolean {
    const memory = this.wasmMemory
    if (memory === undefined || !this.soleAtStart || this.loaded.started !== this.startedAs) return false
    if (memory.buffer.byteLength - this.startWasmBytes <= this.limits.memoryLimitBytes * 1.25) return false
    this.fail('memory-limit', `the program exceeded its memory limit of ${formatBytes(this.limits.memoryLimitBytes)}`)
    return true
  }

  private boot(): void {
    this.slice(() => {
      const runtime = this.module.newRuntime()
      this.runtime = runtime
      stats.created++
      const newContext = runtime.newContext.bind(runtime)
      runtime.newContext = (options) => {
        const made = newContext(options)
        if (this.collectingStrays) this.strays.push(made)
        return made
      }
      runtime.setMemoryLimit(this.limits.memoryLimitBytes)
      runtime.setMaxStackSize(COMPILE_STACK_BYTES)
      runtime.setInterruptHandler(this.interrupt)
      const context = runtime.newContext()
      this.context = context

      const hostCall = context.newFunction('hostCall', (name, json, draws) => this.hostCall(context, name, json, draws))
      const hostLog = context.newFunction('hostLog', (level, text) => {
        this.logs.push(context.getString(level), context.getString(text))
      })
      const hostSettle = context.newFunction('hostSettle', (kind, payload) => {
        this.hostSettle(context, context.getString(kind), payload)
      })
      // The prelude asks for at most 65536 bytes (getRandomValues' own limit), as hex text.
      const hostRandom = context.newFunction('hostRandom', (count) => {
        const size = Math.min(Math.max(0, Math.trunc(context.getNumber(count)) || 0), 65536)
        return context.newString(randomBytes(size).toString('hex'))
      })
      const factory = context.evalCode(PRELUDE_SOURCE, 'prelude.js')
      if (factory.error) {
        const message = this.errorText(context, factory.error)
        factory.error.dispose()
        hostCall.dispose()
        hostLog.dispose()
        hostSettle.dispose()
        hostRandom.dispose()
        this.fail('internal', `the sandbox prelude failed: ${message}`)
        return
      }
      const tape =
        this.request.replayTape === undefined ? undefined : context.newString(JSON.stringify(this.request.replayTape))
      const startResult = context.callFunction(
        factory.value,
        context.undefined,
        hostCall,
        hostLog,
        hostSettle,
        tape ?? context.undefined,
        hostRandom,
      )
      tape?.dispose()
      factory.value.dispose()
      hostCall.dispose()
      hostLog.dispose()
      hostSettle.dispose()
      hostRandom.dispose()
      if (startResult.error) {
        const message = this.errorText(context, startResult.error)
        startResult.error.dispose()
        this.fail('internal', `the sandbox prelude failed: ${message}`)
        return
      }
      this.startFn = startResult.value
    })
  }

  private launch(js: string): void {
    const start = this.startFn
    const runtime = this.runtime
    const context = this.context
    if (start === undefined || runtime === undefined || context === undefined) {
      this.checkDone()
      return
    }
    this.slice(() => {
      const main = context.evalCode(js, FILE)
      if (main.error) {
        const message = this.errorText(context, main.error)
        main.error.dispose()
        const failure = this.thrown(message)
        if (failure.reason === 'thrown' && /^SyntaxError/.test(message)) this.fail('syntax', message)
        else if (failure.reason === 'stack-limit') this.fail('syntax', `${message} (the program is nested too deeply)`)
        else this.fail(failure.reason, failure.message)
        return
      }
      try {
        if (this.failure !== undefined) return
        runtime.setMaxStackSize(this.limits.maxStackSizeBytes)
        const started = context.callFunction(start, context.undefined, main.value)
        if (started.error) {
          const failure = this.thrown(this.errorText(context, started.error))
          started.error.dispose()
          this.fail(failure.reason, failure.message)
        } else {
          started.value.dispose()
        }
      } finally {
        main.value.dispose()
      }
    })
    this.pump()
  }

  /** Text of an engine-raised error; guest getters run under the same interrupt handler. */
  private errorText(context: QuickJSContext, handle: QuickJSHandle): string {
    const name = context.getProp(handle, 'name')
    const message = context.getProp(handle, 'message')
    try {
      const nameText = context.typeof(name) === 'string' ? context.getString(name) : 'Error'
      const messageText = context.typeof(message) === 'string' ? context.getString(message) : context.getString(handle)
      return `${nameText}: ${messageText}`
    } finally {
      name.dispose()
      message.dispose()
    }
  }

  private hostCall(
    context: QuickJSContext,
    nameHandle: QuickJSHandle,
    jsonHandle: QuickJSHandle,
    drawsHandle: QuickJSHandle | undefined,
  ): QuickJSHandle {
    if (this.finished || this.failure !== undefined) throw new Error('the run is over')
    this.calls++
    if (this.calls > this.limits.maxBindingCalls) {
      this.fail('call-limit', `the program made more than ${this.limits.maxBindingCalls} tool calls`)
      throw new RangeError(`tool call limit (${this.limits.maxBindingCalls}) exceeded`)
    }
    const name = context.getString(nameHandle)
    const args = JSON.parse(context.getString(jsonHandle)) as JsonValue
    const draws =
      drawsHandle !== undefined && context.typeof(drawsHandle) === 'string'
        ? readDraws(context.getString(drawsHandle))
        : undefined
    const deferred = context.newPromise()
    this.deferreds.add(deferred)
    this.inFlight++
    let pending: Promise<CodeBindingOutcome | EncodedBindingOutcome>
    try {
      pending = this.request.callTool(draws === undefined ? { name, args } : { name, args, draws })
    } catch (error) {
      pending = Promise.resolve({ ok: false, toolName: name, message: describeHostError(error) })
    }
    pending
      .then(
        (outcome) => this.settleBinding(deferred, name, outcome),
        (error: unknown) =>
          this.settleBinding(deferred, name, { ok: false, toolName: name, message: describeHostError(error) }),
      )
      .catch((error: unknown) => {
        // Defensive: a failure here is a bug in this file; end the run instead of leaking a rejection.
        this.fail('internal', `the sandbox failed: ${describeHostError(error)}`)
        if (!this.inSlice) this.checkDone()
      })
    return deferred.handle
  }

  private settleBinding(
    deferred: QuickJSDeferredPromise,
    name: string,
    outcome: CodeBindingOutcome | EncodedBindingOutcome,
  ): void {
    this.inFlight--
    if (this.finished || this.poisoned) return
    const encoded = 'kind' in outcome ? outcome : encodeBindingOutcome(outcome, this.limits.memoryLimitBytes)
    if (encoded.kind === 'too-large') {
      this.fail(
        'memory-limit',
        `the value of tools.${name}() is ${encoded.valueLength} characters of JSON, too large for the program's memory limit of ${formatBytes(this.limits.memoryLimitBytes)}`,
      )
      this.checkDone()
      return
    }
    const text = encoded.text
    const context = this.context!
    this.slice(() => {
      const handle = context.newString(text)
      deferred.resolve(handle)
      handle.dispose()
    })
    this.deferreds.delete(deferred)
    if (!this.poisoned) deferred.dispose()
    this.pump()
  }

  private hostSettle(context: QuickJSContext, kind: string, payloadHandle: QuickJSHandle): void {
    if (this.settled !== undefined || this.failure !== undefined) return
    // Allocations since the last interrupt check are measured before the result is accepted.
    const memory = this.wasmMemory
    if (memory !== undefined && memory.buffer.byteLength - this.lastWasmBytes >= MEMORY_GROWTH_TRIGGER_BYTES) {
      if (this.overMemory(this.cpuUsedMs + this.sliceElapsedMs())) return
    }
    // The payload is JSON text (or an error description); its length is read before it is copied
    // out of the sandbox, so an oversized value never reaches the host's heap.
    const lengthHandle = context.getProp(payloadHandle, 'length')
    const length = context.typeof(lengthHandle) === 'number' ? context.getNumber(lengthHandle) : 0
    lengthHandle.dispose()
    const cap = this.limits.maxResultBytes
    const logs = this.logs.snapshot()
    if (length > cap) {
      this.settled =
        kind === 'ok'
          ? { ok: false, reason: 'result-too-large', message: resultTooLarge(`${length} characters`, cap), logs }
          : {
              ok: false,
              reason: kind === 'invalid' ? 'invalid-result' : 'thrown',
              message: `the program threw a value too large to report (${length} characters)`,
              logs,
            }
      return
    }
    const payload = context.getString(payloadHandle)
    if (kind === 'ok') {
      const bytes = Buffer.byteLength(payload, 'utf8')
      this.settled =
        bytes > cap
          ? { ok: false, reason: 'result-too-large', message: resultTooLarge(`${bytes} bytes`, cap), logs }
          : { ok: true, value: JSON.parse(payload) as JsonValue, logs }
    } else if (kind === 'invalid') {
      this.settled = { ok: false, reason: 'invalid-result', message: `the return value is not JSON: ${payload}`, logs }
    } else {
      this.settled = { ok: false, ...this.thrown(payload), logs }
    }
  }

  private pump(): void {
    const runtime = this.runtime
    if (runtime === undefined || this.finished) {
      this.checkDone()
      return
    }
    this.slice(() => {
      const context = this.context!
      for (let guard = 0; guard < 1_000_000; guard++) {
        if (this.failure !== undefined || this.settled !== undefined) return
        const result = this.runJobs(runtime)
        if (!result.error) {
          this.disposeStrays()
          return
        }
        const message = this.errorText(context, result.error)
        // The error may belong to a stray context: free it before the context goes.
        result.error.dispose()
        this.disposeStrays()
        // Uncatchable engine errors surface here; ordinary rejections stay inside the program.
        const failure = this.thrown(message)
        if (failure.reason !== 'thrown') this.fail(failure.reason, failure.message)
      }
    })
    this.checkDone()
  }

  /**
   * `executePendingJobs` reads the context of the last job through a view of the WebAssembly
   * memory taken before the jobs ran. When a job grows that memory (a large string, say) the view
   * is detached, the read fails, and the library wraps a brand-new context it then never frees;
   * freeing the runtime afterwards trips QuickJS's leak assertion and aborts the module. The
   * contexts made during the call are collected here and freed as soon as its result is handled.
   */
  private runJobs(runtime: QuickJSRuntime): ReturnType<QuickJSRuntime['executePendingJobs']> {
    this.collectingStrays = true
    try {
      return runtime.executePendingJobs()
    } finally {
      this.collectingStrays = false
    }
  }

  private disposeStrays(): void {
    if (this.strays.length === 0) return
    for (const stray of this.strays.splice(0)) if (stray.alive) stray.dispose()
  }

  private checkDone(): void {
    if (this.finished) return
    if (this.failure !== undefined) {
      this.finish({ ok: false, ...this.failure, logs: this.logs.snapshot() })
    } else if (this.settled !== undefined) {
      this.finish(this.settled)
    } else if (this.inFlight === 0 && this.runtime !== undefined && !this.runtime.hasPendingJob()) {
      this.finish({
        ok: false,
        reason: 'stalled',
        message: 'the program is waiting on a promise that can never settle (no tool call or job is pending)',
        logs: this.logs.snapshot(),
      })
    }
  }

  private finish(outcome: CodeRunOutcome): void {
    this.finished = true
    this.request.signal.removeEventListener('abort', this.onAbort)
    this.dispose()
    if (this.reserved) {
      this.loaded.reservedBytes -= 2 * this.limits.memoryLimitBytes
      this.loaded.active--
    }
    // A module grown past one memory limit is replaced after the run: the host reclaims the memory,
    // and the next run's growth is its own again (freed memory is reused without growing).
    const grownTo = this.wasmMemory?.buffer.byteLength ?? 0
    if (grownTo > Math.min(RETIRE_MODULE_BYTES, this.loaded.baselineBytes + this.limits.memoryLimitBytes))
      retireModule(this.loaded)
    this.resolveOutcome(outcome)
  }

  private dispose(): void {
    const runtime = this.runtime
    if (runtime === undefined) return
    if (this.poisoned) {
      stats.abandoned++
      retireModule(this.loaded)
      return
    }
    try {
      this.disposeStrays()
      for (const deferred of this.deferreds) deferred.dispose()
      this.deferreds.clear()
      this.startFn?.dispose()
      this.startFn = undefined
      this.context?.dispose()
      runtime.dispose()
      stats.disposed++
    } catch {
      // A leaked handle aborts the module's allocator checks; never reuse it.
      stats.abandoned++
      retireModule(this.loaded)
    }
  }
}

/**
 * Run one program on the shared module (the heavy half of both runtimes, loaded on the first run).
 * `strip` turns the source into JavaScript; it runs while the prelude is evaluated. Never rejects.
 */
export async function runQuickJs(
  request: EngineRequest,
  limits: Limits,
  strip: (code: string) => Promise<StrippedProgram>,
  monitor?: RunMonitor,
): Promise<CodeRunOutcome> {
  const empty: readonly string[] = Object.freeze([])
  if (request.signal.aborted) return { ok: false, reason: 'aborted', message: 'the run was cancelled', logs: empty }
  if (typeof request.code !== 'string') {
    return { ok: false, reason: 'syntax', message: 'the program must be a string', logs: empty }
  }
  let module: LoadedModule
  try {
    module = await loadModule()
  } catch (error) {
    return {
      ok: false,
      reason: 'internal',
      message: `QuickJS failed to load: ${describeHostError(error)}`,
      logs: empty,
    }
  }
  // Entered from a fresh continuation, so the guest starts on a shallow host stack. The prelude is
  // evaluated while esbuild strips the program in its own process.
  const session = new QuickJsRun(module, request, limits, monitor)
  const stripping = strip(request.code)
  session.prepare()
  return session.start(await stripping)
}

/** The prelude's report of the clock readings and random numbers drawn since the last call. */
export function readDraws(text: string): CodeDraws | undefined {
  try {
    const raw = JSON.parse(text) as { d?: unknown; o?: unknown; x?: unknown }
    const values = Array.isArray(raw.d)
      ? raw.d.filter((v): v is number => typeof v === 'number' && Number.isFinite(v))
      : []
    return { values, overflow: raw.o === true, mismatch: raw.x === true }
  } catch {
    return { values: [], overflow: true, mismatch: false }
  }
}
