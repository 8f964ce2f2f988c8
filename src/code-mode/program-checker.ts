// Checking a `run_code` program against its agent's SDK before it runs. The TypeScript compiler
// lives on its own thread (type-check-worker.ts), loaded on the first check and kept warm; this
// side only posts the SDK text and the program and waits for the diagnostics.
import { Worker } from 'node:worker_threads'
import type { CheckReply, CheckRequest, ProgramDiagnostic, WarmReply, WarmRequest } from './type-check-protocol.js'

/** `codeMode.typeCheck`: refuse a program with errors, run it and return them beside the result, or skip the check. */
export type CodeTypeCheckMode = 'refuse' | 'warn' | 'off'

/** What a check found: TypeScript's errors on the program's lines, and the compiler's version. */
export interface ProgramCheck {
  readonly diagnostics: readonly ProgramDiagnostic[]
  readonly typescript: string
}

/** A check that takes longer than this is abandoned (the thread is replaced) and the program runs unchecked. */
const CHECK_TIMEOUT_MS = 20_000

interface Pending {
  resolve(check: ProgramCheck | undefined): void
  timer: NodeJS.Timeout
}

/** Warnings are reported once per process and reason. */
const warned = new Set<string>()
function warnOnce(text: string): void {
  if (warned.has(text)) return
  warned.add(text)
  process.emitWarning(text, 'ToolgateWarning')
}

function workerEntry(): URL | Promise<URL> {
  if (!import.meta.url.endsWith('.ts')) return new URL('./type-check-worker.js', import.meta.url)
  return import('../util/worker-source-bundle.js').then((bundle) =>
    bundle.bundleWorkerEntry(new URL('./type-check-worker.ts', import.meta.url)),
  )
}

/**
 * One checker thread for the process. A check never rejects: when TypeScript is not installed, or
 * the checker fails or takes too long, it resolves `undefined` (the program runs unchecked) and the
 * reason is reported once as a process warning.
 */
export class ProgramChecker {
  private worker: Worker | undefined
  private starting: Promise<Worker | undefined> | undefined
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  private unavailable = false
  private warming: Promise<void> | undefined
  private onWarmed: (() => void) | undefined

  async check(sdk: string, code: string, signal?: AbortSignal): Promise<ProgramCheck | undefined> {
    if (this.unavailable) return undefined
    const worker = await this.start()
    if (worker === undefined) return undefined
    const id = this.nextId++
    return new Promise<ProgramCheck | undefined>((resolve) => {
      const onAbort = () => this.settle(id, undefined)
      const timer = setTimeout(() => {
        warnOnce(`toolgate: a run_code program's type check took over ${CHECK_TIMEOUT_MS} ms; it ran unchecked`)
        this.settle(id, undefined)
        this.restart()
      }, CHECK_TIMEOUT_MS)
      this.pending.set(id, {
        resolve: (check) => {
          signal?.removeEventListener('abort', onAbort)
          resolve(check)
        },
        timer,
      })
      signal?.addEventListener('abort', onAbort, { once: true })
      // Kept alive only while a check is pending: an idle checker never holds the process open.
      worker.ref()
      worker.postMessage({ id, sdk, code } satisfies CheckRequest)
    })
  }

  /**
   * Start the thread, load TypeScript and warm it with throwaway checks, without waiting and
   * without holding the process open; a check that arrives meanwhile goes first. Resolves when
   * the thread is warm (or gave up); never rejects, and nobody needs to wait for it.
   */
  warm(): Promise<void> {
    if (this.unavailable) return Promise.resolve()
    this.warming ??= new Promise<void>((resolve) => {
      this.onWarmed = resolve
      void this.start().then((worker) => {
        if (worker === undefined) resolve()
        else worker.postMessage({ warm: true } satisfies WarmRequest)
      })
    })
    return this.warming
  }

  private endWarm(): void {
    this.onWarmed?.()
    this.onWarmed = undefined
    this.warming = undefined
  }

  /** Stop the thread; later checks start a new one. */
  async dispose(): Promise<void> {
    for (const id of [...this.pending.keys()]) this.settle(id, undefined)
    const worker = this.worker
    this.worker = undefined
    this.starting = undefined
    this.endWarm()
    await worker?.terminate()
  }

  private start(): Promise<Worker | undefined> {
    if (this.worker !== undefined) return Promise.resolve(this.worker)
    this.starting ??= (async () => {
      let entry: URL
      try {
        entry = await workerEntry()
      } catch (error) {
        this.giveUp(`the checker could not be loaded: ${error instanceof Error ? error.message : String(error)}`)
        return undefined
      }
      const worker = new Worker(entry, { execArgv: [], stdout: false, stderr: false })
      worker.unref()
      worker.on('message', (reply: CheckReply) => this.onReply(reply))
      worker.on('error', (error) => this.onExit(worker, error.message))
      worker.on('exit', (code) => this.onExit(worker, `the checker thread exited (${code})`))
      this.worker = worker
      return worker
    })()
    return this.starting
  }

  private onReply(reply: CheckReply | WarmReply): void {
    if ('warmed' in reply) {
      // Kept for the life of the thread: warming again would only repeat the work.
      this.onWarmed?.()
      this.onWarmed = undefined
      return
    }
    if ('unavailable' in reply) {
      this.giveUp(`TypeScript is not installed (${reply.unavailable.split('\n', 1)[0]})`)
      this.settle(reply.id, undefined)
    } else if ('failed' in reply) {
      warnOnce(`toolgate: a run_code program could not be type-checked (${reply.failed}); it ran unchecked`)
      this.settle(reply.id, undefined)
    } else this.settle(reply.id, { diagnostics: reply.diagnostics, typescript: reply.version })
  }

  private onExit(worker: Worker, why: string): void {
    if (this.worker !== worker) return
    this.endWarm()
    this.worker = undefined
    this.starting = undefined
    if (this.pending.size > 0) warnOnce(`toolgate: the run_code type checker stopped (${why}); programs ran unchecked`)
    for (const id of [...this.pending.keys()]) this.settle(id, undefined)
  }

  private giveUp(why: string): void {
    if (!this.unavailable)
      warnOnce(`toolgate: codeMode.typeCheck is off: ${why}. Install typescript to check run_code programs.`)
    this.unavailable = true
    void this.dispose()
  }

  private restart(): void {
    const worker = this.worker
    this.worker = undefined
    this.starting = undefined
    this.endWarm()
    void worker?.terminate()
  }

  private settle(id: number, check: ProgramCheck | undefined): void {
    const pending = this.pending.get(id)
    if (pending === undefined) return
    this.pending.delete(id)
    clearTimeout(pending.timer)
    if (this.pending.size === 0) this.worker?.unref()
    pending.resolve(check)
  }
}

let shared: ProgramChecker | undefined

/** The process's checker (one thread, shared by every agent and runtime). */
export function sharedProgramChecker(): ProgramChecker {
  shared ??= new ProgramChecker()
  return shared
}

/** The diagnostics as the model reads them: `line:column: message (TSnnnn)`, at most `max`. */
export function formatDiagnostics(diagnostics: readonly ProgramDiagnostic[], max: number): string[] {
  const lines = diagnostics
    .slice(0, max)
    .map((d) => `${d.line > 0 ? `${d.line}:${d.column}` : 'end'}: ${d.message} (TS${d.code})`)
  if (diagnostics.length > max) lines.push(`… and more (only the first ${max} are shown)`)
  return lines
}
