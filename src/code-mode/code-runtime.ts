import type { JsonValue } from '../contract/json-value.js'

/** One `tools.<name>(args)` call a program made, with arguments that already crossed as JSON. */
export interface CodeBindingCall {
  readonly name: string
  readonly args: JsonValue
  /** The clock readings and random numbers the program drew since its previous call (when any). */
  readonly draws?: CodeDraws
}

/**
 * What a program drew from its non-deterministic sources (`Date.now`, `new Date()`, `Math.random`,
 * `crypto.getRandomValues`) between two tool calls, recorded so that a paused program re-runs the
 * same way. `values` hold a clock reading as itself, a random number `r` as `-2 - r`, and up to four
 * random bytes, read big-endian as `w`, as `-4 - w`.
 */
export interface CodeDraws {
  readonly values: readonly number[]
  /** The run drew more than the recording bound: it cannot be replayed. */
  readonly overflow: boolean
  /** A replayed run asked for another kind of value (clock, random number, bytes) than the tape holds. */
  readonly mismatch: boolean
}

/** What the program sees for one binding call: the value, or a `ToolCallError`'s two fields. */
export type CodeBindingOutcome =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly toolName: string; readonly message: string }

/** One program run. */
export interface CodeRunRequest {
  /** TypeScript source: the body of an async function (top-level `await` and `return` work). */
  readonly code: string
  /** Cancellation: interrupts the program promptly; the run then ends as `aborted`. */
  readonly signal: AbortSignal
  /**
   * Host side of a binding call, invoked synchronously and in call order for every call whose
   * arguments are JSON. It must not throw or reject; outcomes that arrive after the run settled
   * are dropped (the caller owns draining its own work).
   */
  callTool(call: CodeBindingCall): Promise<CodeBindingOutcome>
  /** A replay: the values (as in {@link CodeDraws}) the program's draws return first, in order. */
  readonly replayTape?: readonly number[]
}

/** Why a run failed. */
export type CodeRunFailureReason =
  | 'syntax'
  | 'thrown'
  | 'invalid-result'
  | 'cpu-limit'
  | 'memory-limit'
  | 'stack-limit'
  | 'call-limit'
  | 'result-too-large'
  | 'stalled'
  | 'aborted'
  | 'internal'

export type CodeRunOutcome =
  | { readonly ok: true; readonly value: JsonValue; readonly logs: readonly string[] }
  | {
      readonly ok: false
      readonly reason: CodeRunFailureReason
      readonly message: string
      readonly logs: readonly string[]
    }

/**
 * A sandbox that runs one Code Mode program per call with no ambient authority: only `tools`
 * (routed to {@link CodeRunRequest.callTool}), `console` (captured) and the language built-ins.
 * `run` never rejects; every failure is a {@link CodeRunOutcome} with `ok: false`.
 */
export interface CodeRuntime {
  run(request: CodeRunRequest): Promise<CodeRunOutcome>
  /**
   * Release what the runtime holds (threads, timers, ports). Runs in flight end as `internal`
   * failures; later runs fail the same way. Code Mode calls it for runtimes it created itself.
   */
  dispose?(): Promise<void>
}
