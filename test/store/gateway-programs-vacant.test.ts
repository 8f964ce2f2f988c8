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
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { type ServeProcess, spawnServe, tempDir } from '../cli/helpers.js'
import { APPROVAL_KEY, type ModernReply, rawModernCall } from '../cli/raw-modern-call.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { type ProgramFiles, programFiles } from './program-gateways.js'
import { until } from './until.js'

const HOLD_UPSTREAM = resolve(import.meta.dirname, '../fixtures/hold-upstream.mjs')
/** Short, so the hold outlasts it within seconds; renewed every third of it. */
const LEASE_MS = 1500
const BOUND_MS = 120_000
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const accept = { action: 'accept', content: { approve: true } }

let server: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
let files: ProgramFiles
let store: Store
let db: pg.Client
const children: ChildProcess[] = []
const gateways: ServeProcess[] = []

beforeAll(async () => {
  server = await startPgServer()
  work = await tempDir()
  files = await programFiles(server, work.dir, {
    database: 'programs_vacant',
    key: 'programs-vacant-test-state-key-0123456789',
    upstream: HOLD_UPSTREAM,
    config: {
      auth: { tokens: [{ sha256: sha256('alice-token'), subject: 'alice' }] },
      policy: { ask: ['run_code'] },
      // A database nobody serves: --store's URL wins, and programLeaseMs still applies.
      store: { url: 'postgres://nobody@127.0.0.1:1/none', programLeaseMs: LEASE_MS },
    },
  })
  const start = () =>
    spawnServe(['--http', '0', '--config', files.config, '--store', files.url], {
      env: { TOOLGATE_STATE_KEY_FILE: files.keyFile },
      children,
    })
  // The first instance migrates the store; the second starts after it.
  gateways.push(await start())
  gateways.push(await start())
  store = await createPostgresStore({ connectionString: files.url, migrate: false })
  db = new pg.Client({ connectionString: files.url })
  await db.connect()
}, 180_000)

afterAll(async () => {
  // An unreleased hold (a failed run) must not keep the upstreams, hence the gateways, from stopping.
  if (files !== undefined) writeFileSync(`${files.marker}.release`, '')
  await db?.end().catch(() => {})
  await store?.close()
  await stopChildren(children)
  server?.destroy()
  await work?.cleanup()
}, 120_000)

const allSaid = () => gateways.map((g, i) => `--- instance ${i + 1}:\n${g.stderr().slice(-3000)}`).join('\n')
const wait = <T>(check: () => T | undefined | Promise<T | undefined>, what: string) =>
  until(check, what, { timeoutMs: BOUND_MS, everyMs: 25, context: () => `the gateways said:\n${allSaid()}` })
/** `promise`, or a failure naming `what` (and what the gateways said) after a generous bound. */
const within = <T>(promise: Promise<T>, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`timed out waiting for ${what}; the gateways said:\n${allSaid()}`)),
      BOUND_MS,
    )
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

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
    await db.query<TurnRow>(
      `SELECT id, closed, lease_holder AS holder,
              (extract(epoch FROM lease_until - ${since}::timestamptz) * 1000)::float8 AS after
       FROM toolgate_turns WHERE id LIKE 'gateway-program:named:%'`,
    )
  ).rows

describe('a vacant program claimed on another instance (issue 40, item 2)', { timeout: 600_000 }, () => {
  it('asked on instance 1, run on instance 2 past its lease: the whole result, each step once, the turn closed with it', async () => {
    const [one, two] = gateways
    const ran = () => files.ran()

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
    const { rows } = await db.query<{ since: string }>(`SELECT now()::text AS since`)
    const since = `'${rows[0].since}'`
    // Released only once a renewal came a whole lease after the hold began: the run outlasted its lease.
    const renewed = await wait(async () => {
      const [row] = await turnRow(since)
      return row !== undefined && row.after !== null && row.after >= 2 * LEASE_MS ? row : undefined
    }, 'the lease to be renewed a lease length after the hold began')
    expect(renewed.holder, 'instance 2 holds the lease, not instance 1').not.toBe(firstHolder)
    writeFileSync(`${files.marker}.release`, '')

    const second = await retry
    expect(second.error, allSaid()).toBeUndefined()
    expect(second.result?.resultType ?? 'complete', textOf(second) + allSaid()).toBe('complete')
    expect(second.result?.isError, textOf(second) + allSaid()).not.toBe(true)
    for (const part of ['step 1 done', 'hold 2 released', 'step 3 done']) expect(textOf(second)).toContain(part)
    expect(ran()).toEqual(['step:1', 'hold:2', 'step:3'])

    // The turn is closed with that result.
    const [closed] = await turnRow()
    expect(closed?.closed).toBe(true)
    const turn = await store.loadTurn(closed.id)
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
