// Hostile programs (issue 10, "Bad input"; R-CODE-2): each one ends with exactly one result within
// its budget plus a grace, the host's event loop keeps serving while it runs (worker runtime), a
// killed or crashed worker is replaced and never takes an innocent run with it, and the return
// value is bounded. Budgets are small so the file stays quick; timing bounds are generous (the
// machine running the tests is loaded) — the real figures are in docs/performance.md.
import { Context } from 'cordis'
import { afterAll, describe, expect, it } from 'vitest'
import type {
  CodeBindingCall,
  CodeBindingOutcome,
  CodeRunOutcome,
  CodeRuntime,
} from '../../src/code-mode/code-runtime.js'
import { createWorkerRuntime } from '../../src/code-mode/worker-runtime.js'
import { defineTool, ToolRuntime } from '../../src/index.js'
import { failOnUnhandledRejections, makeRuntime, RUNTIME_KINDS } from './runtimes.js'

failOnUnhandledRejections()

/** Generous: a run's budget plus the termination grace plus a loaded machine's scheduling. */
const SLACK_MS = 8_000
/** The host's event loop must never stall this long (the measured figure is in docs/performance.md). */
const MAX_GAP_MS = 1_000

const bigValues = new Map<number, string>()
function tool(call: CodeBindingCall): Promise<CodeBindingOutcome> {
  if (call.name === 'big') {
    // The host pays for producing and shipping a value this size; the program must not.
    const length = Number(call.args)
    if (!bigValues.has(length)) bigValues.set(length, 'x'.repeat(length))
    return Promise.resolve({ ok: true, value: bigValues.get(length)! })
  }
  if (call.name === 'later')
    return new Promise((resolve) => setTimeout(() => resolve({ ok: true, value: 41 }), Number(call.args) || 0))
  return Promise.resolve({ ok: true, value: 1 })
}

/** Run `body` while a 5 ms interval records the host's largest timer gap. */
async function watchLoop<T>(body: () => Promise<T>): Promise<{ value: T; gapMs: number }> {
  let gapMs = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    gapMs = Math.max(gapMs, now - last)
    last = now
  }, 5)
  try {
    const value = await body()
    const now = performance.now()
    return { value, gapMs: Math.max(gapMs, now - last) }
  } finally {
    clearInterval(timer)
  }
}

async function timed(runtime: CodeRuntime, code: string): Promise<{ outcome: CodeRunOutcome; ms: number }> {
  const started = performance.now()
  const outcome = await runtime.run({ code, signal: new AbortController().signal, callTool: tool })
  return { outcome, ms: performance.now() - started }
}

function reasonOf(outcome: CodeRunOutcome): string {
  return outcome.ok ? `ok: ${JSON.stringify(outcome.value).slice(0, 80)}` : outcome.reason
}

const SPINS = {
  'while (true) {}': 'while (true) {}',
  'a spin inside a Promise executor': 'while (true) new Promise(() => { while (true) {} })',
  'a spinning .then chain': 'function spin(): Promise<void> { return Promise.resolve().then(spin) } await spin()',
  'sorting a huge array (a long C built-in)':
    'const a = Array.from({ length: 2_000_000 }, (_, i) => (i * 7919) % 1_000_003); a.sort(); return a[0]',
} as const

