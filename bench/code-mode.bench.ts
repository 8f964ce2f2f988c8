import { transform } from 'esbuild'
import { createQuickJsRuntime } from '../src/code-mode/quickjs-runtime.js'
import { createRunCodeDefinition } from '../src/code-mode/run-code.js'
import { renderToolsSdk, type SdkToolEntry } from '../src/code-mode/sdk.js'
import type { JsonValue } from '../src/contract/json-value.js'
import { exec, host } from './code-mode-fixture.js'
import { format, isMain, printTable, type Row, time } from './util.js'

export async function run(): Promise<Row[]> {
  const runtime = createQuickJsRuntime()
  const definition = createRunCodeDefinition(host, { runtime })
  const wide = createRunCodeDefinition(host, { runtime, maxParallelSubCalls: 100 })
  const program = (code: string, def = definition) => {
    const context = exec(code)
    const args = { code, description: 'bench' }
    return () => def.execute(args, context)
  }
  const empty = await time(program('return null'), 500)
  const one = await time(program('return await tools.t({ a: 1 })'), 500)
  const sequential = await time(program('for (let i = 0; i < 100; i++) await tools.t({ i }); return 1'), 500)
  const parallel = await time(
    program('return (await Promise.all(Array.from({ length: 100 }, (_, i) => tools.t({ i })))).length'),
    500,
  )
  const parallelWide = await time(
    program('return (await Promise.all(Array.from({ length: 100 }, (_, i) => tools.t({ i })))).length', wide),
    500,
  )
  const strip = await time(() =>
    transform('async function __main() {\nconst x: number = 1\nreturn x\n}', { loader: 'ts' }),
  )
  const entries: SdkToolEntry[] = Array.from({ length: 100 }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool number ${i}.`,
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'A path.' }, limit: { type: 'integer' } },
      required: ['path'],
      additionalProperties: false,
    } as JsonValue,
    outputSchema: { type: 'object', properties: { lines: { type: 'array', items: { type: 'string' } } } },
  }))
  const sdk = await time(() => renderToolsSdk(entries))
  const perBinding = (sequential - empty) / 100
  const rows: Row[] = [
    { name: 'run_code, empty program (warm)', avgNs: empty, ratio: '1×' },
    { name: 'run_code, one trivial sub-call', avgNs: one, ratio: `${(one / empty).toFixed(2)}×` },
    {
      name: 'run_code, 100 sequential sub-calls',
      avgNs: sequential,
      ratio: `${(sequential / empty).toFixed(2)}× (≈ ${format(perBinding)} per binding)`,
    },
    {
      name: 'run_code, 100 parallel sub-calls (max 8 in flight)',
      avgNs: parallel,
      ratio: `${(parallel / empty).toFixed(2)}×`,
    },
    {
      name: 'run_code, 100 parallel sub-calls (max 100 in flight)',
      avgNs: parallelWide,
      ratio: `${(parallelWide / empty).toFixed(2)}×`,
    },
    { name: 'esbuild transform of a tiny program (part of every run)', avgNs: strip },
    { name: 'renderToolsSdk, 100 tools', avgNs: sdk },
  ]
  printTable('Code Mode (run_code)', rows)
  return rows
}

if (isMain(import.meta.url)) await run()
