// Issue 40, item 2: a turn's liveness lease (`createTurn(id, state, lease)`, `leaseTurn`), on which
// a gateway instance takes over a named run_code program whose instance died mid-run. A live lease
// is never taken by another holder; its holder renews it; an expired one goes to exactly one of the
// takers racing for it, in both stores: PostgreSQL (one row update decides) and the file store (each
// take makes the lease's next generation with a hard link, which fails when the name exists, across
// processes of one machine). A turn never leased, a closed turn and a missing one are never taken.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFileStore } from '../../src/journal/file-store.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { raceProcesses } from './race-processes.js'
import { until } from './until.js'

let server: PgServer
const closers: (() => Promise<unknown>)[] = []
const dirs: string[] = []
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {})
  server?.destroy()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const running = { kind: 'running', pending: { calls: [], requests: [] } }
const LONG = 600_000

/** A lease of 1 ms taken now is expired once the clock moved past it (no fixed sleep). */
async function expiredLeaseOn(store: Store, id: string, holder: string): Promise<void> {
  const taken = Date.now()
  expect(await store.createTurn(id, running, { holder, ms: 1 })).toBe(true)
  await until(() => (Date.now() > taken + 5 ? true : undefined), 'the 1 ms lease to pass', { everyMs: 5 })
}

/** What every store must do, run against two store objects on one store (two instances). */
async function leases(stores: readonly [Store, Store]): Promise<void> {
  const [a, b] = stores
  // A live lease: its holder renews it, nobody else takes it.
  expect(await a.createTurn('live', running, { holder: 'instance-a', ms: LONG })).toBe(true)
  expect(await b.leaseTurn?.('live', { holder: 'instance-b', ms: LONG })).toBe(false)
  expect(await a.leaseTurn?.('live', { holder: 'instance-a', ms: LONG })).toBe(true)
  expect(await b.leaseTurn?.('live', { holder: 'instance-a', ms: LONG })).toBe(true)
  expect(await b.leaseTurn?.('live', { holder: 'instance-b', ms: LONG })).toBe(false)
  // The lease lives beside the turn: saving the turn (a run's progress) keeps it.
  await a.saveTurn('live', { ...running, progress: 1 })
  expect(await b.leaseTurn?.('live', { holder: 'instance-b', ms: LONG })).toBe(false)
  expect(await a.loadTurn('live')).toMatchObject({ state: { progress: 1 }, closed: false })

  // Never leased, missing, or closed: never taken.
  expect(await a.createTurn('plain', running)).toBe(true)
  expect(await b.leaseTurn?.('plain', { holder: 'instance-b', ms: LONG })).toBe(false)
  expect(await b.leaseTurn?.('missing', { holder: 'instance-b', ms: LONG })).toBe(false)
  await expiredLeaseOn(a, 'closed', 'instance-a')
  await a.closeTurn('closed')
  expect(await b.leaseTurn?.('closed', { holder: 'instance-b', ms: LONG })).toBe(false)

  // An expired lease: 24 takers on two instances race for it, with its old holder renewing among
  // them; exactly one wins, and keeps it.
  await expiredLeaseOn(a, 'expired', 'instance-a')
  const holders = Array.from({ length: 24 }, (_, i) => (i === 11 ? 'instance-a' : `taker-${i}`))
  const results = await Promise.all(
    holders.map((holder, i) => stores[i % 2].leaseTurn?.('expired', { holder, ms: LONG })),
  )
  expect(results.filter((won) => won === true)).toHaveLength(1)
  const winner = holders[results.indexOf(true)]
  for (const holder of holders)
    expect(await stores[1].leaseTurn?.('expired', { holder, ms: LONG }), holder).toBe(holder === winner)
  // The turn itself is untouched by its leases.
  expect(await b.loadTurn('expired')).toMatchObject({ state: running, closed: false, decisions: {} })

  // Bad leases are refused, path-qualified.
  await expect(a.leaseTurn?.('live', { holder: '', ms: 10 })).rejects.toThrow(/leaseTurn\(lease\)/)
  await expect(a.leaseTurn?.('live', { holder: 'x', ms: 0 })).rejects.toThrow(/leaseTurn\(lease\)/)
  await expect(a.createTurn('bad', running, { holder: 'x', ms: 1.5 })).rejects.toThrow(/createTurn\(lease\)/)
}

describe('turn leases: a live lease is kept, an expired one goes to one taker (issue 40, item 2)', {
  timeout: 180_000,
}, () => {
  it('PostgreSQL: two instances', async () => {
    const url = server.createDatabase('turn_lease')
    const stores: [Store, Store] = [
      await createPostgresStore({ connectionString: url }),
      await createPostgresStore({ connectionString: url, migrate: false }),
    ]
    for (const store of stores) closers.push(() => store.close())
    await leases(stores)
    expect((await stores[0].status()).schemaVersion).toBe(5)
  })

  it('file store: two store objects; no temporary or stale lease file is left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-turn-lease-'))
    dirs.push(dir)
    const journal = join(dir, 'journal.jsonl')
    await leases([createFileStore({ journal }), createFileStore({ journal })])
    const leaseDirs = readdirSync(`${journal}.turns`).filter((name) => name.endsWith('.lease'))
    for (const leaseDir of leaseDirs) expect(readdirSync(`${journal}.turns/${leaseDir}`)).toHaveLength(1)
  })

  it('file store: of eight processes taking one expired lease together, exactly one wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-turn-lease-procs-'))
    dirs.push(dir)
    const journal = join(dir, 'journal.jsonl')
    await expiredLeaseOn(createFileStore({ journal }), 'race', 'dead-instance')
    const { winners } = await raceProcesses(
      journal,
      `return store.leaseTurn('race', { holder: 'pid-' + process.pid, ms: ${LONG} })`,
    )
    expect(winners).toHaveLength(1)
    const store = createFileStore({ journal })
    const winner = `pid-${winners[0]}`
    expect(await store.leaseTurn?.('race', { holder: 'dead-instance', ms: LONG })).toBe(false)
    expect(await store.leaseTurn?.('race', { holder: winner, ms: LONG })).toBe(true)
  })
})
