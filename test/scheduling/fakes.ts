import type {
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolExecutionSuccess,
  ToolRunContext,
} from '../../src/contract/execution.js'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
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

/** Generous bound of a wait in these tests: long enough for a machine under heavy load, still a bound. */
export const HANG_BOUND_MS = 20_000

/**
 * Poll until `predicate` holds, failing only after {@link HANG_BOUND_MS} of wall time. The bound is
 * time, not a number of turns: a condition driven by a timer (a 20 ms deadline) must not lose a race
 * against a fast event loop spinning through its turns. The first turns are immediates; later polls
 * wait a few milliseconds, so a long wait does not keep a loaded machine busy.
 */
export async function until(predicate: () => boolean, what = 'condition'): Promise<void> {
  const giveUpAt = Date.now() + HANG_BOUND_MS
  for (let turn = 0; ; turn++) {
    if (predicate()) return
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`)
    await new Promise<void>((resolve) => (turn < 1_000 ? setImmediate(resolve) : setTimeout(resolve, 5)))
  }
}

/** Wait for `promise`, failing after {@link HANG_BOUND_MS} with a message naming `what`. */
export async function settles<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), HANG_BOUND_MS)
  })
  try {
    return await Promise.race([promise, bound])
  } finally {
    clearTimeout(timer)
  }
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

/** A raw definition whose body is supplied by the test; it renders its value as JSON. */
export function tool(
  name: string,
  body: (args: unknown, exec: ToolRunContext) => Promise<unknown>,
  extra: Partial<ToolDefinition> = {},
): ToolDefinition {
  return {
    name,
    description: `${name} (test tool)`,
    parameters: { type: 'object', properties: {} },
    output: { schema: {}, render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }] },
    execute: body,
    ...extra,
  }
}

/** The error code of a failed result (undefined for a success). */
export function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined
}
