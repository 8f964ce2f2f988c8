// Issue 40, item 2 (R-EXEC-4, R-CODE-2, across instances): a "vacant" named program handed from one
// instance to another. Two `serve --http --store` instances on one PostgreSQL, a short program lease
// (`store.programLeaseMs`), `policy.ask: ['run_code']`. A 2026-07-28 client names a program; its
// first round goes to instance 1, which asks about run_code and leaves the turn vacant (nothing
// ran). The approved retry goes to instance 2, which claims the vacant turn and runs the program:
// step 1, then `hold` 2 (an upstream tool that answers only once the test releases it), then step 3.
// The test releases the hold only once the lease was renewed a full lease length after the hold
// began, so the run outlasts the lease: instance 2 must hold it (instance 1 gave it up, instance 2
// took it before running), or its renewals are refused and its run saves nothing more. The retry
// gets the program's whole result, each step ran once, the turn is closed with that result, and a
// later call with the name (on instance 1) answers from it without running anything.
import { writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { ServeProcess } from '../cli/helpers.js'
import { APPROVAL_KEY, type ModernReply, rawModernCall } from '../cli/raw-modern-call.js'
import { twoGatewaysOnPostgres } from './program-gateways.js'

/** Short, so the hold outlasts it within seconds; renewed every third of it. */
const LEASE_MS = 1500
const accept = { action: 'accept', content: { approve: true } }

const fixture = twoGatewaysOnPostgres({
  database: 'programs_vacant',
  key: 'programs-vacant-test-state-key-0123456789',
  ask: ['run_code'],
  leaseMs: LEASE_MS,
})
const { gateways, allSaid, wait, within } = fixture

const NAME = 'vacant-slow'
const ARGS = {
  code: [
    'const a = await tools.step({ n: 1 })',
    'const h = await tools.hold({ n: 2 })',
    'const c = await tools.step({ n: 3 })',
    'return { a, h, c }',
  ].join('\n'),
  description: 'a step, a hold that outlasts the lease, a step',
}
const call = (g: ServeProcess, retry?: { state: string; answer: unknown }) =>
  rawModernCall<ModernReply>(g.url, 'alice-token', 'run_code', ARGS, retry, { 'toolgate/program': NAME })
const textOf = (reply: ModernReply) => JSON.stringify(reply.result?.structuredContent ?? reply.result?.content ?? reply)

interface TurnRow {
  id: string
  closed: boolean
  holder: string | null
  /** The lease's end, in ms after the database's `since` (a timestamp it gave earlier). */
  after: number | null
}
/** The test's one named program turn, its lease measured against the database's clock. */
const turnRow = async (since = 'now()') =>
  (
    await fixture.db.query<TurnRow>(
      `SELECT id, closed, lease_holder AS holder,
              (extract(epoch FROM lease_until - ${since}::timestamptz) * 1000)::float8 AS after
       FROM toolgate_turns WHERE id LIKE 'gateway-program:named:%'`,
    )
  ).rows

describe('a vacant program claimed on another instance (issue 40, item 2)', { timeout: 600_000 }, () => {
  it('asked on instance 1, run on instance 2 past its lease: the whole result, each step once, the turn closed with it', async () => {
    const [one, two] = gateways
    const ran = () => fixture.files.ran()

    // Round 1, instance 1: run_code itself is asked; nothing runs; the turn is left vacant.
    const first = await within(call(one), 'the first round')
    expect(first.result?.resultType, JSON.stringify(first) + allSaid()).toBe('input_required')
    expect(Object.keys(first.result?.inputRequests ?? {})).toEqual([APPROVAL_KEY])
    expect(ran()).toEqual([])
    const [vacant] = await turnRow()
    expect(vacant?.closed).toBe(false)
    const firstHolder = vacant?.holder

    // The approved retry, instance 2: it claims the vacant turn and runs the program, which holds.
    const retry = within(
      call(two, { state: first.result?.requestState as string, answer: accept }),
      "the approved retry's result",
    )
    await wait(() => (ran().includes('hold:2') ? true : undefined), 'the program to reach its hold on instance 2')
    const { rows } = await fixture.db.query<{ since: string }>(`SELECT now()::text AS since`)
    const since = `'${rows[0].since}'`
    // Released only once a renewal came a whole lease after the hold began: the run outlasted its lease.
    const renewed = await wait(async () => {
      const [row] = await turnRow(since)
      return row !== undefined && row.after !== null && row.after >= 2 * LEASE_MS ? row : undefined
    }, 'the lease to be renewed a lease length after the hold began')
    expect(renewed.holder, 'instance 2 holds the lease, not instance 1').not.toBe(firstHolder)
    writeFileSync(`${fixture.files.marker}.release`, '')

    const second = await retry
    expect(second.error, allSaid()).toBeUndefined()
    expect(second.result?.resultType ?? 'complete', textOf(second) + allSaid()).toBe('complete')
    expect(second.result?.isError, textOf(second) + allSaid()).not.toBe(true)
    for (const part of ['step 1 done', 'hold 2 released', 'step 3 done']) expect(textOf(second)).toContain(part)
    expect(ran()).toEqual(['step:1', 'hold:2', 'step:3'])

    // The turn is closed with that result.
    const [closed] = await turnRow()
    expect(closed?.closed).toBe(true)
    const turn = await fixture.store.loadTurn(closed.id)
    const result = (turn?.state as { result?: unknown } | undefined)?.result
    for (const part of ['step 1 done', 'hold 2 released', 'step 3 done']) expect(JSON.stringify(result)).toContain(part)

    // A later call with the name, on instance 1, answers from it; nothing runs again.
    const again = await within(call(one), 'a later call with the name')
    expect(again.result?.resultType ?? 'complete', textOf(again)).toBe('complete')
    expect(again.result?.isError, textOf(again)).not.toBe(true)
    expect(textOf(again)).toBe(textOf(second))
    expect(ran()).toEqual(['step:1', 'hold:2', 'step:3'])
  })
})
