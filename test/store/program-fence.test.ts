// Issue 40, item 2 (R-EXEC-12, R-CODE-3): a named run_code program's run that lost its lease is
// cancelled. Two program keepers (two gateway instances) over one file store, each with its own
// Code Mode runtime whose `hold` tool waits until the test releases it or its signal aborts. A
// runs the program; its lease renewals then stall (as a process that stops for a while), a client
// waits for the program by name on B, and B takes the expired lease over and re-runs the program
// from the log A saved. When A learns that its lease is another's, by a refused renewal or by a
// refused write behind the lease fence (`saveLeasedTurn`), its run is aborted: the sub-call in
// flight there sees its signal abort, no later sub-call runs there, nothing of A lands in the turn,
// and A's client gets the taker's result. Turns kept in the process's memory (stdio without a
// store) have no lease: nobody else can take the run, so a long run there is never cancelled.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { afterEach, describe, expect, it } from 'vitest'
import type { ToolExecutionInput, ToolExecutionResult } from '../../src/contract/execution.js'
import { memoryTurns } from '../../src/gateway/memory-turns.js'
import {
  createProgramKeeper,
  namedProgramTurnId,
  type ProgramKeeper,
  type ProgramTurns,
} from '../../src/gateway/program-keeper.js'
import { createAgent, defineTool, ToolRuntime } from '../../src/index.js'
import { createFileStore } from '../../src/journal/file-store.js'
import type { TurnLease } from '../../src/journal/store.js'
import { until as waitUntil } from './until.js'

const KEY = new TextEncoder().encode('program-fence-test-key-0123456789')
/** Short, so the takeover comes soon after A stalls; B waits only once A stalled, so no load hands it over sooner. */
const LEASE_MS = 600
const NAME = 'fenced-report'
const CODE = [
  'const a = await tools.step({ n: 1 })',
  'const h = await tools.hold({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, h, c }',
].join('\n')

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
const until = <T>(check: () => T | undefined | Promise<T | undefined>, what: string, context: () => string) =>
  waitUntil(check, what, { everyMs: 10, timeoutMs: 60_000, context })

/** A promise and its resolver. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {}
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}

/** One gateway instance: a Code Mode runtime with `step` and `hold`, and a keeper over its own store object. */
async function instance(label: string, store: ProgramTurns) {
  const events: string[] = []
  const said: string[] = []
  const release = deferred()
  const ctx = new Context()
  const fiber = ctx.plugin(ToolRuntime, { mode: 'code', codeMode: { runtime: 'inline' } })
  await fiber
  const agent = createAgent(ctx, { id: `agent-${label}` })
  const render = (_args: unknown, value: string) => [{ type: 'text' as const, text: value }]
  ctx.tools.register(
    defineTool({
      name: 'step',
      description: 'A step.',
      parameters: { n: { type: 'integer', required: true } },
      output: { schema: { type: 'string' }, render },
      execute: async ({ n }) => {
        events.push(`step:${n}`)
        return `step ${n} done`
      },
    }),
  )
  ctx.tools.register(
    defineTool({
      name: 'hold',
      description: 'Holds until released, or until its call is cancelled.',
      parameters: { n: { type: 'integer', required: true } },
      output: { schema: { type: 'string' }, render },
      execute: ({ n }, exec) => {
        events.push(`hold:${n} started`)
        return new Promise<string>((resolve, reject) => {
          exec.signal.addEventListener(
            'abort',
            () => {
              events.push(`hold:${n} saw the abort`)
              reject(exec.signal.reason)
            },
            { once: true },
          )
          void release.promise.then(() => {
            if (exec.signal.aborted) return
            events.push(`hold:${n} released`)
            resolve(`hold ${n} released`)
          })
        })
      },
    }),
  )
  const keeper: ProgramKeeper = createProgramKeeper({
    store,
    key: KEY,
    execute: (input, options) => ctx.tools.execute(input, options),
    agent,
    log: { info: (line) => void said.push(line), debug: () => {} },
    flush: async () => {},
    pollMs: 20,
    leaseMs: LEASE_MS,
  })
  cleanups.push(
    () => fiber.dispose(),
    () => keeper.close(),
    () => release.resolve(),
  )
  /** A client's call of the named program on this instance. */
  const call = (): Promise<ToolExecutionResult> => {
    const client = new AbortController()
    cleanups.push(() => client.abort())
    const input: ToolExecutionInput = {
      callId: `call-${label}`,
      name: 'run_code',
      arguments: { code: CODE, description: 'a step, a hold, a step' },
      agent,
      signal: client.signal,
    }
    return keeper.run(
      input,
      {},
      (options, signal) => ctx.tools.execute({ ...input, ...(signal ? { signal } : {}) }, options),
      {
        programId: NAME,
      },
    )
  }
  return { events, said, release, call }
}

/** Two instances over one file store; A's lease renewals can be stalled (they wait, then go on). */
async function twoInstances() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-program-fence-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const journal = join(dir, 'journal.jsonl')
  const storeA = createFileStore({ journal })
  const renew = storeA.leaseTurn?.bind(storeA) as (id: string, lease: TurnLease) => Promise<boolean>
  let stall: ReturnType<typeof deferred> | undefined
  let stalledRenewals = 0
  storeA.leaseTurn = async (id, lease) => {
    if (stall !== undefined) {
      stalledRenewals++
      await stall.promise
    }
    return renew(id, lease)
  }
  cleanups.push(() => stall?.resolve())
  const store = createFileStore({ journal })
  const a = await instance('a', storeA)
  const b = await instance('b', createFileStore({ journal }))
  const context = () =>
    `A did: ${a.events.join(', ')}\nA said:\n${a.said.join('\n')}\nB did: ${b.events.join(', ')}\nB said:\n${b.said.join('\n')}`
  return {
    a,
    b,
    store,
    context,
    stallA: () => {
      stall = deferred()
    },
    resumeA: () => stall?.resolve(),
    stalledRenewals: () => stalledRenewals,
  }
}

