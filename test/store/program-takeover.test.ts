// Issue 40, item 2 (R-CODE-2, across instances): a named run_code program whose instance dies
// during its run is taken over by another instance. Three `serve --http --store URL` processes on
// one PostgreSQL, with a short program lease from the config (`store.programLeaseMs`: the --store
// flag names the database, the config's other store keys still apply). The program runs two steps,
// then holds in the upstream's `hold` tool; instance A runs it. Clients wait for it by name on B
// and on C: A's lease is live and renewed, so neither takes it (no double run). A is killed
// (SIGKILL) while the program holds. Once A's lease expired, B and C both try to take it; one wins
// and re-runs the program from the log A saved, so the two finished steps answer from the log and
// ran once, and only the interrupted hold runs again. Every waiting client, and one that names the
// program after the kill, gets the one result. The upstream's marker file counts every sub-call
// that ran, in any process; the hold answers only once the test releases it (no sleep).
import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { namedProgramTurnId } from '../../src/gateway/program-keeper.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { type ServeProcess, spawnServe, tempDir, writeConfig } from '../cli/helpers.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { until } from './until.js'

const UPSTREAM = resolve(import.meta.dirname, '../fixtures/hold-upstream.mjs')
/** Short, so the takeover comes within seconds of the kill; long enough that a loaded machine renews in time. */
const LEASE_MS = 4000
let server: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
const closers: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  server = await startPgServer()
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {})
  await stopChildren(children)
  server?.destroy()
  await work?.cleanup()
}, 120_000)

const gateways: ServeProcess[] = []
const allSaid = () => gateways.map((g, i) => `--- instance ${i + 1}:\n${g.stderr().slice(-3000)}`).join('\n')
const wait = <T>(check: () => T | undefined | Promise<T | undefined>, what: string) =>
  until(check, what, { timeoutMs: 120_000, everyMs: 25, context: () => `the gateways said:\n${allSaid()}` })
/** `promise`, or a failure naming `what` (and what the gateways said) after a generous bound. */
const within = <T>(promise: Promise<T>, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`timed out waiting for ${what}; the gateways said:\n${allSaid()}`)),
      120_000,
    )
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

async function client(g: ServeProcess): Promise<Client> {
  const c = new Client({ name: 'takeover-test', version: '1.0.0' })
  await c.connect(new StreamableHTTPClientTransport(new URL(g.url)))
  closers.push(() => c.close())
  return c
}

const PROGRAM = [
  'const a = await tools.step({ n: 1 })',
  'const b = await tools.step({ n: 2 })',
  'const h = await tools.hold({ n: 3 })',
  'return { a, b, h }',
].join('\n')
type Outcome = { isError?: boolean; structuredContent?: unknown; content?: unknown }
const call = (c: Client, name: string, signal?: AbortSignal): Promise<Outcome> =>
  c.callTool(
    {
      name: 'run_code',
      arguments: { code: PROGRAM, description: 'two steps, then hold' },
      _meta: { 'toolgate/program': name },
    },
    undefined,
    { timeout: 600_000, ...(signal === undefined ? {} : { signal }) },
  ) as Promise<Outcome>
const textOf = (result: unknown) =>
  JSON.stringify((result as { structuredContent?: unknown }).structuredContent ?? result)

