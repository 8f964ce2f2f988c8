import type { JsonValue } from '../contract/json-value.js'

/** One `tools.<name>(args)` call a program made, with arguments that already crossed as JSON. */
export interface CodeBindingCall {
  readonly name: string
  readonly args: JsonValue
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
