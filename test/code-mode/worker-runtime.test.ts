// The worker-thread CodeRuntime's pool (issue 10): sizing, queueing, cancellation, replacement,
// and a dispose() that leaves no worker thread, timer or port behind.
import { readdirSync } from 'node:fs'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import type { CodeBindingOutcome, CodeRunOutcome, CodeRuntime } from '../../src/code-mode/code-runtime.js'
import { CodeMode } from '../../src/code-mode/plugin.js'
import { createWorkerRuntime } from '../../src/code-mode/worker-runtime.js'
import { createToolRuntime, ToolRuntime, ToolRuntimeCore } from '../../src/index.js'
import { failOnUnhandledRejections } from './runtimes.js'

failOnUnhandledRejections()

/**
 * OS thread ids of this process: each worker is one. Other threads only ever get added (libuv's pool,
 * V8's helpers start lazily, at any moment), so tests count which ids seen while the workers were
 * alive are gone afterwards rather than comparing totals.
 */
const threads = () => new Set(readdirSync('/proc/self/task'))
/** Waits (bounded) until `count` of the threads seen in `before` have ended. */
async function threadsEnd(before: Set<string>, count: number): Promise<void> {
  const gone = () => [...before].filter((id) => !threads().has(id)).length
  await waitFor(() => gone() >= count, `${count} worker threads to end`)
}
const echo = (): Promise<CodeBindingOutcome> => Promise.resolve({ ok: true, value: 1 })