describe('a named program whose instance dies mid-run is taken over (issue 40, item 2)', { timeout: 600_000 }, () => {
  let store: Store
  let db: pg.Client
  let marker = ''
  const ran = () => readFileSync(marker, 'utf8').split('\n').filter(Boolean)
  const leaseOf = async (turnId: string) =>
    (
      await db.query<{ holder: string | null; until: Date | null; left: number | null; now: Date }>(
        `SELECT lease_holder AS holder, lease_until AS until, now() AS now,
                (extract(epoch FROM lease_until - now()) * 1000)::float8 AS left
         FROM toolgate_turns WHERE id = $1`,
        [turnId],
      )
    ).rows[0]

  beforeAll(async () => {
    const url = server.createDatabase('program_takeover')
    marker = join(work.dir, 'marker')
    writeFileSync(marker, '')
    const keyFile = join(work.dir, 'state.key')
    writeFileSync(keyFile, 'program-takeover-test-key-0123456789')
    const config = await writeConfig(work.dir, {
      files: false,
      mode: 'code',
      servers: { m: { command: process.execPath, args: [UPSTREAM, marker], prefix: '' } },
      // A database nobody serves: --store's URL must win, and programLeaseMs still apply.
      store: { url: 'postgres://nobody@127.0.0.1:1/none', programLeaseMs: LEASE_MS },
    })
    const start = () =>
      spawnServe(['--http', '0', '--config', config, '--store', url], {
        env: { TOOLGATE_STATE_KEY_FILE: keyFile },
        children,
      })
    // The first instance migrates the store; the others start beside it.
    gateways.push(await start())
    gateways.push(...(await Promise.all([start(), start()])))
    store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => store.close())
    db = new pg.Client({ connectionString: url })
    await db.connect()
    closers.push(() => db.end())
  }, 180_000)

  it('A is killed while the program holds; one of B and C takes it over, every finished step ran once, every client gets the one result', async () => {
    const [a, b, c] = gateways
    const NAME = 'takeover-report'
    const turnId = namedProgramTurnId(undefined, NAME)
    // A's client loses its connection with A; the test stops waiting for it at the end.
    const giveUpOnA = new AbortController()
    const onA = call(await client(a), NAME, giveUpOnA.signal).catch((error: unknown) => ({
      isError: true,
      content: String(error),
    }))
    await wait(() => (ran().includes('hold:3') ? true : undefined), 'the program to hold on instance A')
    expect(ran()).toEqual(['step:1', 'step:2', 'hold:3'])
    const first = await leaseOf(turnId)
    // A holds the lease, for the config's lease length (not the 15 s default).
    expect(first.holder).toContain(`:${a.child.pid}:`)
    expect(first.left).toBeLessThanOrEqual(LEASE_MS)

    // Clients wait for the program by name on B and on C.
    const onB = call(await client(b), NAME)
    const onC = call(await client(c), NAME)
    for (const g of [b, c])
      await wait(
        () => (g.stderr().includes(`waits again for the run_code program kept in turn ${turnId}`) ? true : undefined),
        'the clients on B and C to wait',
      )
    // A live lease is never taken: past the end of the lease A held when B and C began to wait,
    // A has renewed it, and neither B nor C ran anything.
    await wait(async () => {
      const now = await leaseOf(turnId)
      return now.now > (first.until as Date) ? now : undefined
    }, 'the first lease term to pass')
    const renewed = await leaseOf(turnId)
    expect(renewed.holder).toBe(first.holder)
    expect(renewed.until?.getTime()).toBeGreaterThan(first.until?.getTime() ?? 0)
    expect(ran()).toEqual(['step:1', 'step:2', 'hold:3'])
    expect(b.stderr() + c.stderr()).not.toContain('takes the program over')
    // The log A saved after each finished step: both steps, with their outcomes (the hold is not
    // in it: a sub-call is saved once it finished).
    const saved = (await store.loadTurn(turnId))?.state as { program?: { log?: { calls?: { outcome?: unknown }[] } } }
    expect(saved.program?.log?.calls?.map((entry) => entry.outcome)).toEqual([
      { ok: true, value: expect.anything() },
      { ok: true, value: expect.anything() },
    ])

    a.child.kill('SIGKILL')
    await wait(() => (a.child.signalCode === 'SIGKILL' ? true : undefined), 'instance A to die')
    // A call that names the program after the kill, on B, waits for the same run.
    const after = call(await client(b), NAME)
    // Once A's lease expired, B and C both try to take it: one wins, and only the hold runs again.
    await wait(
      () => (ran().filter((line) => line === 'hold:3').length === 2 ? true : undefined),
      'the hold to run again on B or C',
    )
    const took = `program turn ${turnId}: the instance running it stopped renewing its lease; this instance takes the program over (2 finished sub-calls answer from its log)`
    const takers = [b, c].filter((g) => g.stderr().includes(took))
    expect(takers).toHaveLength(1)
    expect((await leaseOf(turnId)).holder).toContain(`:${takers[0].child.pid}:`)
    writeFileSync(`${marker}.release`, '')
    const results = await within(Promise.all([onB, onC, after]), 'the waiting clients to get the result')
    for (const result of results) expect(result.isError, textOf(result)).not.toBe(true)
    expect(textOf(results[0])).toContain('step 1 done')
    expect(textOf(results[0])).toContain('step 2 done')
    expect(textOf(results[0])).toContain('hold 3 released')
    expect(textOf(results[1])).toBe(textOf(results[0]))
    expect(textOf(results[2])).toBe(textOf(results[0]))

    // The name's turn is closed with the result sealed in it: a later call answers it, running nothing.
    expect(await store.loadTurn(turnId)).toMatchObject({ closed: true })
    expect(textOf(await within(call(await client(c), NAME), 'a later call'))).toBe(textOf(results[0]))
    // Each finished step ran exactly once; only the hold A was killed in ran again, on one taker.
    expect(ran()).toEqual(['step:1', 'step:2', 'hold:3', 'hold:3'])
    expect([b, c].filter((g) => g.stderr().includes(took))).toHaveLength(1)
    // A's client never got a result (its instance died): the test stops waiting for it.
    giveUpOnA.abort()
    expect((await within(onA, "A's client to give up")).isError).toBe(true)
  })
})
