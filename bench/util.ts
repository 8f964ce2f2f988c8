import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { measure } from 'mitata'

export interface Row {
  name: string
  avgNs: number
  ratio?: string
}

/** Average time per call in nanoseconds, measured by mitata (warm-up, batching, outlier-robust). */
export async function time(fn: () => unknown, minCpuMs = 300): Promise<number> {
  const stats = await measure(fn, { min_cpu_time: minCpuMs * 1e6 })
  return stats.avg
}

/**
 * Median time per call of each case over `rounds` rounds, the cases interleaved and each round
 * starting at another case, so machine load (and a case that leaves garbage behind) falls on all alike.
 */
export async function interleavedMedians(cases: Array<() => unknown>, rounds = 7, minCpuMs = 100): Promise<number[]> {
  const samples = cases.map(() => [] as number[])
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + round) % cases.length
      samples[i].push(await time(cases[i], minCpuMs))
    }
  }
  return samples.map((values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)])
}

export function format(ns: number): string {
  if (ns < 1e3) return `${ns.toFixed(1)} ns`
  if (ns < 1e6) return `${(ns / 1e3).toFixed(2)} µs`
  if (ns < 1e9) return `${(ns / 1e6).toFixed(2)} ms`
  return `${(ns / 1e9).toFixed(2)} s`
}

export function printTable(title: string, rows: Row[]): void {
  console.log(`\n## ${title}\n`)
  console.log('| case | time per op | ratio |')
  console.log('| --- | ---: | ---: |')
  for (const row of rows) console.log(`| ${row.name} | ${format(row.avgNs)} | ${row.ratio ?? ''} |`)
}

/** True when this module is the process entry point (so bench files run alone or from bench/index.ts). */
export function isMain(url: string): boolean {
  return process.argv[1] !== undefined && url === pathToFileURL(resolve(process.argv[1])).href
}

/**
 * The built package (`dist/`), typed as the sources. Per-call benchmarks measure what users run:
 * tsx compiles sources with esbuild's keepNames, which adds a defineProperty to every closure.
 */
export async function loadBuilt(): Promise<typeof import('../src/index.js')> {
  const url = new URL('../dist/index.js', import.meta.url).href
  return (await import(url)) as typeof import('../src/index.js')
}

/** The built `toolgate/code-mode` subpath. */
export async function loadBuiltCodeMode(): Promise<typeof import('../src/code-mode/index.js')> {
  const url = new URL('../dist/code-mode/index.js', import.meta.url).href
  return (await import(url)) as typeof import('../src/code-mode/index.js')
}

/** The journal and store benches' one tool: `add` of two integers, from the built package. */
export async function addTool(): Promise<import('../src/index.js').ToolDefinition> {
  const { defineTool } = await loadBuilt()
  return defineTool({
    name: 'add',
    description: 'Add two integers.',
    parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
    output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
    execute: async ({ a, b }) => a + b,
  })
}