/**
 * Two instances: A runs the program to its hold, then A's renewals stall and a client waits for
 * the program on B, which takes it over once A's lease expired and runs it to the hold.
 */
async function takenOverFromA() {
  const two = await twoInstances()
  const { a, b, context } = two
  const onA = a.call()
  await until(() => (a.events.includes('hold:2 started') ? true : undefined), 'the program to hold on A', context)
  // A stops renewing (its renewals wait), and a client waits for the program on B.
  two.stallA()
  await until(() => (two.stalledRenewals() > 0 ? true : undefined), 'a renewal of A to stall', context)
  const onB = b.call()
  await until(() => (b.events.includes('hold:2 started') ? true : undefined), 'B to take the program over', context)
  return { ...two, turnId: namedProgramTurnId(undefined, NAME), onA, onB }
}

const programValue = (result: ToolExecutionResult) =>
  result.isError ? result : (result.value as { result: unknown }).result
const TAKEN = `the instance running it stopped renewing its lease; this instance takes the program over (1 finished sub-calls answer from its log)`

describe('a run that lost its lease is cancelled (issue 40, item 2)', { timeout: 120_000 }, () => {
  it('a refused renewal: the sub-call in flight sees the abort, nothing more runs there, its client gets the taker’s result', async () => {
    const { a, b, store, context, resumeA, turnId, onA, onB } = await takenOverFromA()
    expect(b.said.some((line) => line.includes(TAKEN))).toBe(true)
    expect(b.events).toEqual(['hold:2 started'])
    // A goes on: its renewal is refused, and its run is cancelled.
    resumeA()
    await until(
      () => (a.events.includes('hold:2 saw the abort') ? true : undefined),
      "A's hold to see the abort",
      context,
    )
    expect(a.said.some((line) => line.includes('could not renew its lease in time'))).toBe(true)
    b.release.resolve()
    const [resultA, resultB] = await Promise.all([onA, onB])
    expect(programValue(resultB)).toEqual({ a: 'step 1 done', h: 'hold 2 released', c: 'step 3 done' })
    expect(programValue(resultA)).toEqual(programValue(resultB))
    // The rest ran on B only; A ran its first step and the hold it was cancelled in, nothing after.
    a.release.resolve()
    expect(a.events).toEqual(['step:1', 'hold:2 started', 'hold:2 saw the abort'])
    expect(b.events).toEqual(['hold:2 started', 'hold:2 released', 'step:3'])
    expect(await store.loadTurn(turnId)).toMatchObject({ closed: true, state: { result: resultB } })
  })

  it('a refused write behind the lease: no later sub-call runs there, nothing of it lands in the turn', async () => {
    const { a, b, store, context, resumeA, turnId, onA, onB } = await takenOverFromA()
    // A, its renewals still stalled, never heard it lost the lease: its hold ends, and its run
    // saves that progress behind the lease. The write is refused, and the run is cancelled there.
    const before = await store.loadTurn(turnId)
    a.release.resolve()
    await until(
      () => (a.said.some((line) => line.includes('a write of this run was refused')) ? true : undefined),
      "A's write to be refused",
      context,
    )
    // The turn is as it was: A's progress (its hold's outcome) did not land.
    expect((await store.loadTurn(turnId))?.state).toEqual(before?.state)
    b.release.resolve()
    const resultB = await onB
    expect(programValue(resultB)).toEqual({ a: 'step 1 done', h: 'hold 2 released', c: 'step 3 done' })
    // A's process goes on (its stalled renewals are refused); its client gets B's result.
    resumeA()
    const resultA = await onA
    expect(programValue(resultA)).toEqual(programValue(resultB))
    expect(a.events).toEqual(['step:1', 'hold:2 started', 'hold:2 released'])
    expect(b.events).toEqual(['hold:2 started', 'hold:2 released', 'step:3'])
    expect(await store.loadTurn(turnId)).toMatchObject({ closed: true, state: { result: resultB } })
  })

  it("turns in the process's memory (no lease): a run far longer than the lease is never cancelled", async () => {
    const single = await instance('m', memoryTurns())
    const onM = single.call()
    const context = () => `did: ${single.events.join(', ')}\nsaid:\n${single.said.join('\n')}`
    await until(() => (single.events.includes('hold:2 started') ? true : undefined), 'the program to hold', context)
    // Several lease lengths pass while the hold runs (waiting for the clock, not racing it).
    const from = performance.now()
    await until(() => (performance.now() - from > 4 * LEASE_MS ? true : undefined), 'four lease lengths', context)
    single.release.resolve()
    expect(programValue(await onM)).toEqual({ a: 'step 1 done', h: 'hold 2 released', c: 'step 3 done' })
    expect(single.events).toEqual(['step:1', 'hold:2 started', 'hold:2 released', 'step:3'])
    expect(single.said.join('\n')).not.toContain('took the program over')
  })
})
