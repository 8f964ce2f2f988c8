// The 'hybrid' ranker's encoder in worker threads: a pool of up to one worker per core, each
// with its own copy of the model, so embedding the tools at start runs in parallel and never holds
// the main thread (a cold start is seconds of encoder time). It starts with one worker and adds
// more only while tool batches queue up: a request, or a few new tools, never pay a second model.
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { SentenceEncoder } from './embedding-ranker.js'
import type { EncoderJobMessage, EncoderWorkerData, EncoderWorkerMessage } from './encoder-worker-protocol.js'
import { type EncoderRuntime, lengthBatches } from './use-lite-encoder.js'

// Each worker holds the model (28 MB of weights and TensorFlow.js' heap): past a few, more
// workers cost memory for little gain on one process's start.
const MAX_WORKERS = 4

// Batches (8 texts, about 80 ms of encoder time each) that must be waiting before another worker
// is started: a model load costs about as much as this many batches.
const GROW_AT = 8

/** Workers for this machine: one per available core, at most MAX_WORKERS. */
export function defaultPoolSize(): number {
  return Math.max(1, Math.min(os.availableParallelism(), MAX_WORKERS))
}

export interface EncoderPoolOptions {
  /** Worker threads at most (default: one per available core, at most 4); one is started first. */
  readonly size?: number
  /** The worker's entry module (default: the USE lite worker); tests give a stand-in. */
  readonly entry?: URL
}

interface Job {
  readonly texts: readonly string[]
  readonly resolve: (vectors: Float32Array[]) => void
  readonly reject: (error: Error) => void
}

interface Member {
  readonly worker: Worker
  job: { readonly id: number; readonly job: Job } | undefined
}

/**
 * The worker's entry: the compiled `encoder-worker.js` beside this file in the built package; from
 * sources (vitest, tsx) a bundle of `encoder-worker.ts`, as Code Mode's workers are.
 */
function workerEntry(): Promise<URL> {
  if (!import.meta.url.endsWith('.ts')) return Promise.resolve(new URL('./encoder-worker.js', import.meta.url))
  bundledEntry ??= import('../util/worker-source-bundle.js').then((bundle) =>
    bundle.bundleWorkerEntry(new URL('./encoder-worker.ts', import.meta.url)),
  )
  return bundledEntry
}
let bundledEntry: Promise<URL> | undefined

/**
 * A sentence encoder whose calls run in worker threads. `embed` cuts the texts into the same
 * batches the in-thread encoder would (so the vectors are the same) and hands them to whichever
 * worker is free; a single text (a search request) goes ahead of the queued tool batches. It
 * starts one worker; while more than GROW_AT batches wait, it starts more, up to `size`. A
 * worker that crashes or fails to load breaks the pool: every waiting and later call rejects with
 * the reason (the ranker then reports it once and ranks on the full text).
 */
export class EncoderPool implements SentenceEncoder {
  private readonly members: Member[] = []
  private readonly starting = new Set<Worker>()
  private readonly queue: Job[] = []
  private nextJob = 1
  private broken: Error | undefined
  private closed = false

  private constructor(
    readonly id: string,
    /** How the first worker's encoder runs (absent when its entry does not say: test stand-ins). */
    readonly runtime: EncoderRuntime | undefined,
    private readonly size: number,
    private readonly spawn: () => Worker,
  ) {}

  /** Start the first worker and wait until it has loaded the model. */
  static async start(options: EncoderPoolOptions = {}): Promise<EncoderPool> {
    const size = Math.max(1, options.size ?? defaultPoolSize())
    const entry = options.entry ?? (await workerEntry())
    const data: EncoderWorkerData = { requireFrom: fileURLToPath(import.meta.url) }
    const spawn = () => new Worker(entry, { workerData: data, execArgv: [], stdout: false, stderr: false })
    const first = spawn()
    let loaded: Loaded
    try {
      loaded = await ready(first)
    } catch (error) {
      await first.terminate()
      throw error
    }
    const pool = new EncoderPool(loaded.id, loaded.runtime, size, spawn)
    pool.adopt(first)
    return pool
  }

