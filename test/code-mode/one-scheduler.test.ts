// Issue 21 item 5: Code Mode sub-calls and executeBatch obey one scheduling rule (R-SCHED-1, R-CODE-2).
// The same batch goes through both paths; the order of starts and ends, and so the overlap, must match.
import type { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/constants.js'
import { type CodeModeHost, createRunCodeDefinition } from '../../src/code-mode/run-code.js'
import type {
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolExecutionToken,
  ToolRunContext,
} from '../../src/contract/execution.js'
import { DEFAULT_MAX_PARALLEL, executeBatch } from '../../src/scheduling/execute-batch.js'
import { failOnUnhandledRejections, makeRuntime, RUNTIME_KINDS, trackRun } from './runtimes.js'

failOnUnhandledRejections()

/** One call of the shared batch: its tool name and how many event-loop turns it takes. */
interface Step {
  readonly name: string
  readonly turns: number
}

// `p*` are parallel; `w*` exclusive; `broken` has a classifier that throws and `odd` one that answers
// an unknown kind: both must fail closed to exclusive on either path.
const BATCH: readonly Step[] = [
  { name: 'p1', turns: 3 },
  { name: 'p2', turns: 1 },
  { name: 'p3', turns: 2 },
  { name: 'p4', turns: 1 },
  { name: 'w1', turns: 1 },
  { name: 'p5', turns: 2 },
  { name: 'p6', turns: 1 },
  { name: 'broken', turns: 1 },
  { name: 'p7', turns: 1 },
  { name: 'odd', turns: 2 },
  { name: 'w2', turns: 1 },
  { name: 'p8', turns: 1 },
  { name: 'p9', turns: 1 },
]

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * The tools both paths dispatch to. Every call first waits until the whole batch was classified
 * (classification happens when a call is submitted), so the trace cannot depend on how quickly a
 * runtime delivers the program's calls; then it takes its number of event-loop turns.
 */
function recordingTools(batch: readonly Step[]) {
  const trace: string[] = []
  let classified = 0
  let allClassified!: () => void
  const submitted = new Promise<void>((resolve) => {
    allClassified = resolve
  })
  let active = 0
  let maxActive = 0
  const executionMode = (input: ToolExecutionInput): ToolExecutionMode => {
    if (++classified === batch.length) allClassified()
    if (input.name === 'broken') throw new Error('classifier broke')
    if (input.name === 'odd') return { kind: 'sometimes' } as unknown as ToolExecutionMode
    return { kind: input.name.startsWith('p') ? 'parallel' : 'exclusive' }
  }
  const execute = async (input: ToolExecutionInput): Promise<ToolExecutionResult> => {
    trace.push(`start ${input.name}`)
    active++
    maxActive = Math.max(maxActive, active)
    await submitted
    const step = batch.find((candidate) => candidate.name === input.name)
    for (let i = 0; i < (step?.turns ?? 1); i++) await turn()
    active--
    trace.push(`end ${input.name}`)
    return { isError: false, value: input.name, content: [{ type: 'text', text: input.name }] }
  }
  return { trace, executionMode, execute, maxActive: () => maxActive }
}

async function throughBatch(batch: readonly Step[], maxParallel?: number) {
  const tools = recordingTools(batch)
  const calls = batch.map((step, i) => ({
    callId: `c${i}`,
    name: step.name,
    arguments: {},
    signal: new AbortController().signal,
  }))
  const { results } = await executeBatch(tools, calls, maxParallel === undefined ? {} : { maxParallel })
  expect(results.map((entry) => entry.result.isError)).toEqual(batch.map(() => false))
  return tools
}

function runExec(): ToolRunContext {
  return {
    callId: 'outer',
    rootCallId: 'outer',
    parentCallId: null,
    name: RUN_CODE_NAME,
    arguments: {},
    agent: { id: 'agent', ctx: {} as Context },
    token: Symbol('outer') as ToolExecutionToken,
    signal: new AbortController().signal,
    progress: () => {},
    deferContext: () => {},
    concludeTurn: () => {},
  }
}

describe.each(RUNTIME_KINDS)('one scheduler for batches and Code Mode sub-calls (%s runtime)', (kind) => {
  const sandbox = makeRuntime(kind, { cpuTimeMs: 5_000 })

  async function throughRunCode(batch: readonly Step[], maxParallelSubCalls?: number) {
    const tools = recordingTools(batch)
    const host: CodeModeHost = {
      executionMode: tools.executionMode,
      execute: tools.execute,
      logDispatch: async () => {},
    }
    const options = maxParallelSubCalls === undefined ? {} : { maxParallelSubCalls }
    const definition = createRunCodeDefinition(host, { runtime: sandbox, ...options })
    const code = `return await Promise.all([${batch.map((step) => `tools.${step.name}({})`).join(', ')}])`
    const clean = trackRun(kind, sandbox)
    try {
      const value = await definition.execute({ code, description: 'the shared batch' }, runExec())
      expect(value).toEqual({ result: batch.map((step) => step.name), logs: [] })
    } finally {
      clean()
    }
    return tools
  }

  it('R-SCHED-1 R-CODE-2 the same batch gives the same starts, ends and overlap on both paths', async () => {
    const batch = await throughBatch(BATCH, 2)
    const code = await throughRunCode(BATCH, 2)
    expect(code.trace).toEqual(batch.trace)
    // The rule itself, spelled out: a rolling pool of 2 in call order, exclusive calls (including
    // the ones whose classifier threw or answered nonsense) alone between barriers.
    expect(batch.trace).toEqual([
      'start p1',
      'start p2',
      'end p2',
      'start p3',
      'end p1',
      'start p4',
      'end p3',
      'end p4',
      'start w1',
      'end w1',
      'start p5',
      'start p6',
      'end p6',
      'end p5',
      'start broken',
      'end broken',
      'start p7',
      'end p7',
      'start odd',
      'end odd',
      'start w2',
      'end w2',
      'start p8',
      'start p9',
      'end p8',
      'end p9',
    ])
    expect(batch.maxActive()).toBe(2)
    expect(code.maxActive()).toBe(2)
  })

  it('R-SCHED-1 R-CODE-2 both paths share one default pool size', async () => {
    const wide = Array.from({ length: 12 }, (_, i) => ({ name: `p${i + 1}`, turns: 1 + (i % 3) }))
    const batch = await throughBatch(wide)
    const code = await throughRunCode(wide)
    expect(code.trace).toEqual(batch.trace)
    expect(batch.trace.slice(0, DEFAULT_MAX_PARALLEL + 1)).toEqual([
      ...wide.slice(0, DEFAULT_MAX_PARALLEL).map((step) => `start ${step.name}`),
      'end p1',
    ])
    expect(batch.maxActive()).toBe(DEFAULT_MAX_PARALLEL)
    expect(code.maxActive()).toBe(DEFAULT_MAX_PARALLEL)
  })
})
