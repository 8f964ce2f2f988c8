// R-SCHED-2 with R-CODE: a plain call's deadline starts after its approval; a run_code program's
// deadline stands still while any of its sub-calls waits for an approval answer, and runs again
// (with what was left) once none does. The sandbox's CPU budget is a separate limit, unaffected.
import { describe, it } from 'vitest'
import {
  type ApprovalOutcome,
  type ApprovalRequest,
  createAgent,
  createToolRuntime,
  defineTool,
  type ToolExecutionResult,
} from '../../src/index.js'

/** The runtime's default deadline, which run_code (declaring none) gets: room for a loaded machine to reach the first ask. */
const DEADLINE_MS = 3_000
/** How long a slow person takes to answer: well past the whole deadline. */
const SLOW_ANSWER_MS = 2 * DEADLINE_MS

type Answerer = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalOutcome>

function answerAfter(ms: number, signal: AbortSignal, outcome: ApprovalOutcome): Promise<ApprovalOutcome> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(outcome), ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve({ kind: 'cancelled' })
    })
  })
}

async function setup(answer: Answerer) {
  const runtime = await createToolRuntime({
    approval: (request, { signal }) => answer(request, signal),
    defaultTimeoutMs: DEADLINE_MS,
  })
  runtime.tools.register(
    defineTool({
      name: 'poke',
      description: 'Needs a yes.',
      parameters: { n: { type: 'integer' } },
      output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
      needsApproval: true,
      isConcurrencySafe: () => true,
      execute: async ({ n }) => `poked ${n ?? 0}`,
    }),
  )
  runtime.tools.register(
    defineTool({
      name: 'hang',
      description: 'Waits until cancelled.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
      // Its own deadline, far beyond the program's: the program's deadline is what ends it.
      timeoutMs: 120_000,
      execute: (_args, exec) =>
        new Promise<string>((_resolve, reject) => {
          exec.signal.addEventListener('abort', () => reject(exec.signal.reason), { once: true })
        }),
    }),
  )
  const agent = createAgent(runtime.ctx, { id: 'coder' })
  agent.ctx.tools.presentAs('both')
  let n = 0
  const runCode = (code: string): Promise<ToolExecutionResult> =>
    runtime.tools.execute({
      callId: `c${++n}`,
      name: 'run_code',
      arguments: { code, description: 'Test program' },
      agent,
      signal: AbortSignal.timeout(60_000),
    })
  // Warm the sandbox up first, so the time before the first ask is small beside the deadline.
  await runCode('return 1')
  return { runtime, runCode }
}

// The cases run at once, each with its own runtime: each spends its seconds waiting out deadlines and
// slow answers on timers, which do not depend on one another.
describe.concurrent('R-SCHED-2 a run_code deadline does not count the time its sub-calls wait for approval', () => {
  it('a sub-call approved after longer than the whole deadline still lets the program complete', async ({ expect }) => {
    const { runtime, runCode } = await setup((_request, signal) =>
      answerAfter(SLOW_ANSWER_MS, signal, { kind: 'allowed-once' }),
    )
    await using _runtime = runtime
    const result = await runCode('return await tools.poke({ n: 1 })')
    expect(result).toMatchObject({ isError: false, value: { result: 'poked 1' } })
  }, 30_000)

  it('a program that waits without an approval pending still times out at its deadline', async ({ expect }) => {
    const { runtime, runCode } = await setup((_request, signal) =>
      answerAfter(SLOW_ANSWER_MS, signal, { kind: 'allowed-once' }),
    )
    await using _runtime = runtime
    const timeout = { isError: true, error: { info: { code: 'TOOL_TIMEOUT', timeoutMs: DEADLINE_MS } } }
    // No ask at all: the deadline runs as before.
    expect(await runCode('return await tools.hang({})')).toMatchObject(timeout)
    // After a slow yes, the deadline runs again: a program that then waits still ends at it.
    expect(await runCode('await tools.poke({ n: 1 }); return await tools.hang({})')).toMatchObject(timeout)
  }, 30_000)

  it('overlapping asks of parallel sub-calls pause the deadline once, until the last is answered', async ({
    expect,
  }) => {
    const asked: number[] = []
    let secondAsked: () => void = () => {}
    const bothAsked = new Promise<void>((resolve) => {
      secondAsked = resolve
    })
    const { runtime, runCode } = await setup(async (request, signal) => {
      const n = (request.arguments as { n?: number }).n
      if (n === undefined) return { kind: 'allowed-once' }
      asked.push(n)
      if (asked.length === 2) secondAsked()
      if (n === 1) {
        // The first answer comes while the second ask is still open: the deadline must stay paused.
        await Promise.race([bothAsked, new Promise((resolve) => signal.addEventListener('abort', resolve))])
        return signal.aborted ? { kind: 'cancelled' } : { kind: 'allowed-once' }
      }
      return answerAfter(SLOW_ANSWER_MS, signal, { kind: 'allowed-once' })
    })
    await using _runtime = runtime
    const result = await runCode('return await Promise.all([tools.poke({ n: 1 }), tools.poke({ n: 2 })])')
    expect(asked.sort()).toEqual([1, 2])
    expect(result).toMatchObject({ isError: false, value: { result: ['poked 1', 'poked 2'] } })
  }, 30_000)
})
