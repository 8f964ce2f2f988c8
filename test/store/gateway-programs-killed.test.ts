// Issue 40, item 2 (R-EXEC-4, R-CODE-2, across instances): a program resumed after its approval
// holds the turn's lease, so when its instance is killed (SIGKILL: nothing is given back) while the
// approved sub-call runs, another instance takes the resume over once the lease expired and ends
// the program. Two `serve --http --store` instances on one PostgreSQL, a short program lease
// (`store.programLeaseMs`), a state key; a raw MCP 2026-07-28 client's program A, B (asked, and held
// mid-run by the upstream until the test releases it), C; B approved in the store, as the viewer
// does. Whichever instance resumes it holds the lease and renews it past a whole lease length while
// the other leaves it alone; that instance is killed; the other one takes the resume over, B runs
// again (it was in flight: at least once) and C once, A never again, and the program's result is
// what an uninterrupted run of it returns. The upstream's marker file counts every sub-call that ran
// in any process; the hold answers only once the test releases it (no sleep).
import { writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { ServeProcess } from '../cli/helpers.js'
import { heldProgramAsked, twoGatewaysOnPostgres } from './program-gateways.js'

/** Short, so the takeover comes within seconds of the kill; renewed every third of it. */
const LEASE_MS = 1500

const fixture = twoGatewaysOnPostgres({
  database: 'programs_killed',
  key: 'programs-killed-test-state-key-0123456789',
  ask: ['hold'],
  leaseMs: LEASE_MS,
})
const { gateways, allSaid, wait } = fixture

/** The program asked on `g`: its kept turn and the waiting sub-call. */
const paused = (g: ServeProcess) => heldProgramAsked(g.url, allSaid)

const leaseOf = async (turnId: string) =>
  (
    await fixture.db.query<{ holder: string | null; until: Date | null; now: Date }>(
      'SELECT lease_holder AS holder, lease_until AS until, now() AS now FROM toolgate_turns WHERE id = $1',
      [turnId],
    )
  ).rows[0]

/** The program's sealed result once its turn is closed. */
const resultOf = async (turnId: string) => {
  const ended = await wait(async () => {
    const loaded = await fixture.store.loadTurn(turnId)
    return loaded?.closed ? loaded : undefined
  }, `the program of turn ${turnId} to end`)
  return (ended.state as { result?: unknown }).result
}

describe('a resume whose instance is killed is taken over (issue 40, item 2)', { timeout: 600_000 }, () => {
  it('killed while the approved sub-call runs: the other instance ends the program, A and C ran once, B twice', async () => {
    const kept = await paused(gateways[0])
    expect(fixture.files.ran()).toEqual(['step:1'])

    // Approved in the store: one instance resumes the program, and B holds it mid-run.
    expect(
      await fixture.store.decide(kept.turn, kept.calls[0], { kind: 'allowed-once', decidedBy: 'operator' }),
    ).toEqual({
      applied: true,
    })
    await wait(() => (fixture.files.ran().includes('hold:2') ? true : undefined), 'B to run')
    const first = await wait(async () => {
      const lease = await leaseOf(kept.turn)
      return gateways.some((g) => lease.holder?.includes(`:${g.child.pid}:`)) ? lease : undefined
    }, 'the resuming instance to hold the lease')
    const resumer = gateways.find((g) => first.holder?.includes(`:${g.child.pid}:`)) as ServeProcess
    const other = gateways.find((g) => g !== resumer) as ServeProcess

    // A live lease is never taken: past the end of the lease the resumer held when B began, it has
    // renewed it, and the other instance ran nothing.
    await wait(async () => {
      const now = await leaseOf(kept.turn)
      return now.now > (first.until as Date) ? now : undefined
    }, 'the first lease term to pass')
    const renewed = await leaseOf(kept.turn)
    expect(renewed.holder).toBe(first.holder)
    expect(renewed.until?.getTime()).toBeGreaterThan(first.until?.getTime() ?? 0)
    expect(fixture.files.ran()).toEqual(['step:1', 'hold:2'])

    // Killed: nothing is given back, neither the claim on the decision nor the lease.
    resumer.child.kill('SIGKILL')
    await wait(() => (resumer.child.signalCode === 'SIGKILL' ? true : undefined), 'the resuming instance to die')
    expect((await fixture.store.loadTurn(kept.turn))?.closed).toBe(false)

    // Once the lease expired, the other instance takes the resume over: B runs again there.
    await wait(
      () => (fixture.files.ran().filter((line) => line === 'hold:2').length === 2 ? true : undefined),
      'B to run again on the other instance',
    )
    expect(other.stderr()).toContain(
      `program turn ${kept.turn}: the resume of its decision for sub-call ${kept.calls[0]} stopped renewing its lease`,
    )
    expect(other.stderr()).toContain('this instance takes the resume over (1 finished sub-calls answer from its log)')
    expect((await leaseOf(kept.turn)).holder).toContain(`:${other.child.pid}:`)
    writeFileSync(`${fixture.files.marker}.release`, '')
    const result = await resultOf(kept.turn)
    expect((result as { isError?: boolean }).isError, JSON.stringify(result)).toBe(false)
    // A ran once (it answered from the log), B was in flight (at least once: twice), C once.
    expect(fixture.files.ran()).toEqual(['step:1', 'hold:2', 'hold:2', 'step:3'])

    // The same program run without interruption (on the instance left) returns the same result.
    const again = await paused(other)
    expect(
      await fixture.store.decide(again.turn, again.calls[0], { kind: 'allowed-once', decidedBy: 'operator' }),
    ).toEqual({
      applied: true,
    })
    const uninterrupted = await resultOf(again.turn)
    expect(fixture.files.ran()).toEqual(['step:1', 'hold:2', 'hold:2', 'step:3', 'step:1', 'hold:2', 'step:3'])
    expect(result).toEqual(uninterrupted)
  })
})
