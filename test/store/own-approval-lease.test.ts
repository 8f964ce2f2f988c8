// Issue 40, item 2 (R-EXEC-4: `ask` runs only on `allowed-once`; R-CODE-2; across instances): the
// run_code call's own approval survives its instance, and a vacant named program whose claimant
// died before it saved anything can be claimed again. Real keepers over one real file store; a
// keeper "dies" by its store no longer answering (a frozen or killed process, as the store sees it).
// The program is a stand-in for Code Mode and the pipeline: its own call's ask takes the host's
// `decision` first (as the pipeline does), else the approval service; it runs A, reports A's log
// (`onProgramLog`), then ends, or on the first keeper holds until stopped.
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
import { namedProgramTurnId } from '../../src/gateway/program-keeper.js'
import {
  blocked,
  closeKeeperFixtures,
  done,
  type ExecuteProgram,
  freezable,
  keeperOver,
  runCodeInput,
  tempFileStore,
  until,
} from './keeper-fixture.js'

afterEach(closeKeeperFixtures)

const KEY = new TextEncoder().encode('own-approval-lease-test-key-0123')
/** Short, so a takeover comes within a second; renewed every third of it. */
const LEASE_MS = 450

const CODE = "const a = await tools.step({ n: 1 }); return a + ', then the end'"
const input = runCodeInput(CODE, 'A, then the end')
/** The program's own call, as a policy asking about run_code puts it. */
const OWN: ApprovalRequest = {
  callId: 'p1',
  rootCallId: 'p1',
  parentCallId: null,
  agentId: null,
  toolName: 'run_code',
  arguments: { code: CODE, description: 'A, then the end' },
  reason: null,
}
const AFTER_A: JsonValue = {
  v: 1,
  program: 'digest',
  calls: [{ name: 'step', args: { n: 1 }, draws: [], outcome: { ok: true, value: 'A done' }, order: 0 }],
}

/** What the stand-in saw: who answered its own ask (`service`, or the handed `decision`), and every A that ran. */
type Seen = { asked: string[]; decisions: ApprovalOutcome[]; ran: string[] }

/** The program: its own call's ask, then A (from the log when the log has it), then its result. */
const program =
  (seen: Seen, label: string, afterA?: (runInput: ToolExecutionInput) => Promise<ToolExecutionResult>) =>
  async (runInput: ToolExecutionInput, o: ToolExecuteOptions): Promise<ToolExecutionResult> => {
    let own: ApprovalOutcome | undefined
    if (o.decision !== undefined) {
      own = o.decision
      seen.decisions.push(o.decision)
    } else {
      seen.asked.push(label)
      own = await o.approval?.request(OWN, { signal: runInput.signal, agent: undefined } as never)
    }
    if (own?.kind !== 'allowed-once')
      return { isError: true, error: { message: 'run_code was not approved', info: { code: 'DENIED' } } } as never
    const fromLog = (o.program?.log as { calls?: unknown[] } | undefined)?.calls?.length === 1
    if (!fromLog) {
      seen.ran.push(`A on ${label}`)
      await o.onProgramLog?.(AFTER_A)
    }
    if (afterA !== undefined) return afterA(runInput)
    return done('A done, then the end')
  }

const answering = (kind: ApprovalOutcome['kind'], asked?: string[]): ApprovalService => ({
  request: async () => {
    asked?.push(kind)
    return kind === 'allowed-once' ? { kind, decidedBy: 'alice' } : ({ kind } as ApprovalOutcome)
  },
})

/**
 * Keeper 1 runs the named program; its own call is asked and approved by alice; A runs and its log
 * is saved; then keeper 1's store freezes while the program holds.
 */
