import type {
  ToolExecutionFailure,
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
} from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { fuseSignals } from '../runtime/index.js'
import { CallScheduler, classifyCall, DEFAULT_MAX_PARALLEL } from './call-scheduler.js'

export { DEFAULT_MAX_PARALLEL }

/** The part of `ctx.tools` (a `ToolRuntime`) the batch executor needs. */
export interface BatchToolRuntime {
  executionMode(input: ToolExecutionInput): ToolExecutionMode
  execute(input: ToolExecutionInput): Promise<ToolExecutionResult>
}

/** One settled call of a batch, in call order. */
export interface BatchCallResult {
  /** Position of the call in the turn. */
  readonly index: number
  /** The call exactly as the caller passed it (its own `signal`, not the fused one). */
  readonly call: ToolExecutionInput
  /** The scheduling mode the runtime classified the call as. */
  readonly mode: ToolExecutionMode
  readonly result: ToolExecutionResult
}

/** The outcome of one turn's batch. */
export interface BatchResult {
  /** One entry per call, in call order — never fewer, whatever failed or was cancelled. */
  readonly results: readonly BatchCallResult[]
  /** True when any successful result asked to conclude the turn (commit the batch, then stop). */
  readonly concludesTurn: boolean
}

/** Options of {@link executeBatch}. */
export interface ExecuteBatchOptions {
  /** Upper bound of overlapping parallel calls (a positive integer). Default {@link DEFAULT_MAX_PARALLEL}. */
  readonly maxParallel?: number
  /** Cancels the whole batch: fused into every call's own signal. */
  readonly signal?: AbortSignal
  /** Observer: a call is about to be handed to `execute()`. Failures are contained. */
  readonly onStart?: (call: ToolExecutionInput, index: number, mode: ToolExecutionMode) => void
  /** Observer: a call settled (in completion order). Failures are contained. */
  readonly onResult?: (entry: BatchCallResult) => void
}

/**
 * Run the pending calls of one model turn.
 *
 * Each call is classified once, up front and in order, through `tools.executionMode`.
 * An exclusive call is an ordering barrier: it starts only after every earlier call
 * settled, and nothing later starts until it settled. A run of consecutive parallel
 * calls goes through a rolling pool of at most `maxParallel` overlapping calls, started
 * in call order. A failed call never stops the batch, and cancellation never drops a
 * call: every call still goes through `execute()` (which answers a call whose signal is
 * already aborted with `ABORTED_BEFORE_DISPATCH`), so `results` always has one entry per
 * call, in call order.
 *
 * Invalid arguments throw synchronously (before any call starts); once started, the
 * returned promise never rejects.
 */
export function executeBatch(
  tools: BatchToolRuntime,
  calls: readonly ToolExecutionInput[],
  options: ExecuteBatchOptions = {},
): Promise<BatchResult> {
  validate(tools, calls, options)
  const maxParallel = options.maxParallel ?? DEFAULT_MAX_PARALLEL
  const batchSignal = options.signal
  const { onStart, onResult } = options
  const snapshot = [...calls]
  const modes = snapshot.map((call) => classifyCall((input) => tools.executionMode(input), call))
  const results = new Array<BatchCallResult>(snapshot.length)

  const run = async (index: number): Promise<void> => {
    const call = snapshot[index]
    const mode = modes[index]
    observe(() => onStart?.(call, index, mode))
    // The fusion is released as soon as the call settles: a long-lived batch or call signal holds nothing per call.
    const fused = batchSignal === undefined ? undefined : fuseSignals(call.signal, batchSignal)
    let result: ToolExecutionResult
    try {
      result = await dispatch(tools, fused === undefined ? call : { ...call, signal: fused.signal })
    } finally {
      fused?.release()
    }
    const entry: BatchCallResult = Object.freeze({ index, call, mode, result })
    results[index] = entry
    observe(() => onResult?.(entry))
  }

  // The shared rule (exclusive barrier, rolling parallel pool, call order) is CallScheduler's;
  // the first calls start synchronously, inside this call, as they always have.
  const scheduler = new CallScheduler({ maxParallel })
  for (let index = 0; index < snapshot.length; index++) scheduler.submit(modes[index], () => run(index))
  return (async () => {
    await scheduler.idle()
    const concludesTurn = results.some((entry) => !entry.result.isError && entry.result.concludesTurn === true)
    return Object.freeze({ results: Object.freeze(results), concludesTurn })
  })()
}

function validate(tools: BatchToolRuntime, calls: readonly ToolExecutionInput[], options: ExecuteBatchOptions): void {
  if (typeof tools?.execute !== 'function' || typeof tools.executionMode !== 'function') {
    throw new ConfigError('executeBatch(tools)', 'expected execute() and executionMode() (pass ctx.tools)')
  }
  if (!Array.isArray(calls))
    throw new ConfigError('executeBatch(tools, calls)', 'expected an array of ToolExecutionInput')
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]
    if (call === null || typeof call !== 'object')
      throw new ConfigError(`executeBatch(tools, calls)[${i}]`, 'expected an object')
    if (!(call.signal instanceof AbortSignal)) {
      throw new ConfigError(`executeBatch(tools, calls)[${i}].signal`, 'expected an AbortSignal')
    }
  }
  if (options === null || typeof options !== 'object')
    throw new ConfigError('executeBatch(tools, calls, options)', 'expected an object')
  const { maxParallel, signal } = options
  if (maxParallel !== undefined && !(Number.isSafeInteger(maxParallel) && maxParallel > 0)) {
    throw new ConfigError(
      'executeBatch(options).maxParallel',
      `expected a positive integer, got ${String(maxParallel)}`,
    )
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ConfigError('executeBatch(options).signal', 'expected an AbortSignal')
  }
  for (const hook of ['onStart', 'onResult'] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function') {
      throw new ConfigError(`executeBatch(options).${hook}`, 'expected a function')
    }
  }
}

/** `ToolRuntime.execute` never rejects; a structural stand-in might, so contain it as a failure. */
async function dispatch(tools: BatchToolRuntime, call: ToolExecutionInput): Promise<ToolExecutionResult> {
  try {
    return await tools.execute(call)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const name = error instanceof Error ? error.name : 'Error'
    const failure: ToolExecutionFailure = {
      isError: true,
      error: { message, info: { name, code: 'TOOL_ERROR' } },
      content: [{ type: 'text', text: message }],
    }
    return Object.freeze(failure)
  }
}

function observe(hook: () => void): void {
  try {
    hook()
  } catch {
    // Observers are UI/telemetry; they must not break the batch contract (never rejects, no dropped result).
  }
}
