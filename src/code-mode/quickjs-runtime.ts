import { ConfigError } from '../errors/config-error.js'
import type { CodeRunOutcome, CodeRunRequest, CodeRuntime } from './code-runtime.js'

/** Limits of one program run. All are per run; every run gets a fresh QuickJS runtime and context. */
export interface QuickJsRuntimeOptions {
  /** Budget of time spent executing guest code (the VM idles while tools run). Default 5,000 ms. */
  readonly cpuTimeMs?: number
  /** QuickJS heap limit. Default 64 MiB. */
  readonly memoryLimitBytes?: number
  /**
   * QuickJS stack limit while the program runs. Default 40 KiB (about 200 nested JS calls).
   * QuickJS measures its own stack while its native frames use the host's stack; values much
   * above ~64 KiB let natively recursive built-ins (`JSON.stringify` of a deep value) exhaust
   * the host stack first, which fails the run as `stack-limit` and retires the WebAssembly module.
   */
  readonly maxStackSizeBytes?: number
  /** Maximum `tools.*` calls per run; one more fails the run. Default 1,000. */
  readonly maxBindingCalls?: number
  /** Maximum captured log lines. Default 1,000. */
  readonly maxLogLines?: number
  /** Maximum captured log characters in total. Default 100,000. */
  readonly maxLogChars?: number
  /**
   * Maximum size of the program's return value, in UTF-8 bytes of its JSON text; a larger value
   * fails the run as `result-too-large` (it never reaches the model). Default 1 MiB.
   */
  readonly maxResultBytes?: number
}

/** Resolved {@link QuickJsRuntimeOptions}. */
export interface QuickJsLimits {
  readonly cpuTimeMs: number
  readonly memoryLimitBytes: number
  readonly maxStackSizeBytes: number
  readonly maxBindingCalls: number
  readonly maxLogLines: number
  readonly maxLogChars: number
  readonly maxResultBytes: number
}

const DEFAULT_LIMITS: QuickJsLimits = {
  cpuTimeMs: 5_000,
  memoryLimitBytes: 64 * 1024 * 1024,
  maxStackSizeBytes: 40 * 1024,
  maxBindingCalls: 1_000,
  maxLogLines: 1_000,
  maxLogChars: 100_000,
  maxResultBytes: 1024 * 1024,
}

/** A positive finite number option, or a path-qualified TypeError. */
export function positiveOption(path: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigError(path, `expected a positive finite number, got ${String(value)}`)
  }
  return value
}

/** Validate options (a path-qualified TypeError for a bad one) and fill in the defaults. */
export function resolveQuickJsLimits(
  options: QuickJsRuntimeOptions | undefined,
  where = 'createQuickJsRuntime(options)',
): QuickJsLimits {
  const positive = (name: keyof QuickJsLimits) =>
    positiveOption(`${where}.${name}`, options?.[name], DEFAULT_LIMITS[name])
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new ConfigError(where, 'expected an options object')
  return {
    cpuTimeMs: positive('cpuTimeMs'),
    memoryLimitBytes: Math.floor(positive('memoryLimitBytes')),
    maxStackSizeBytes: Math.floor(positive('maxStackSizeBytes')),
    maxBindingCalls: Math.floor(positive('maxBindingCalls')),
    maxLogLines: Math.floor(positive('maxLogLines')),
    maxLogChars: Math.floor(positive('maxLogChars')),
    maxResultBytes: Math.floor(positive('maxResultBytes')),
  }
}

type Engine = typeof import('./quickjs-engine.js')
type Stripper = typeof import('./strip-program.js')
let engine: Promise<Engine> | undefined
let stripper: Promise<Stripper> | undefined

/** A memoised dynamic import that forgets a failed load, so the next run retries it. */
function once<T>(
  get: () => Promise<T> | undefined,
  set: (value: Promise<T> | undefined) => void,
  load: () => Promise<T>,
): Promise<T> {
  let current = get()
  if (current === undefined) {
    const loading = load()
    current = loading
    set(loading)
    loading.catch(() => {
      if (get() === loading) set(undefined)
    })
  }
  return current
}

/** QuickJS loads on the first run, never with the package root. */
export function loadQuickJsEngine(): Promise<Engine> {
  return once(
    () => engine,
    (value) => {
      engine = value
    },
    () => import('./quickjs-engine.js'),
  )
}

/** esbuild (type stripping, on the host thread for both runtimes) loads on the first run. */
export function loadStripper(): Promise<Stripper> {
  return once(
    () => stripper,
    (value) => {
      stripper = value
    },
    () => import('./strip-program.js'),
  )
}

/**
 * The in-thread {@link CodeRuntime}: QuickJS (quickjs-emscripten, release-sync) with esbuild type
 * stripping, on the host's own thread. A run's CPU budget is enforced by QuickJS's interrupt
 * handler, so a program spinning inside a native built-in blocks the host until it returns.
 */
export class QuickJsCodeRuntime implements CodeRuntime {
  private readonly limits: QuickJsLimits

  constructor(options?: QuickJsRuntimeOptions) {
    this.limits = resolveQuickJsLimits(options)
  }

  async run(request: CodeRunRequest): Promise<CodeRunOutcome> {
    let loaded: [Engine, Stripper]
    try {
      loaded = await Promise.all([loadQuickJsEngine(), loadStripper()])
    } catch (error) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      return { ok: false, reason: 'internal', message: `QuickJS failed to load: ${message}`, logs: Object.freeze([]) }
    }
    return loaded[0].runQuickJs(request, this.limits, loaded[1].stripProgram)
  }
}

/** Create the in-thread QuickJS-backed {@link CodeRuntime}. */
export function createQuickJsRuntime(options?: QuickJsRuntimeOptions): QuickJsCodeRuntime {
  return new QuickJsCodeRuntime(options)
}
