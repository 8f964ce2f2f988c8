import type {
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolExecutionSuccess,
} from '../../src/contract/execution.js'
import type { BatchToolRuntime } from '../../src/scheduling/execute-batch.js'

/** A promise with its settle functions exposed. */
export interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Let pending promise callbacks and immediates run. */
export async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** Poll (on the event loop, never on wall-clock assertions) until `predicate` holds. */
export async function until(predicate: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (predicate()) return
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  throw new Error(`timed out waiting for ${what}`)
}

export function success(value: string, extra: Partial<ToolExecutionSuccess> = {}): ToolExecutionResult {
  return { isError: false, value, content: [{ type: 'text', text: value }], ...extra }
}

export function failure(code: string, message: string): ToolExecutionResult {
  return {
    isError: true,
    error: { message, info: { name: 'Error', code } },
    content: [{ type: 'text', text: message }],
  }
}

export function call(callId: string, name = 'tool', args: unknown = {}, signal = new AbortController().signal) {
  return { callId, name, arguments: args, signal } satisfies ToolExecutionInput
}

/**
 * A structural fake of `ctx.tools`: names starting with `p` are parallel, others exclusive.
 * Every call is held until the test releases it (or its signal aborts); the log records
 * `start:<id>` / `end:<id>` in the order things happen.
 */
export class FakeRuntime implements BatchToolRuntime {
  readonly log: string[] = []
  readonly running = new Set<string>()
  readonly gates = new Map<string, Deferred<ToolExecutionResult>>()
  readonly received = new Map<string, ToolExecutionInput>()
  maxRunning = 0
  autoRelease = false

  executionMode(input: ToolExecutionInput): ToolExecutionMode {
    return input.name.startsWith('p') ? { kind: 'parallel' } : { kind: 'exclusive' }
  }

  async execute(input: ToolExecutionInput): Promise<ToolExecutionResult> {
    this.received.set(input.callId, input)
    if (input.signal.aborted) {
      this.log.push(`skip:${input.callId}`)
      return failure('ABORTED_BEFORE_DISPATCH', `${input.name} cancelled before dispatch`)
    }
    this.log.push(`start:${input.callId}`)
    this.running.add(input.callId)
    this.maxRunning = Math.max(this.maxRunning, this.running.size)
    const gate = deferred<ToolExecutionResult>()
    this.gates.set(input.callId, gate)
    const onAbort = () => gate.resolve(failure('ABORTED', `${input.name} cancelled`))
    input.signal.addEventListener('abort', onAbort, { once: true })
    if (this.autoRelease) queueMicrotask(() => gate.resolve(success(input.callId)))
    try {
      return await gate.promise
    } finally {
      input.signal.removeEventListener('abort', onAbort)
      this.running.delete(input.callId)
      this.log.push(`end:${input.callId}`)
    }
  }

  release(callId: string, result: ToolExecutionResult = success(callId)): void {
    const gate = this.gates.get(callId)
    if (!gate) throw new Error(`call ${callId} has not started`)
    gate.resolve(result)
  }

  started(): string[] {
    return this.log.filter((line) => line.startsWith('start:')).map((line) => line.slice(6))
  }
}