async function frozenAfterA(name: string) {
  const store = tempFileStore('own-approval')
  const one = freezable(store)
  const seen: Seen = { asked: [], decisions: [], ran: [] }
  const first = program(seen, 'keeper 1', async (runInput) => {
    one.freeze()
    return blocked(runInput)
  })
  const k1 = keeperOver(one.store, KEY, first, () => {}, LEASE_MS)
  const gone = new AbortController()
  const onK1 = k1.run(
    input(gone.signal),
    { approval: answering('allowed-once') },
    (o) => first(input(gone.signal), o),
    {
      programId: name,
    },
  )
  const turnId = namedProgramTurnId(undefined, name)
  const saved = await until(async () => {
    const state = (await store.loadTurn(turnId))?.state as { program?: { log?: JsonValue } } | undefined
    return state?.program?.log === null || state?.program?.log === undefined ? undefined : state
  }, 'A to be saved into the turn')
  return { store, seen, turnId, saved: saved as Record<string, unknown>, stopK1: () => gone.abort(), onK1 }
}

describe("the run_code call's own approval is sealed in the turn, and a taker honours it (issue 40, item 2)", {
  timeout: 120_000,
}, () => {
  it('keeper 1 dies after A: keeper 2 takes over without asking again, A ran once, the result equals an uninterrupted run', async () => {
    // An uninterrupted run of the same program, for the result to compare with.
    const alone: Seen = { asked: [], decisions: [], ran: [] }
    const reference = keeperOver(tempFileStore('own-approval'), KEY, program(alone, 'alone'), () => {}, LEASE_MS)
    const signal = AbortSignal.timeout(60_000)
    const uninterrupted = await reference.run(
      input(signal),
      { approval: answering('allowed-once') },
      (o) => program(alone, 'alone')(input(signal), o),
      { programId: 'reference' },
    )
    expect(uninterrupted).toMatchObject({ isError: false, value: 'A done, then the end' })

    const { store, seen, turnId, saved, stopK1 } = await frozenAfterA('own-approved')
    // The approval is sealed with the call it allowed, before A ran.
    expect(saved.approved).toEqual({ kind: 'allowed-once', decidedBy: 'alice' })
    expect(seen.asked).toEqual(['keeper 1'])

    const said: string[] = []
    const second = program(seen, 'keeper 2')
    const k2 = keeperOver(store, KEY, second, (line) => void said.push(line), LEASE_MS)
    // A client waits for the program by name on keeper 2; nobody there could answer an ask.
    const nobody: string[] = []
    const result = await k2.run(
      input(signal),
      { approval: answering('denied', nobody) },
      (o) => second(input(signal), o),
      { programId: 'own-approved' },
    )
    expect(result).toEqual(uninterrupted)
    expect(said.join('\n')).toContain('this instance takes the program over (1 finished sub-calls answer from its log)')
    // Not asked again: the taker ran the call with the sealed decision; A ran once, on keeper 1.
    expect(seen.asked).toEqual(['keeper 1'])
    expect(nobody).toEqual([])
    expect(seen.decisions).toEqual([{ kind: 'allowed-once', decidedBy: 'alice' }])
    expect(seen.ran).toEqual(['A on keeper 1'])
    expect((await store.loadTurn(turnId))?.closed).toBe(true)
    stopK1()
  })

  it('a tampered approval in the turn grants nothing: the turn does not verify and nothing runs', async () => {
    const { store, seen, turnId, saved, stopK1 } = await frozenAfterA('own-tampered')
    // Forge a broader approval into the saved turn (new arguments), keeping the old seal.
    await store.saveTurn(turnId, {
      ...saved,
      approved: { kind: 'allowed-once', arguments: { code: 'await tools.wipe({})', description: 'x' } },
    } as unknown as JsonValue)
    const said: string[] = []
    const second = program(seen, 'keeper 2')
    const k2 = keeperOver(store, KEY, second, (line) => void said.push(line), LEASE_MS)
    const signal = AbortSignal.timeout(60_000)
    const result = await k2.run(
      input(signal),
      { approval: answering('allowed-once') },
      (o) => second(input(signal), o),
      { programId: 'own-tampered' },
    )
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'PROGRAM_NOT_KEPT' } } })
    expect(seen.decisions).toEqual([])
    expect(seen.ran).toEqual(['A on keeper 1'])
    expect(said.join('\n')).toContain(`program turn ${turnId} is not sealed with this gateway's state key`)
    stopK1()
  })
})

