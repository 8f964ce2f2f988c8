// Issue 40, item 2 (R-EXEC-4): a resume that claimed a decision and then did not finish the
// program gives its claim back, so the program is not left waiting forever. A run that throws
// releases its claim and the next look resumes the program again from its last kept log (three
// failed runs end the program with the failure); a stop (SIGTERM, the gateway draining) that
// interrupts a resume seals nothing as the program's result and gives the claim back, so a keeper
// started later over the same store finishes the program. Real keepers over a real file store.
import { afterEach, describe, expect, it } from 'vitest'
import type {
  ApprovalRequest,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../../src/contract/execution.js'
import type { Store } from '../../src/journal/store.js'
import {
  closeKeeperFixtures,
  done,
  type ExecuteProgram,
  keeperOver,
  resultOf,
  runCodeInput,
  stopKeepers,
  tempFileStore,
  until,
} from './keeper-fixture.js'

afterEach(closeKeeperFixtures)

const KEY = new TextEncoder().encode('program-keeper-claim-key-0123456789')

const input = runCodeInput('await tools.guarded({ n: 2 })', 'b')
const b: ApprovalRequest = {
  callId: 'p1:code:2',
  rootCallId: 'p1',
  parentCallId: 'p1',
  agentId: null,
  toolName: 'guarded',
  arguments: { n: 2 },
  reason: null,
}

/** A program that waits on B until B is decided; once decided, `resumed` runs it. */
const program =
  (resumed: (input: ToolExecutionInput) => Promise<ToolExecutionResult>): ExecuteProgram =>
  async (input: ToolExecutionInput, o: ToolExecuteOptions) => {
    if (o.program?.decisions[b.callId] === undefined) {
      o.onSuspended?.(b, { waiting: [b], log: { v: 1 } })
      return { isError: true, error: { message: 'suspended', info: { code: 'APPROVAL_SUSPENDED' } } } as never
    }
    return resumed(input)
  }

/** Pause the program in `store` through a keeper running `execute`, decide B: the kept turn's id. */
async function pausedAndDecided(store: Store, execute: ExecuteProgram, said: string[]): Promise<string> {
  const keeper = keeperOver(store, KEY, execute, (line) => void said.push(line))
  const client = new AbortController()
  const waiting = keeper.run(input(client.signal), {}, (o) => execute(input(client.signal), o))
  const { turnId } = await until(async () => (await store.pendingCalls())[0], 'the kept turn')
  // The client goes: the program waits in the store.
  client.abort()
  await waiting
  expect(await store.decide(turnId, b.callId, { kind: 'allowed-once', decidedBy: 'operator' })).toEqual({
    applied: true,
  })
  return turnId
}

describe('a resume that did not finish gives its claim back (issue 40, item 2)', () => {
  it('a run that throws releases its claim; the next look resumes the program and it ends', async () => {
    const store = tempFileStore('keeper-claim')
    const said: string[] = []
    let runs = 0
    const turnId = await pausedAndDecided(
      store,
      program(async () => {
        runs++
        if (runs === 1) throw new Error('the store went away mid-run')
        return done('b ran, the program ended')
      }),
      said,
    )
    expect(await resultOf(store, turnId)).toMatchObject({ isError: false, value: 'b ran, the program ended' })
    expect(runs).toBe(2)
    expect(said.join('\n')).toMatch(/could not resume program turn .*the store went away mid-run/)
  })

  it('a run that keeps throwing ends the program with the failure after three runs', async () => {
    const store = tempFileStore('keeper-claim')
    let runs = 0
    const turnId = await pausedAndDecided(
      store,
      program(async () => {
        runs++
        throw new Error('broken for good')
      }),
      [],
    )
    const result = await resultOf(store, turnId)
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'PROGRAM_RESUME_FAILED' } } })
    expect(JSON.stringify(result)).toMatch(/broken for good/)
    expect(runs).toBe(3)
  })

  it('a stop during a resume seals nothing and gives the claim back; a later keeper finishes the program', async () => {
    const store = tempFileStore('keeper-claim')
    const said: string[] = []
    let started = false
    // The first keeper's run of B lasts until the keeper stops, and then answers as a cancelled call does.
    const interrupted = program(
      (running) =>
        new Promise((resolve) => {
          started = true
          running.signal?.addEventListener('abort', () =>
            resolve({ isError: true, error: { message: 'cancelled', info: { code: 'CANCELLED' } } } as never),
          )
        }),
    )
    const turnId = await pausedAndDecided(store, interrupted, said)
    await until(() => (started ? true : undefined), 'the resume to run B')
    // The keeper that paused the program is the one resuming it: it stops (SIGTERM).
    await stopKeepers()
    const turn = await store.loadTurn(turnId)
    expect(turn?.closed, JSON.stringify(turn?.state)).toBe(false)
    expect(said.join('\n')).toMatch(/interrupted by a stop; its claim is given back/)

    // "After the restart": a new keeper over the same store resumes the program and ends it.
    keeperOver(
      store,
      KEY,
      program(async () => done('b ran after the restart')),
    )
    expect(await resultOf(store, turnId)).toMatchObject({ isError: false, value: 'b ran after the restart' })
  })
})
