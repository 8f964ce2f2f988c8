// Issue 40, item 2 (R-EXEC-4, R-CODE-2, across instances): a kept program's resume holds its turn's
// lease, so a resume whose instance dies (here: its keeper's store stops answering, as a killed or
// frozen process's does) is taken over by another keeper once the lease expired, from the log the
// resume saved; and a vacant named program whose claimant answered PROGRAM_RESUME_FAILED can be
// claimed again. Real keepers over a real file store; each program is a stand-in for Code Mode that
// reports the log it would (`onProgramLog`) and records what each run was handed.
import { afterEach, describe, expect, it } from 'vitest'
import type {
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../../src/contract/execution.js'
import type { JsonValue } from '../../src/contract/json-value.js'
import {
  blocked,
  closeKeeperFixtures,
  done,
  type ExecuteProgram,
  freezable,
  keeperOver,
  resultOf,
  runCodeInput,
  tempFileStore,
  until,
} from './keeper-fixture.js'

afterEach(closeKeeperFixtures)

const KEY = new TextEncoder().encode('resume-lease-test-key-0123456789')
/** Short, so a takeover comes within a second; renewed every third of it. */
const LEASE_MS = 450

const CODE = 'const [b1, b2] = await Promise.all([tools.guarded({ n: 2 }), tools.guarded({ n: 3 })])'
const input = runCodeInput(CODE, 'a, then b1 and b2 asked together, then c')
const request = (n: number): ApprovalRequest => ({
  callId: `p1:code:${n}`,
  rootCallId: 'p1',
  parentCallId: 'p1',
  agentId: null,
  toolName: 'guarded',
  arguments: { n },
  reason: null,
})
const [b1, b2] = [request(2), request(3)]

/** Log entries shaped as Code Mode's: A finished; then each of B1, B2 as given. */
const entry = (n: number, state: 'waiting' | 'finished' | 'running', order = n - 1): JsonValue => ({
  name: n === 1 ? 'step' : 'guarded',
  args: { n },
  draws: [],
  ...(state === 'waiting' ? { waiting: true } : {}),
  ...(state === 'finished' ? { outcome: { ok: true, value: `${n} done` }, order } : {}),
})
const logOf = (...calls: JsonValue[]): JsonValue => ({ v: 1, program: 'digest', calls })
const PAUSED = logOf(entry(1, 'finished'), entry(2, 'waiting'), entry(3, 'waiting'))

/** What one resume was handed: its log and decisions. */
type Handed = { log: JsonValue; decisions: Record<string, ApprovalOutcome> }

/**
 * The program: paused on B1 and B2 until they are decided; a resume records what it was handed and
 * runs `resumed`.
 */
const program =
  (handed: Handed[], resumed: (o: ToolExecuteOptions, input: ToolExecutionInput) => Promise<ToolExecutionResult>) =>
  async (runInput: ToolExecutionInput, o: ToolExecuteOptions): Promise<ToolExecutionResult> => {
    if (o.program === undefined) {
      o.onSuspended?.(b1, { waiting: [b1, b2], log: PAUSED })
      return { isError: true, error: { message: 'suspended', info: { code: 'APPROVAL_SUSPENDED' } } } as never
    }
    handed.push({ log: o.program.log, decisions: { ...o.program.decisions } })
    return resumed(o, runInput)
  }

/**
 * Keeper 1 pauses the program, both sub-calls are decided, and keeper 1 resumes it: it reports
 * `progress` as the log so far, then runs on until stopped. Keeper 2 then starts beside it; keeper 1
 * renews its lease past a whole lease length and keeper 2 runs nothing. Then keeper 1 freezes.
 */
async function frozenMidResume(progress: JsonValue) {
  const store = tempFileStore('resume-lease')
  const one = freezable(store)
  const handed: Handed[] = []
  let reported = false
  const first = program(handed, async (o, runInput) => {
    await o.onProgramLog?.(progress)
    reported = true
    return blocked(runInput)
  })
  const k1 = keeperOver(one.store, KEY, first, () => {}, LEASE_MS)
  const client = new AbortController()
  const waiting = k1.run(input(client.signal), {}, (o) => first(input(client.signal), o))
  const { turnId } = await until(async () => (await store.pendingCalls())[0], 'the kept turn')
  client.abort()
  await waiting
  const allowed: ApprovalOutcome = { kind: 'allowed-once', decidedBy: 'operator' }
  for (const r of [b1, b2]) expect(await store.decide(turnId, r.callId, allowed)).toEqual({ applied: true })
  await until(() => (reported ? true : undefined), 'keeper 1 to resume the program and report its progress')

  const said: string[] = []
  const k2 = keeperOver(
    store,
    KEY,
    program(handed, async () => done('ended on keeper 2')),
    (line) => void said.push(line),
    LEASE_MS,
  )
  // A live lease is never taken: keeper 1 renews it for more than a lease length, keeper 2 looks and leaves it.
  const renewed = one.renewals()
  await until(
    () =>
      one.renewals() >= renewed + 4 && said.some((line) => line.includes('another instance holds its lease'))
        ? true
        : undefined,
    'keeper 1 to renew its lease past a lease length while keeper 2 looks',
  )
  expect(handed).toHaveLength(1)
  const saved = (await store.loadTurn(turnId))?.state as { program: { log: JsonValue; waiting: unknown[] } }
  one.freeze()
  return { store, turnId, handed, said, saved, k2 }
}

describe('a resume holds its turn lease and is taken over when its instance dies (issue 40, item 2)', () => {
  it('B1 finished, B2 in flight: the taker gets the saved log with B2 still waiting, and both decisions', async () => {
    const { store, turnId, handed, said, saved } = await frozenMidResume(
      logOf(entry(1, 'finished'), entry(2, 'finished', 1), entry(3, 'running')),
    )
    // Saved as the paused turn (B1 and B2 still listed) with the longer log; B2 keeps its mark.
    expect(saved.program.waiting).toHaveLength(2)
    const expected = logOf(entry(1, 'finished'), entry(2, 'finished', 1), entry(3, 'waiting'))
    expect(saved.program.log).toEqual(expected)

    expect(await resultOf(store, turnId)).toMatchObject({ isError: false, value: 'ended on keeper 2' })
    expect(handed).toHaveLength(2)
    expect(handed[1].log).toEqual(expected)
    expect(Object.keys(handed[1].decisions).sort()).toEqual([b1.callId, b2.callId])
    expect(said.join('\n')).toContain(
      `program turn ${turnId}: the resume of its decision for sub-call ${b1.callId} stopped renewing its lease`,
    )
    expect(said.join('\n')).toContain('this instance takes the resume over (2 finished sub-calls answer from its log)')
  })

  it('B1 and B2 finished, C in flight: the taker gets the saved log and no decision (they were spent)', async () => {
    const progress = logOf(entry(1, 'finished'), entry(2, 'finished', 1), entry(3, 'finished', 2), {
      name: 'step',
      args: { n: 4 },
      draws: [],
    })
    const { store, turnId, handed, saved } = await frozenMidResume(progress)
    expect(saved.program.log).toEqual(progress)
    expect(await resultOf(store, turnId)).toMatchObject({ isError: false, value: 'ended on keeper 2' })
    expect(handed).toHaveLength(2)
    expect(handed[1]).toEqual({ log: progress, decisions: {} })
  })
})

describe('a vacant named program whose claimant could not take its lease (issue 40, item 2)', {
  timeout: 120_000,
}, () => {
  /** The program's own call, as the policy asks about it. */
  const own: ApprovalRequest = { ...request(0), callId: 'p1', parentCallId: null, toolName: 'run_code' }
  const answering = (kind: 'cancelled' | 'allowed-once'): ApprovalService => ({
    request: async () => (kind === 'cancelled' ? { kind } : { kind, decidedBy: 'client' }),
  })
  /** The program asks about its own call first (as a policy asking about run_code does), then runs. */
  const dispatch =
    (ran: string[], signal: AbortSignal) =>
    async (o: ToolExecuteOptions): Promise<ToolExecutionResult> => {
      const outcome = await o.approval?.request(own, { signal, agent: undefined } as never)
      if (outcome?.kind !== 'allowed-once')
        return { isError: true, error: { message: 'asked', info: { code: 'CANCELLED' } } } as never
      ran.push('program')
      return done('the program ran')
    }
  const call = { programId: 'vacant-again' }

  it('answers PROGRAM_RESUME_FAILED having claimed nothing (the lease comes first), and the next call with the name claims and runs it once', async () => {
    const store = tempFileStore('resume-lease')
    let broken = false
    // Keeper 2's store refuses leases while `broken` (a store error in each attempt).
    const flaky = new Proxy(store, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) =>
          prop === 'leaseTurn' && broken
            ? Promise.reject(new Error('the store is unavailable'))
            : value.apply(target, args)
      },
    })
    const ran: string[] = []
    const never: ExecuteProgram = async () => {
      throw new Error('nothing is resumed here')
    }
    const k1 = keeperOver(store, KEY, never, () => {}, LEASE_MS)
    const k2 = keeperOver(flaky, KEY, never, () => {}, LEASE_MS)
    const signal = new AbortController().signal

    // Round 1 on keeper 1: its own call is asked and not answered yet: the name is left vacant.
    const first = await k1.run(input(signal), { approval: answering('cancelled') }, dispatch(ran, signal), call)
    expect(first).toMatchObject({ isError: true })
    expect(ran).toEqual([])

    // The approved retry on keeper 2 claims the vacant turn but cannot take its lease.
    broken = true
    const failed = await k2.run(input(signal), { approval: answering('allowed-once') }, dispatch(ran, signal), call)
    expect(failed).toMatchObject({ isError: true, error: { info: { code: 'PROGRAM_RESUME_FAILED' } } })
    expect(ran).toEqual([])

    // Called again, on both keepers at once: exactly one claims the turn and runs the program; both get its result.
    broken = false
    const bounded = AbortSignal.timeout(60_000)
    const again = await Promise.all(
      [k1, k2].map((k) => k.run(input(bounded), { approval: answering('allowed-once') }, dispatch(ran, bounded), call)),
    )
    expect(ran).toEqual(['program'])
    for (const result of again) expect(result).toMatchObject({ isError: false, value: 'the program ran' })
  })
})