  /** Workers started so far (loaded or loading). */
  get workers(): number {
    return this.members.length + this.starting.size
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.broken !== undefined) return Promise.reject(this.broken)
    if (this.closed) return Promise.reject(new Error('the sentence encoder was closed'))
    const urgent = texts.length === 1
    const batches = lengthBatches(texts)
    const calls = batches.map(
      (batch) =>
        new Promise<Float32Array[]>((resolve, reject) => {
          const job = { texts: batch.map((at) => texts[at] as string), resolve, reject }
          if (urgent) this.queue.unshift(job)
          else this.queue.push(job)
        }),
    )
    this.dispatch()
    return Promise.all(calls).then((results) => {
      const out = new Array<Float32Array>(texts.length)
      batches.forEach((batch, b) => {
        batch.forEach((at, j) => {
          out[at] = (results[b] as Float32Array[])[j] as Float32Array
        })
      })
      return out
    })
  }

  /** Stop the workers; calls still waiting reject. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.failAll(new Error('the sentence encoder was closed'))
    await Promise.all([
      ...this.members.map((member) => member.worker.terminate()),
      ...[...this.starting].map((worker) => worker.terminate()),
    ])
  }

  private adopt(worker: Worker): void {
    const member: Member = { worker, job: undefined }
    this.members.push(member)
    worker.on('message', (message: EncoderWorkerMessage) => this.onMessage(member, message))
    worker.on('error', (error: Error) => this.crash(error))
    worker.on('exit', (code) => {
      if (!this.closed) this.crash(new Error(`an encoder worker exited with code ${code}`))
    })
    // An idle worker does not keep the process alive; one with work does (see dispatch).
    worker.unref()
  }

  private dispatch(): void {
    for (const member of this.members) {
      if (member.job !== undefined) continue
      const job = this.queue.shift()
      if (job === undefined) break
      const id = this.nextJob++
      member.job = { id, job }
      member.worker.ref()
      const message: EncoderJobMessage = { job: id, texts: job.texts }
      member.worker.postMessage(message)
    }
    this.grow()
  }

  /** Start a worker more for each GROW_AT batches waiting beyond those already starting, up to `size`. */
  private grow(): void {
    const wanted = Math.min(this.size - this.workers, Math.floor(this.queue.length / GROW_AT) - this.starting.size)
    for (let i = 0; i < wanted; i++) {
      const worker = this.spawn()
      this.starting.add(worker)
      ready(worker).then(
        () => {
          this.starting.delete(worker)
          if (this.closed || this.broken !== undefined) return void worker.terminate()
          this.adopt(worker)
          this.dispatch()
        },
        (error: Error) => {
          this.starting.delete(worker)
          void worker.terminate()
          this.crash(error)
        },
      )
    }
  }

  private onMessage(member: Member, message: EncoderWorkerMessage): void {
    const running = member.job
    if (running === undefined || !('job' in message) || message.job !== running.id) return
    member.job = undefined
    member.worker.unref()
    if (message.type === 'done') {
      const { vectors, dimensions } = message
      running.job.resolve(running.job.texts.map((_, i) => vectors.subarray(i * dimensions, (i + 1) * dimensions)))
    } else running.job.reject(new Error(message.message))
    this.dispatch()
  }

  private crash(error: Error): void {
    if (this.broken !== undefined || this.closed) return
    this.broken = new Error(`an encoder worker failed: ${error.message}`)
    this.failAll(this.broken)
    for (const member of this.members) void member.worker.terminate()
    for (const worker of this.starting) void worker.terminate()
  }

  private failAll(error: Error): void {
    for (const member of this.members) {
      member.job?.job.reject(error)
      member.job = undefined
    }
    for (const job of this.queue.splice(0)) job.reject(error)
  }
}

interface Loaded {
  readonly id: string
  readonly runtime: EncoderRuntime | undefined
}

/** Resolves with the worker's encoder id and runtime once it has loaded the model; rejects if it cannot. */
function ready(worker: Worker): Promise<Loaded> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: EncoderWorkerMessage) => {
      if (message.type === 'ready') settle(() => resolve({ id: message.id, runtime: message.runtime }))
      else if (message.type === 'failed') settle(() => reject(new Error(message.message)))
    }
    const onError = (error: Error) => settle(() => reject(error))
    const onExit = (code: number) =>
      settle(() => reject(new Error(`an encoder worker exited with code ${code} while loading`)))
    const settle = (then: () => void) => {
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
      then()
    }
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.on('exit', onExit)
  })
}