describe('hostile programs on the worker runtime: the host keeps serving', () => {
  const pool = createWorkerRuntime({ cpuTimeMs: 200, terminateGraceMs: 300 })
  afterAll(() => pool.dispose())

  it.each(Object.entries(SPINS))('%s ends as cpu-limit within its budget plus a grace', async (_name, code) => {
    const { value, gapMs } = await watchLoop(() => timed(pool, code))
    expect(reasonOf(value.outcome)).toBe('cpu-limit')
    expect(value.ms).toBeLessThan(200 + 300 + SLACK_MS)
    expect(gapMs).toBeLessThan(MAX_GAP_MS)
    // Whatever happened to the worker, the pool still serves.
    expect(await pool.run({ code: 'return 6 * 7', signal: new AbortController().signal, callTool: tool })).toEqual({
      ok: true,
      value: 42,
      logs: [],
    })
  })

  it('terminates the worker of a run the interrupt cannot end, and starts a replacement', async () => {
    const before = pool.stats()
    const { value } = await watchLoop(() => timed(pool, SPINS['a spin inside a Promise executor']))
    expect(value.outcome).toMatchObject({
      ok: false,
      reason: 'cpu-limit',
      message: 'the program exceeded its CPU budget of 200 ms (its worker was terminated)',
    })
    const after = pool.stats()
    expect(after.terminated).toBe(before.terminated + 1)
    expect(after.started).toBe(before.started + 1)
    expect(after.alive).toBeGreaterThanOrEqual(1)
  })

  it('deep recursion ends as stack-limit', async () => {
    const { value, gapMs } = await watchLoop(() =>
      timed(pool, 'function f(n: number): number { return f(n + 1) + 1 } return f(0)'),
    )
    expect(reasonOf(value.outcome)).toBe('stack-limit')
    expect(gapMs).toBeLessThan(MAX_GAP_MS)
  })

  it('eight concurrent spinners do not block the host, and each gets its one result', async () => {
    const { value, gapMs } = await watchLoop(() =>
      Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          timed(pool, i % 2 === 0 ? SPINS['while (true) {}'] : SPINS['a spin inside a Promise executor']),
        ),
      ),
    )
    expect(value.map(({ outcome }) => reasonOf(outcome))).toEqual(Array(8).fill('cpu-limit'))
    // Queued behind the pool, the last ones wait for up to four budgets each.
    for (const { ms } of value) expect(ms).toBeLessThan(8 * (200 + 300) + SLACK_MS)
    expect(gapMs).toBeLessThan(MAX_GAP_MS)
  })

  it('a hostile run never takes an innocent concurrent run with it', async () => {
    const shared = createWorkerRuntime({
      poolSize: 4,
      cpuTimeMs: 1_000,
      terminateGraceMs: 300,
      memoryLimitBytes: 16 * 1024 * 1024,
    })
    try {
      const innocent = (n: number) =>
        shared.run({
          // Waits on the host while the hostile runs fail, then computes.
          code: `const v = await tools.later(600); let s = 0; for (let i = 0; i < 1000; i++) s += i; return v + s + ${n}`,
          signal: new AbortController().signal,
          callTool: tool,
        })
      const { value, gapMs } = await watchLoop(() =>
        Promise.all([
          innocent(1),
          timed(shared, SPINS['a spin inside a Promise executor']),
          timed(shared, 'const a = []; for (;;) a.push("x".repeat(1e5) + a.length)'),
          timed(shared, 'const v = await tools.big(10_000_000); return v.length'),
          innocent(2),
        ]),
      )
      const [first, spin, bomb, big, second] = value
      expect(first).toEqual({ ok: true, value: 41 + 499500 + 1, logs: [] })
      expect(second).toEqual({ ok: true, value: 41 + 499500 + 2, logs: [] })
      expect(reasonOf(spin.outcome)).toBe('cpu-limit')
      expect(['memory-limit', 'cpu-limit']).toContain(reasonOf(bomb.outcome))
      expect(reasonOf(big.outcome)).toBe('memory-limit')
      expect(gapMs).toBeLessThan(MAX_GAP_MS)
    } finally {
      await shared.dispose()
    }
  })
})