function run(runtime: CodeRuntime, code: string, signal = new AbortController().signal): Promise<CodeRunOutcome> {
  return runtime.run({ code, signal, callTool: echo })
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('the worker pool', () => {
  it('starts workers on demand up to poolSize, queues the rest, and leaves nothing behind after dispose()', async () => {
    const resources = process
      .getActiveResourcesInfo()
      .filter((name) => name !== 'Timeout')
      .sort()
    const pool = createWorkerRuntime({ poolSize: 2, cpuTimeMs: 200 })
    expect(pool.stats()).toMatchObject({ started: 0, alive: 0, timers: 0 })
    const runs = [1, 2, 3].map((n) => run(pool, `console.log(${n}); while (true) {}`))
    await waitFor(() => pool.stats().busy === 2, 'two busy workers')
    expect(pool.stats()).toMatchObject({ started: 2, alive: 2, queued: 1 })
    const withWorkers = threads()
    const outcomes = await Promise.all(runs)
    expect(outcomes.map((outcome) => !outcome.ok && outcome.reason)).toEqual(['cpu-limit', 'cpu-limit', 'cpu-limit'])
    expect(outcomes.map((outcome) => outcome.logs)).toEqual([['1'], ['2'], ['3']])
    // Normally the interrupt handler ends them and the third reuses a worker; on a starved machine
    // the watchdog may terminate one first (its wall clock counts while the thread waits for a
    // core) and a replacement takes its place. Either way two live, and every log line arrived.
    const stats = pool.stats()
    expect(stats).toMatchObject({ alive: 2, busy: 0, queued: 0 })
    expect(stats.started).toBe(2 + stats.terminated)
    await pool.dispose()
    expect(pool.stats()).toMatchObject({ alive: 0, busy: 0, queued: 0, timers: 0, exited: 2 })
    await threadsEnd(withWorkers, 2)
    expect(
      process
        .getActiveResourcesInfo()
        .filter((name) => name !== 'Timeout')
        .sort(),
    ).toEqual(resources)
  })

  it('dispose() ends runs in flight and queued runs, and refuses later runs', async () => {
    const pool = createWorkerRuntime({ poolSize: 1, cpuTimeMs: 10_000 })
    const busy = run(pool, 'while (true) {}')
    const queued = run(pool, 'return 1')
    await waitFor(() => pool.stats().busy === 1, 'a busy worker')
    await pool.dispose()
    const disposed = { ok: false, reason: 'internal', message: 'the Code Mode worker pool was disposed', logs: [] }
    expect(await busy).toEqual(disposed)
    expect(await queued).toEqual(disposed)
    expect(await run(pool, 'return 1')).toEqual(disposed)
    expect(pool.stats()).toMatchObject({ alive: 0, timers: 0 })
  })

  it('cancels a queued run without a worker, and a spinning run by terminating its worker', async () => {
    const pool = createWorkerRuntime({ poolSize: 1, cpuTimeMs: 10_000, terminateGraceMs: 100 })
    // A Promise-executor spin: the interrupt fires but the program keeps going, so only terminate() ends it.
    const spinning = new AbortController()
    const called: string[] = []
    const busy = pool.run({
      // The call reaches the host from inside the spin (calls of a long slice are not held back).
      code: 'console.log("in"); tools.spinning({}); while (true) new Promise(() => { while (true) {} })',
      signal: spinning.signal,
      callTool: (call) => {
        called.push(call.name)
        return new Promise(() => {})
      },
    })
    const waiting = new AbortController()
    const queued = run(pool, 'return 1', waiting.signal)
    await waitFor(() => pool.stats().busy === 1, 'a busy worker')
    waiting.abort()
    expect(await queued).toEqual({ ok: false, reason: 'aborted', message: 'the run was cancelled', logs: [] })
    await waitFor(() => called.length === 1, 'the call made before the spin')
    spinning.abort()
    expect(await busy).toEqual({ ok: false, reason: 'aborted', message: 'the run was cancelled', logs: ['in'] })
    expect(pool.stats()).toMatchObject({ terminated: 1, started: 2 })
    // The replacement serves the next run.
    expect(await run(pool, 'return 2')).toEqual({ ok: true, value: 2, logs: [] })
    await pool.dispose()
  })

  it('an idle worker is terminated after idleTimeoutMs, and a later run starts a new one', async () => {
    const pool = createWorkerRuntime({ poolSize: 1, idleTimeoutMs: 50 })
    expect(await run(pool, 'return 1')).toMatchObject({ ok: true })
    await waitFor(() => pool.stats().alive === 0, 'the idle worker to exit')
    expect(pool.stats()).toMatchObject({ started: 1, timers: 0 })
    expect(await run(pool, 'return 2')).toMatchObject({ ok: true, value: 2 })
    expect(pool.stats().started).toBe(2)
    await pool.dispose()
  })
})

describe('Code Mode options: runtime, poolSize, limits', () => {
  it('disposing the plugin disposes the worker pool it created', async () => {
    const ctx = new Context()
    const fiber = ctx.plugin(ToolRuntime, { mode: 'code', codeMode: { runtime: 'worker', poolSize: 3 } })
    await fiber
    const call = (callId: string) =>
      ctx.tools.execute({
        callId,
        name: 'run_code',
        arguments: { code: 'let n = 0; for (let i = 0; i < 1e5; i++) n += i; return n', description: 'sum' },
        signal: new AbortController().signal,
      })
    const results = await Promise.all(['a', 'b', 'c'].map(call))
    expect(results.map((result) => result.value)).toEqual(Array(3).fill({ result: 4999950000, logs: [] }))
    const withWorkers = threads()
    await fiber.dispose()
    await threadsEnd(withWorkers, 3)
  })

  it('createToolRuntime().dispose() settles a run in flight and leaves no worker behind', async () => {
    const handle = await createToolRuntime({ mode: 'code', codeMode: { poolSize: 2, limits: { cpuTimeMs: 60_000 } } })
    const spinning = handle.tools.execute({
      callId: 's',
      name: 'run_code',
      arguments: { code: 'while (true) {}', description: 'spin' },
      signal: new AbortController().signal,
    })
    const warm = await handle.tools.execute({
      callId: 'w',
      name: 'run_code',
      arguments: { code: 'return 1', description: 'one' },
      signal: new AbortController().signal,
    })
    expect(warm.isError ? warm.error : warm.value).toEqual({ result: 1, logs: [] })
    const withWorkers = threads()
    await handle.dispose()
    const result = await spinning
    expect(result.isError && result.error.info?.code).toBe('ABORTED')
    await threadsEnd(withWorkers, 2)
  })

  it('rejects unknown runtimes and keys that do not apply, with the option path', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { runtime: 'threads' },
        /codeMode\.runtime: expected 'worker', 'inline' or a CodeRuntime with run\(\), got threads/,
      ],
      [{ runtime: 'inline', poolSize: 2 }, /codeMode\.poolSize: only the 'worker' runtime has a pool/],
      [{ poolSize: 0 }, /codeMode\.poolSize: expected a positive integer, got 0/],
      [{ limits: { cpuTimeMs: -5 } }, /codeMode\.limits\.cpuTimeMs: expected a positive finite number, got -5/],
      [{ runtime: { run: echo }, limits: { cpuTimeMs: 5 } }, /poolSize and limits apply to the named runtimes/],
    ]
    for (const [codeMode, message] of cases) {
      const ctx = new Context()
      await ctx.plugin(ToolRuntimeCore, { mode: 'code' })
      await expect(async () => (await ctx.plugin(CodeMode, codeMode as never)).dispose()).rejects.toThrow(message)
    }
  })

  it("runtime: 'inline' runs on the host thread and starts no worker", async () => {
    // Warm what starts lazily (esbuild's client, QuickJS) so the count below is only about workers.
    const warm = new Context()
    await warm.plugin(ToolRuntime, { mode: 'code', codeMode: { runtime: 'inline' } })
    await warm.tools.execute({
      callId: 'w',
      name: 'run_code',
      arguments: { code: 'return 1', description: 'warm' },
      signal: new AbortController().signal,
    })
    const started: unknown[] = []
    const onWorker = (worker: unknown) => started.push(worker)
    process.on('worker', onWorker)
    const ctx = new Context()
    await ctx.plugin(ToolRuntime, { mode: 'code', codeMode: { runtime: 'inline', limits: { maxResultBytes: 64 } } })
    const result = await ctx.tools.execute({
      callId: 'i',
      name: 'run_code',
      arguments: { code: 'return "x".repeat(100)', description: 'too big' },
      signal: new AbortController().signal,
    })
    expect(result.isError && result.error.message).toMatch(/over the limit of 64 bytes \(maxResultBytes\)/)
    process.off('worker', onWorker)
    expect(started).toEqual([])
  })
})
