// R-PERF / R-CODE: run_code latency (warm) for an empty program, per-binding overhead of a trivial
// sub-call against a fake host that resolves immediately, 100 sub-calls in parallel, and the
// pieces a run is made of (type stripping, SDK rendering).
import type { Context } from 'cordis'
import { transform } from 'esbuild'
import { createQuickJsRuntime } from '../src/code-mode/quickjs-runtime.js'
import { type CodeModeHost, createRunCodeDefinition } from '../src/code-mode/run-code.js'
import { renderToolsSdk, type SdkToolEntry } from '../src/code-mode/sdk.js'
import type { ToolExecutionResult, ToolExecutionToken, ToolRunContext } from '../src/contract/execution.js'
import type { JsonValue } from '../src/contract/json-value.js'
import { format, isMain, printTable, type Row, time } from './util.js'

const result: ToolExecutionResult = { isError: false, value: 1, content: [{ type: 'text', text: '1' }] }
const host: CodeModeHost = {
  execute: async () => result,
  executionMode: () => ({ kind: 'parallel' }),
  logDispatch: async () => {},
}

function exec(code: string): ToolRunContext {
  return {
    callId: 'bench',
    rootCallId: 'bench',
    name: 'run_code',
    arguments: { code, description: 'bench' },
    agent: { id: 'bench', ctx: {} as Context },
    token: Symbol('bench') as ToolExecutionToken,
    signal: new AbortController().signal,
    deferContext: () => {},
    concludeTurn: () => {},
    progress: () => {},
  }
}

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
