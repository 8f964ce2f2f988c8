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
}

/** Resolved {@link QuickJsRuntimeOptions}. */
export interface QuickJsLimits {
  readonly cpuTimeMs: number
  readonly memoryLimitBytes: number
  readonly maxStackSizeBytes: number
  readonly maxBindingCalls: number
  readonly maxLogLines: number
  readonly maxLogChars: number
}

const DEFAULT_LIMITS: QuickJsLimits = {
  cpuTimeMs: 5_000,
  memoryLimitBytes: 64 * 1024 * 1024,
  maxStackSizeBytes: 40 * 1024,
  maxBindingCalls: 1_000,
  maxLogLines: 1_000,
  maxLogChars: 100_000,
}

function positiveOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(
      `createQuickJsRuntime(options).${name}: expected a positive finite number, got ${String(value)}`,
    )
  }
  return value
}

/** Validate options (a path-qualified TypeError for a bad one) and fill in the defaults. */
export function resolveQuickJsLimits(options: QuickJsRuntimeOptions | undefined): QuickJsLimits {
  return {
    cpuTimeMs: positiveOption('cpuTimeMs', options?.cpuTimeMs, DEFAULT_LIMITS.cpuTimeMs),
    memoryLimitBytes: Math.floor(
      positiveOption('memoryLimitBytes', options?.memoryLimitBytes, DEFAULT_LIMITS.memoryLimitBytes),
    ),
    maxStackSizeBytes: Math.floor(
      positiveOption('maxStackSizeBytes', options?.maxStackSizeBytes, DEFAULT_LIMITS.maxStackSizeBytes),
    ),
    maxBindingCalls: Math.floor(
      positiveOption('maxBindingCalls', options?.maxBindingCalls, DEFAULT_LIMITS.maxBindingCalls),
    ),
    maxLogLines: Math.floor(positiveOption('maxLogLines', options?.maxLogLines, DEFAULT_LIMITS.maxLogLines)),
    maxLogChars: Math.floor(positiveOption('maxLogChars', options?.maxLogChars, DEFAULT_LIMITS.maxLogChars)),
  }
}

type Engine = typeof import('./quickjs-engine.js')
let engine: Promise<Engine> | undefined

/** esbuild and QuickJS load on the first run, never with the package root. */
export function loadQuickJsEngine(): Promise<Engine> {
  if (engine === undefined) {
    const loading = import('./quickjs-engine.js')
    engine = loading
    loading.catch(() => {
      if (engine === loading) engine = undefined
    })
  }
  return engine
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
    let loaded: Engine
    try {
      loaded = await loadQuickJsEngine()
    } catch (error) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      return { ok: false, reason: 'internal', message: `QuickJS failed to load: ${message}`, logs: Object.freeze([]) }
    }
    return loaded.runQuickJs(request, this.limits)
  }
}

/** Create the in-thread QuickJS-backed {@link CodeRuntime}. */
export function createQuickJsRuntime(options?: QuickJsRuntimeOptions): QuickJsCodeRuntime {
  return new QuickJsCodeRuntime(options)
}
