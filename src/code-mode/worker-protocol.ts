import type { MessagePort } from 'node:worker_threads'
// The messages between the worker pool (host thread) and a Code Mode worker, and the layout of the
// shared memory through which a busy worker stays observable and interruptible.
import type { JsonValue } from '../contract/json-value.js'
import type { EncodedBindingOutcome } from './binding-text.js'
import type { CodeDraws, CodeRunOutcome } from './code-runtime.js'
import type { QuickJsLimits } from './quickjs-runtime.js'
import type { StrippedProgram } from './strip-program.js'

/** Host → worker. */
export type ToWorker =
  /** Boot a fresh QuickJS runtime for run `id` (the prelude runs while the host strips types). */
  | { readonly t: 'run'; readonly id: number; readonly limits: QuickJsLimits; readonly tape?: readonly number[] }
  | { readonly t: 'code'; readonly id: number; readonly stripped: StrippedProgram }
  /** A binding's outcome, encoded on the host (an oversized value never crosses). */
  | { readonly t: 'outcome'; readonly id: number; readonly index: number; readonly outcome: EncodedBindingOutcome }
  | { readonly t: 'abort'; readonly id: number }

/** Worker → host. */
export type FromWorker =
  /** The binding calls one guest slice made, sent together when the slice ends (as the in-thread runtime sees them). */
  | { readonly t: 'calls'; readonly id: number; readonly calls: readonly WorkerCall[] }
  | { readonly t: 'log'; readonly id: number; readonly line: string }
  /** `retire`: the run tore its QuickJS state; the host replaces the worker. */
  | { readonly t: 'done'; readonly id: number; readonly outcome: CodeRunOutcome; readonly retire: boolean }

export interface WorkerCall {
  readonly index: number
  readonly name: string
  readonly args: JsonValue
  readonly draws?: CodeDraws
}

/** What a worker receives as `workerData`. */
export interface WorkerBoot {
  readonly shared: SharedArrayBuffer
  /** The run channel: the host can drain it synchronously (`receiveMessageOnPort`), a Worker's own port cannot be. */
  readonly port: MessagePort
}

/**
 * Shared memory of one worker: a Float64Array of {@link CLOCK_SLOTS} (written by the worker, read
 * by the host's watchdog) followed by an Int32Array of {@link FLAG_SLOTS} (written by the host).
 */
export const CLOCK_RUN = 0
/** Guest time of the current run at the last publish, in ms. */
export const CLOCK_VM = 1
/** `performance.timeOrigin + performance.now()` of the last publish. */
export const CLOCK_STAMP = 2
/** 1 while guest code holds the thread. */
export const CLOCK_IN_SLICE = 3
/** Log lines dropped past the caps so far. */
export const CLOCK_DROPPED = 4
export const CLOCK_SLOTS = 5
/** Id of a run the host cancelled (the interrupt handler polls it). */
export const FLAG_ABORT = 0
export const FLAG_SLOTS = 1
export const SHARED_BYTES = CLOCK_SLOTS * 8 + FLAG_SLOTS * 4

export function sharedViews(shared: SharedArrayBuffer): { clock: Float64Array; flags: Int32Array } {
  return { clock: new Float64Array(shared, 0, CLOCK_SLOTS), flags: new Int32Array(shared, CLOCK_SLOTS * 8, FLAG_SLOTS) }
}

/** A clock both threads read alike (each thread's `performance.now()` has its own origin). */
export function absoluteNow(): number {
  return performance.timeOrigin + performance.now()
}
