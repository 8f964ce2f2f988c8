// Child process of engine-output.test.ts: runs programs that end on a refused or budget-killed
// outcome through one runtime kind, and prints each outcome (and, inline, the engine's counts) as
// one JSON line on stdout. Whatever else reaches this process's stderr is what the test forbids.
import { quickJsRuntimeStats } from '../../src/code-mode/quickjs-engine.js'
import { createQuickJsRuntime } from '../../src/code-mode/quickjs-runtime.js'
import { createWorkerRuntime } from '../../src/code-mode/worker-runtime.js'

const PROGRAMS: Readonly<Record<string, string>> = {
  // Issue 22: a 5 MB return value, refused over maxResultBytes.
  oversized: 'return "x".repeat(5 * 1024 * 1024)',
  oversizedAfterAwait: 'await null; return "y".repeat(6 * 1024 * 1024)',
  oversizedThrow: 'await null; throw new Error("z".repeat(6 * 1024 * 1024))',
  // A large allocation in a job, then a normal result.
  largeInJob: 'const s = "x".repeat(5 * 1024 * 1024); await null; return JSON.stringify(s).length',
  // Budget-killed runs.
  cpu: 'let s = ""; while (true) { s += "x"; if (s.length > 1e6) s = "" }',
  memoryInJob: 'await null; const a = []; while (true) a.push("x".repeat(1000))',
  calls: 'const ps = []; for (let i = 0; i < 2000; i++) ps.push(tools.t({ i })); await Promise.all(ps)',
}

const kind = process.argv[2]
const runtime =
  kind === 'worker'
    ? createWorkerRuntime({ cpuTimeMs: 1_000, poolSize: 1 })
    : createQuickJsRuntime({ cpuTimeMs: 1_000 })
for (const [name, code] of Object.entries(PROGRAMS)) {
  const outcome = await runtime.run({
    code,
    signal: new AbortController().signal,
    callTool: async () => ({ ok: true, value: null }),
  })
  process.stdout.write(`${JSON.stringify({ name, ok: outcome.ok, reason: outcome.ok ? undefined : outcome.reason })}\n`)
}
if ('dispose' in runtime) {
  process.stdout.write(`${JSON.stringify({ stats: runtime.stats() })}\n`)
  await runtime.dispose()
} else {
  process.stdout.write(`${JSON.stringify({ stats: quickJsRuntimeStats() })}\n`)
}