/**
 * Three keepers over one store, each running what `execute` makes for its label (`keeper 1`, …);
 * keeper 2's store can freeze, and keepers 1 and 3 say their info lines into `said`. A call
 * naming `programId`, its turn, and a generous signal.
 */
function threeKeepers(programId: string, execute: (seen: Seen, label: string) => ExecuteProgram) {
  const store = tempFileStore('own-approval')
  const two = freezable(store)
  const seen: Seen = { asked: [], decisions: [], ran: [] }
  const said: string[] = []
  const log = (line: string) => void said.push(line)
  const k1 = keeperOver(store, KEY, execute(seen, 'keeper 1'), log, LEASE_MS)
  const k2 = keeperOver(two.store, KEY, execute(seen, 'keeper 2'), () => {}, LEASE_MS)
  const k3 = keeperOver(store, KEY, execute(seen, 'keeper 3'), log, LEASE_MS)
  const call = { programId }
  const turnId = namedProgramTurnId(undefined, programId)
  return { store, two, seen, said, k1, k2, k3, call, turnId, signal: AbortSignal.timeout(60_000) }
}

describe('a vacant named program whose claimant died after claiming it is claimed again (issue 40, item 2)', {
  timeout: 120_000,
}, () => {
  it('keeper 2 claims it and freezes before it runs; later calls on keepers 1 and 3 wait while its lease lives, then exactly one runs it', async () => {
    const never = async (): Promise<ToolExecutionResult> => {
      throw new Error('no waiter runs a vacant program')
    }
    const { store, two, seen, said, k1, k2, k3, call, turnId, signal } = threeKeepers(
      'vacant-claimant-died',
      () => never,
    )

    // Round 1 on keeper 1: its own call is put to the client, not answered yet: the turn is left vacant.
    const first = await k1.run(
      input(signal),
      { approval: answering('cancelled') },
      (o) => program(seen, 'keeper 1')(input(signal), o),
      call,
    )
    expect(first).toMatchObject({ isError: true })
    expect((await store.loadTurn(turnId))?.state).toMatchObject({ vacant: 1 })

    // The retry on keeper 2 claims the turn (and its lease); keeper 2 freezes as the pipeline asks, before anything ran.
    const gone = new AbortController()
    const freezing: ApprovalService = {
      request: () => {
        two.freeze()
        return new Promise<ApprovalOutcome>(() => {})
      },
    }
    void k2.run(
      input(gone.signal),
      { approval: freezing },
      (o) => program(seen, 'keeper 2')(input(gone.signal), o),
      call,
    )
    await until(async () => {
      const state = (await store.loadTurn(turnId))?.state as { claimed?: boolean } | undefined
      return state?.claimed === true ? true : undefined
    }, 'keeper 2 to claim the vacant turn')

    // New calls with the name on keepers 1 and 3 at once: while keeper 2's lease lives they wait;
    // once it expired, exactly one of them takes the turn over (asked as a new call) and runs it.
    const again = await Promise.all(
      [k1, k3].map((k, i) =>
        k.run(
          input(signal),
          { approval: answering('allowed-once') },
          (o) => program(seen, `keeper ${i === 0 ? 1 : 3}`)(input(signal), o),
          call,
        ),
      ),
    )
    for (const result of again) expect(result).toMatchObject({ isError: false, value: 'A done, then the end' })
    expect(seen.ran).toHaveLength(1)
    // Asked: round 1, keeper 2's claim (never answered), and the one call that ran it.
    expect(seen.asked).toEqual(['keeper 1', 'keeper 2', seen.ran[0].slice('A on '.length)])
    expect(
      said.filter((line) => line.includes('stopped renewing its lease before the program saved anything')),
    ).toHaveLength(1)
    expect((await store.loadTurn(turnId))?.closed).toBe(true)
    gone.abort()
  })
})

