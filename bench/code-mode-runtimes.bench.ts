import type { CodeRuntime } from '../src/code-mode/index.js'
import { exec, host } from './code-mode-fixture.js'
import { format, isMain, loadBuiltCodeMode, printTable, type Row, time } from './util.js'

const { createQuickJsRuntime, createRunCodeDefinition, createWorkerRuntime } = await loadBuiltCodeMode()

const CPU_BOUND = 'let s = 0; for (let i = 0; i < 2_000_000; i++) s = (s + i * 7) % 1_000_003; return s'

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

async function measure(runtime: CodeRuntime) {
  const definition = createRunCodeDefinition(host, { runtime, maxParallelSubCalls: 100 })
  const program = (code: string) => {
    const context = exec(code)
    const args = { code, description: 'bench' }
    return () => definition.execute(args, context)
  }
  // Warm: esbuild's service, the worker(s) and their QuickJS modules.
  for (let i = 0; i < 20; i++) await program('return null')()
  const empty = await time(program('return null'), 1_000)
  const one = await time(program('return await tools.t({ a: 1 })'), 1_000)
  const parallel = await time(
    program('return (await Promise.all(Array.from({ length: 100 }, (_, i) => tools.t({ i })))).length'),
    1_000,
  )
  const single: number[] = []
  const eight: number[] = []
  const cpu = program(CPU_BOUND)
  await cpu()
  for (let i = 0; i < 5; i++) {
    let started = performance.now()
    await cpu()
    single.push((performance.now() - started) * 1e6)
    started = performance.now()
    await Promise.all(Array.from({ length: 8 }, () => cpu()))
    eight.push((performance.now() - started) * 1e6)
  }
  return { empty, one, parallel, single: median(single), eight: median(eight) }
}

/**
 * The host's largest event-loop delay while one guest spins until its 1 s budget runs out: the
 * largest gap between 1 ms interval ticks, including the gap still open when the run returns
 * (`monitorEventLoopDelay` only samples when the loop gets to run).
 */
async function loopDelayWhileSpinning(runtime: CodeRuntime): Promise<number> {
  let gap = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    gap = Math.max(gap, now - last)
    last = now
  }, 1)
  await runtime.run({
    code: 'while (true) {}',
    signal: new AbortController().signal,
    callTool: async () => ({ ok: true, value: null }),
  })
  clearInterval(timer)
  return Math.max(gap, performance.now() - last) * 1e6
}

export async function run(): Promise<Row[]> {
  const inline = createQuickJsRuntime()
  const worker = createWorkerRuntime()
  const a = await measure(inline)
  const b = await measure(worker)
  const spinInline = createQuickJsRuntime({ cpuTimeMs: 1_000 })
  const spinWorker = createWorkerRuntime({ cpuTimeMs: 1_000 })
  await spinWorker.run({
    code: 'return 1',
    signal: new AbortController().signal,
    callTool: async () => ({ ok: true, value: null }),
  })
  const delayInline = await loopDelayWhileSpinning(spinInline)
  const delayWorker = await loopDelayWhileSpinning(spinWorker)
  await worker.dispose()
  await spinWorker.dispose()
  const ratio = (x: number, y: number) =>
    `${(y / x).toFixed(2)}× (worker ${y >= x ? '+' : '−'}${format(Math.abs(y - x))})`
  const rows: Row[] = [
    { name: 'empty program (warm), inline', avgNs: a.empty },
    { name: 'empty program (warm), worker', avgNs: b.empty, ratio: ratio(a.empty, b.empty) },
    { name: 'one trivial sub-call, inline', avgNs: a.one },
    { name: 'one trivial sub-call, worker', avgNs: b.one, ratio: ratio(a.one, b.one) },
    { name: '100 parallel sub-calls, inline', avgNs: a.parallel },
    { name: '100 parallel sub-calls, worker', avgNs: b.parallel, ratio: ratio(a.parallel, b.parallel) },
    { name: 'one CPU-bound program (2M iterations), inline', avgNs: a.single },
    { name: 'one CPU-bound program (2M iterations), worker', avgNs: b.single, ratio: ratio(a.single, b.single) },
    { name: '8 concurrent CPU-bound programs, inline', avgNs: a.eight },
    { name: '8 concurrent CPU-bound programs, worker', avgNs: b.eight, ratio: ratio(a.eight, b.eight) },
    { name: 'max host event-loop delay while a guest spins 1 s, inline', avgNs: delayInline },
    { name: 'max host event-loop delay while a guest spins 1 s, worker', avgNs: delayWorker },
  ]
  printTable('Code Mode runtimes: inline vs worker threads', rows)
  return rows
}

if (isMain(import.meta.url)) await run()