describe.each(RUNTIME_KINDS)('hostile values on the %s runtime: memory and size limits', (kind) => {
  // A budget that lets the allocation finish, so the memory and size limits are what end the run.
  const runtime = makeRuntime(kind, { cpuTimeMs: 5_000, terminateGraceMs: 500 })

  it('an allocation bomb ends as memory-limit', async () => {
    const { outcome } = await timed(runtime, 'const a = []; for (;;) a.push("x".repeat(1e5) + a.length)')
    expect(outcome).toMatchObject({ ok: false, reason: 'memory-limit' })
  })

  it('two 60 MB strings do not pass a 64 MiB memory limit', async () => {
    const { outcome } = await timed(
      runtime,
      'const a = "x".repeat(60e6); const b = "y".repeat(60e6); return a.length + b.length',
    )
    expect(outcome).toMatchObject({
      ok: false,
      reason: 'memory-limit',
      message: 'the program exceeded its memory limit of 64 MiB',
    })
  })

  it('a 40 MB tool value fails the run at the memory limit instead of entering the sandbox', async () => {
    const { outcome } = await timed(runtime, 'const v = await tools.big(40_000_000); return v.length')
    expect(outcome).toMatchObject({
      ok: false,
      reason: 'memory-limit',
      message:
        "the value of tools.big() is 40000002 characters of JSON, too large for the program's memory limit of 64 MiB",
    })
  })

  it('a 5 MB and a 30 MB return value never reach the caller; the cap is configurable', async () => {
    const five = (await timed(runtime, 'return "x".repeat(5e6)')).outcome
    expect(five).toMatchObject({
      ok: false,
      reason: 'result-too-large',
      message:
        'the return value is 5000002 characters of JSON, over the limit of 1 MiB (maxResultBytes); return a smaller value',
    })
    const thirty = (await timed(runtime, 'return "x".repeat(30e6)')).outcome
    expect(thirty.ok).toBe(false)
    // Either limit may end it first: the string and its JSON text together pass 64 MiB.
    expect(['result-too-large', 'memory-limit']).toContain(reasonOf(thirty))
    const roomy = makeRuntime(kind, { cpuTimeMs: 5_000, maxResultBytes: 8 * 1024 * 1024 })
    const whole = (await timed(roomy, 'return "é".repeat(2e6)')).outcome
    expect(whole.ok && typeof whole.value === 'string' && whole.value.length).toBe(2e6)
    // Bytes, not characters: 2e6 "é" are 4e6 bytes of UTF-8.
    const capped = makeRuntime(kind, { maxResultBytes: 3_000_000 })
    expect((await timed(capped, 'return "é".repeat(2e6)')).outcome).toMatchObject({
      reason: 'result-too-large',
      message:
        'the return value is 4000002 bytes of JSON, over the limit of 3000000 bytes (maxResultBytes); return a smaller value',
    })
    expect((await timed(runtime, 'return "still fine"')).outcome).toEqual({ ok: true, value: 'still fine', logs: [] })
  })
})

describe('fifty concurrent hostile programs through the registry (worker runtime)', () => {
  it('each call gets exactly one result, the host keeps serving, and the pool recovers', async () => {
    const ctx = new Context()
    const fiber = ctx.plugin(ToolRuntime, { mode: 'code', codeMode: { limits: { cpuTimeMs: 100 } } })
    await fiber
    const tools = ctx.tools
    tools.register(
      defineTool({
        name: 'echo',
        description: 'Echo.',
        parameters: { n: { type: 'integer', required: true } },
        output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
        isConcurrencySafe: () => true,
        execute: async ({ n }) => n,
      }),
    )
    const results = new Map<string, number>()
    ctx.on('tools/result', (exec) => {
      if (exec.parent === undefined) results.set(exec.callId, (results.get(exec.callId) ?? 0) + 1)
    })
    const programs = [
      SPINS['while (true) {}'],
      SPINS['a spin inside a Promise executor'],
      SPINS['a spinning .then chain'],
      'function f(n: number): number { return f(n + 1) + 1 } return f(0)',
      'await tools.echo({ n: 1 }); while (true) {}',
    ]
    const { value, gapMs } = await watchLoop(() =>
      Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          tools.execute({
            callId: `h${i}`,
            name: 'run_code',
            arguments: { code: programs[i % programs.length], description: 'hostile' },
            signal: new AbortController().signal,
          }),
        ),
      ),
    )
    expect(value.every((result) => result.isError && result.error.info?.code === 'CODE_RUN_FAILED')).toBe(true)
    expect([...results.values()]).toEqual(Array(50).fill(1))
    expect(gapMs).toBeLessThan(MAX_GAP_MS)
    const fine = await tools.execute({
      callId: 'after',
      name: 'run_code',
      arguments: { code: 'return await tools.echo({ n: 7 })', description: 'fine' },
      signal: new AbortController().signal,
    })
    expect(fine.isError ? fine.error : fine.value).toEqual({ result: 7, logs: [] })
    await fiber.dispose()
  })
})