describe('clients already waiting on a vacant turn whose claimant died are answered (issue 40, item 2)', {
  timeout: 120_000,
}, () => {
  it('keeper 2 claims it and freezes; clients waiting on keepers 1 and 3 are told PROGRAM_RESUME_FAILED once its lease expired; a new call runs it once', async () => {
    const { store, two, seen, said, k1, k2, k3, call, turnId, signal } = threeKeepers('vacant-waiters', program)
    const run = (k: typeof k1, label: string, approval: ApprovalService, on = signal) =>
      k.run(input(on), { approval }, (o) => program(seen, label)(input(on), o), call)

    // Round 1 on keeper 1 runs the program; its own call is put to the client and held unanswered.
    let answer: (outcome: ApprovalOutcome) => void = () => {}
    const held: ApprovalService = {
      request: () =>
        new Promise<ApprovalOutcome>((resolve) => {
          answer = resolve
        }),
    }
    const first = run(k1, 'keeper 1', held)
    await until(() => (seen.asked.length === 1 ? true : undefined), 'round 1 to be asked')

    // Calls with the name on keepers 1 and 3 find it running: they wait for its result. Bounded
    // well below the test's timeout, so a waiter left hanging fails the test instead of passing late.
    const bounded = AbortSignal.timeout(30_000)
    const waiting = [
      run(k1, 'keeper 1', answering('allowed-once'), bounded),
      run(k3, 'keeper 3', answering('allowed-once'), bounded),
    ]
    await until(
      () => (said.filter((line) => line.includes('a client waits again')).length === 2 ? true : undefined),
      'both calls to wait for the program',
    )

    // The ask is cancelled (the client will answer with a new call): nothing ran, the turn is vacant.
    answer({ kind: 'cancelled' })
    expect(await first).toMatchObject({ isError: true })
    expect((await store.loadTurn(turnId))?.state).toMatchObject({ vacant: 1 })

    // The new call on keeper 2 claims the turn and freezes while its own call is asked.
    const gone = new AbortController()
    void run(
      k2,
      'keeper 2',
      {
        request: () => {
          two.freeze()
          return new Promise<ApprovalOutcome>(() => {})
        },
      },
      gone.signal,
    )
    await until(async () => {
      const state = (await store.loadTurn(turnId))?.state as { claimed?: boolean } | undefined
      return state?.claimed === true ? true : undefined
    }, 'keeper 2 to claim the vacant turn')

    // Its lease expires: both waiters are answered, once each, and told to call again; nothing ran.
    const answered = await Promise.all(waiting)
    for (const result of answered)
      expect(result).toMatchObject({
        isError: true,
        error: { info: { code: 'PROGRAM_RESUME_FAILED' }, message: expect.stringContaining('call it again') },
      })
    expect(said.filter((line) => line.includes('are told to call again'))).toHaveLength(2)
    expect(seen.ran).toEqual([])
    expect(seen.asked).toEqual(['keeper 1', 'keeper 2'])
    expect((await store.loadTurn(turnId))?.state).toMatchObject({ vacant: 1, claimed: true })

    // A new call with the name (asked, and allowed) takes the turn over and runs the program, once.
    const later = await run(k3, 'keeper 3', answering('allowed-once'))
    expect(later).toMatchObject({ isError: false, value: 'A done, then the end' })
    expect(seen.ran).toEqual(['A on keeper 3'])
    expect(seen.asked).toEqual(['keeper 1', 'keeper 2', 'keeper 3'])
    expect((await store.loadTurn(turnId))?.closed).toBe(true)
    // The client told to call again gets that result, and nothing runs again.
    const retried = await run(k1, 'keeper 1', answering('allowed-once'))
    expect(retried).toEqual(later)
    expect(seen.ran).toEqual(['A on keeper 3'])
    gone.abort()
  })
})
