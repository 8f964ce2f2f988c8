// Type-checking a run_code program before it runs: a 50-line program against a 200-tool SDK.
// The first check (the checker thread starts and loads TypeScript), the median warm check (the
// language service re-checks only the program's file), and how much the process's memory grew.
import { ProgramChecker } from '../src/code-mode/program-checker.js'
import { renderToolsSdk, type SdkToolEntry } from '../src/code-mode/sdk.js'
import type { JsonValue } from '../src/contract/json-value.js'
import { isMain, printTable, type Row } from './util.js'

const TOOLS = 200
const WARM_CHECKS = 40

function sdkOf(tools: number): string {
  const entries: SdkToolEntry[] = Array.from({ length: tools }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool number ${i}: reads a path and returns its lines.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A path.' },
        limit: { type: 'integer', description: 'At most this many lines.' },
        mode: { type: 'string', enum: ['text', 'binary'] },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['path'],
      additionalProperties: false,
    } as JsonValue,
    outputSchema: {
      type: 'object',
      properties: { lines: { type: 'array', items: { type: 'string' } }, total: { type: 'integer' } },
      required: ['lines', 'total'],
    },
  }))
  return renderToolsSdk(entries)
}

/** A 50-line program; `variant` changes one literal so every check is a real re-check. */
export function program50(variant: number): string {
  const lines = [
    `const seen: string[] = [] // variant ${variant}`,
    'let total = 0',
    "const first = await tools.tool_0({ path: '/etc/hosts', limit: 10 })",
    'total += first.total',
  ]
  for (let i = 1; lines.length < 44; i++) {
    lines.push(`const r${i} = await tools.tool_${i}({ path: '/data/${i}', mode: 'text' })`)
    lines.push(`for (const line of r${i}.lines) if (line.length > ${i}) seen.push(line)`)
    lines.push(`total += r${i}.total`)
  }
  lines.push(
    'const [a, b] = await Promise.all([',
    "  tools.tool_198({ path: '/a', tags: ['x'] }),",
    "  tools.tool_199({ path: '/b', limit: 5 }),",
    '])',
    "console.log('seen', seen.length)",
    'return { total: total + a.total + b.total, seen: seen.slice(0, 10) }',
  )
  return lines.join('\n')
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

export async function run(): Promise<Row[]> {
  const sdk = sdkOf(TOOLS)
  const checker = new ProgramChecker()
  global.gc?.()
  const before = process.memoryUsage()
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const first = await checker.check(sdk, program50(0))
  const firstMs = performance.now() - t0
  const firstCpu = process.cpuUsage(c0)
  if (first === undefined) throw new Error('the checker did not answer (is typescript installed?)')
  if (first.diagnostics.length > 0)
    throw new Error(`the bench program does not check: ${JSON.stringify(first.diagnostics)}`)
  const afterFirst = process.memoryUsage()
  const samples: number[] = []
  // The process's CPU time (every thread): the main thread only waits, so this is the checker's.
  const cpuBefore = process.cpuUsage()
  for (let i = 1; i <= WARM_CHECKS; i++) {
    const start = performance.now()
    await checker.check(sdk, program50(i))
    samples.push(performance.now() - start)
  }
  const cpu = process.cpuUsage(cpuBefore)
  const cpuPerCheckMs = (cpu.user + cpu.system) / 1000 / WARM_CHECKS
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]
  const afterWarm = process.memoryUsage()
  // A second agent view (another SDK text) costs one more warm language service.
  const t1 = performance.now()
  await checker.check(sdkOf(TOOLS - 1), program50(0))
  const secondViewMs = performance.now() - t1
  const afterSecondView = process.memoryUsage()
  await checker.dispose()
  // As a runtime with codeMode.typeCheck on does: the thread is started and warmed when the
  // runtime is created, and the first program arrives once that is done.
  const warmed = new ProgramChecker()
  const w0 = performance.now()
  const wc0 = process.cpuUsage()
  await warmed.warm()
  const warmMs = performance.now() - w0
  const warmCpu = process.cpuUsage(wc0)
  const f0 = performance.now()
  const fc0 = process.cpuUsage()
  await warmed.check(sdk, program50(0))
  const warmedFirstMs = performance.now() - f0
  const warmedFirstCpu = process.cpuUsage(fc0)
  const warmedSamples: number[] = []
  for (let i = 1; i <= WARM_CHECKS; i++) {
    const start = performance.now()
    await warmed.check(sdk, program50(i))
    warmedSamples.push(performance.now() - start)
  }
  warmedSamples.sort((a, b) => a - b)
  await warmed.dispose()
  const rows: Row[] = [
    {
      name: `first check from a cold thread, 50-line program, ${TOOLS}-tool SDK (thread start + TypeScript load)`,
      avgNs: firstMs * 1e6,
      ratio: `CPU ${((firstCpu.user + firstCpu.system) / 1000).toFixed(0)} ms`,
    },
    {
      name: `warm check, median of ${WARM_CHECKS}`,
      avgNs: median * 1e6,
      ratio: `p90 ${samples[Math.floor(samples.length * 0.9)].toFixed(1)} ms`,
    },
    { name: 'warm check, CPU time per check (all threads)', avgNs: cpuPerCheckMs * 1e6 },
    { name: `first check of a second view (${TOOLS - 1} tools)`, avgNs: secondViewMs * 1e6 },
    {
      name: 'warming at runtime creation (thread start + TypeScript load + throwaway checks)',
      avgNs: warmMs * 1e6,
      ratio: `CPU ${((warmCpu.user + warmCpu.system) / 1000).toFixed(0)} ms`,
    },
    {
      name: 'first check after warming (the SDK view is built)',
      avgNs: warmedFirstMs * 1e6,
      ratio: `CPU ${((warmedFirstCpu.user + warmedFirstCpu.system) / 1000).toFixed(0)} ms`,
    },
    {
      name: `warm check after warming, median of ${WARM_CHECKS}`,
      avgNs: warmedSamples[Math.floor(warmedSamples.length / 2)] * 1e6,
      ratio: `p90 ${warmedSamples[Math.floor(warmedSamples.length * 0.9)].toFixed(1)} ms`,
    },
  ]
  printTable('Code Mode type check (run_code, codeMode.typeCheck)', rows)
  console.log(
    `\nload average at the end: ${(await import('node:os'))
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  )
  console.log(
    `process RSS: ${mib(before.rss)} before, +${mib(afterFirst.rss - before.rss)} after the first check, ` +
      `+${mib(afterWarm.rss - before.rss)} after ${WARM_CHECKS} warm checks, ` +
      `+${mib(afterSecondView.rss - before.rss)} with a second view`,
  )
  return rows
}

if (isMain(import.meta.url)) await run()
