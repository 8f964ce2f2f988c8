// Issue 40, item 2: a turn's liveness lease (`createTurn(id, state, lease)`, `leaseTurn`), on which
// a gateway instance takes over a named run_code program whose instance died mid-run. A live lease
// is never taken by another holder; its holder renews it; an expired one goes to exactly one of the
// takers racing for it, in both stores: PostgreSQL (one row update decides) and the file store (each
// take makes the lease's next generation with a hard link, which fails when the name exists, across
// processes of one machine). A turn never leased, a closed turn and a missing one are never taken.
// The lease fence (`saveLeasedTurn`): a write lands only while the lease is its holder's, checked
// in the step that writes, so a stale holder (its expired lease taken by another) never lands a
// late write over the taker's state, nor closes the turn; in PostgreSQL one row update decides, in
// the file store the link of the lease's next generation does.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFileStore } from '../../src/journal/file-store.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { expiredLeaseOn, running } from './expired-lease.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { raceProcesses } from './race-processes.js'

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

const LONG = 600_000

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

  await fence(stores)

  // Bad leases are refused, path-qualified.
  await expect(a.saveLeasedTurn?.('live', running, { holder: '', ms: 10 })).rejects.toThrow(/saveLeasedTurn\(lease\)/)
  await expect(a.leaseTurn?.('live', { holder: '', ms: 10 })).rejects.toThrow(/leaseTurn\(lease\)/)
  await expect(a.leaseTurn?.('live', { holder: 'x', ms: 0 })).rejects.toThrow(/leaseTurn\(lease\)/)
  await expect(a.createTurn('bad', running, { holder: 'x', ms: 1.5 })).rejects.toThrow(/createTurn\(lease\)/)
}

/** The lease fence, on two store objects on one store (two instances). */
async function fence(stores: readonly [Store, Store]): Promise<void> {
  const [a, b] = stores
  const lease = (holder: string) => ({ holder, ms: LONG })
  // The holder's write lands (and renews its lease); another holder's never does.
  expect(await a.saveLeasedTurn?.('live', { ...running, progress: 2 }, lease('instance-a'))).toBe(true)
  expect(await b.saveLeasedTurn?.('live', { ...running, progress: 3 }, lease('instance-b'))).toBe(false)
  expect(await b.loadTurn('live')).toMatchObject({ state: { progress: 2 }, closed: false })
  expect(await b.leaseTurn?.('live', lease('instance-b'))).toBe(false)
  // Never leased, missing, closed: nothing is written.
  expect(await a.saveLeasedTurn?.('plain', { ...running, progress: 1 }, lease('instance-a'))).toBe(false)
  expect(await a.loadTurn('plain')).toMatchObject({ state: running })
  expect(await a.saveLeasedTurn?.('nowhere', running, lease('instance-a'))).toBe(false)
  expect(await a.loadTurn('nowhere')).toBeUndefined()
  expect(await a.saveLeasedTurn?.('closed', { ...running, progress: 1 }, lease('instance-a'))).toBe(false)
  expect(await a.loadTurn('closed')).toMatchObject({ state: running, closed: true })

  // A stale holder: its lease expired and another instance took it. Its progress and its final
  // result are refused; the taker's state stays, and the stale holder cannot take the lease back.
  await expiredLeaseOn(a, 'stale', 'instance-a')
  expect(await b.leaseTurn?.('stale', lease('instance-b'))).toBe(true)
  expect(await b.saveLeasedTurn?.('stale', { ...running, by: 'taker' }, lease('instance-b'))).toBe(true)
  expect(await a.saveLeasedTurn?.('stale', { ...running, by: 'stale' }, lease('instance-a'))).toBe(false)
  const staleResult = { ...running, by: 'stale', result: 'late' }
  expect(await a.saveLeasedTurn?.('stale', staleResult, lease('instance-a'), { close: true })).toBe(false)
  expect(await a.loadTurn('stale')).toMatchObject({ state: { by: 'taker' }, closed: false })
  expect(await a.leaseTurn?.('stale', lease('instance-a'))).toBe(false)
  // The taker's final state closes the turn in the same step; nothing is written after.
  const result = { ...running, by: 'taker', result: 'done' }
  expect(await b.saveLeasedTurn?.('stale', result, lease('instance-b'), { close: true })).toBe(true)
  expect(await a.loadTurn('stale')).toMatchObject({ state: { result: 'done' }, closed: true })
  expect(await b.saveLeasedTurn?.('stale', running, lease('instance-b'))).toBe(false)
  expect(await a.loadTurn('stale')).toMatchObject({ state: { result: 'done' }, closed: true })

  // Its own expired lease that nobody took is still the holder's: the write lands and renews it.
  await expiredLeaseOn(a, 'lapsed', 'instance-a')
  expect(await a.saveLeasedTurn?.('lapsed', { ...running, progress: 1 }, lease('instance-a'))).toBe(true)
  expect(await b.leaseTurn?.('lapsed', lease('instance-b'))).toBe(false)

  // A stale holder's writes among 16 takers of its expired lease, on two instances: either a write
  // of the holder comes first (and renews the lease, so no taker wins), or one taker wins and no
  // write of the holder lands.
  await expiredLeaseOn(a, 'contested', 'instance-a')
  const acts = Array.from({ length: 24 }, (_, i) =>
    i % 3 === 1
      ? {
          write: `stale-${i}`,
          go: () => stores[i % 2].saveLeasedTurn?.('contested', { ...running, by: `stale-${i}` }, lease('instance-a')),
        }
      : { take: `taker-${i}`, go: () => stores[i % 2].leaseTurn?.('contested', lease(`taker-${i}`)) },
  )
  const won = await Promise.all(acts.map((act) => act.go()))
  const took = acts.filter((act, i) => won[i] === true && act.take !== undefined)
  const wrote = acts.filter((act, i) => won[i] === true && act.write !== undefined)
  const state = (await b.loadTurn('contested'))?.state as { by?: string }
  if (took.length > 0) {
    expect(took).toHaveLength(1)
    expect(wrote).toEqual([])
    expect(state).toEqual(running)
  } else {
    expect(wrote.length).toBeGreaterThan(0)
    expect(wrote.map((act) => act.write)).toContain(state.by)
  }
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
    // A refused fenced write leaves no temporary file of the state it did not write.
    expect(readdirSync(`${journal}.turns`).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  it('file store: of eight processes taking one expired lease together, exactly one wins; the fence holds across processes', async () => {
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

    // The lease fence across processes: four write as the stale holder, four as the winner, at
    // once. Every one of the winner's writes lands, none of the stale holder's; the state is the winner's.
    const writes = await raceProcesses(journal, (i) => {
      const holder = i % 2 === 0 ? 'dead-instance' : winner
      return `return store.saveLeasedTurn('race', { kind: 'running', pending: { calls: [], requests: [] }, by: ${JSON.stringify(holder)}, pid: process.pid }, { holder: ${JSON.stringify(holder)}, ms: ${LONG} })`
    })
    expect(writes.winners).toEqual(writes.pids.filter((_, i) => i % 2 === 1))
    const state = (await store.loadTurn('race'))?.state as { by?: string; pid?: number }
    expect(state.by).toBe(winner)
    expect(writes.winners).toContain(state.pid)

    // A stale holder's writes among takers of its expired lease, across processes: either its
    // writes come first (renewing the lease: no taker wins) or one taker wins and none lands.
    await expiredLeaseOn(store, 'contested', 'dead-instance')
    const contest = await raceProcesses(journal, (i) =>
      i % 2 === 0
        ? `return store.saveLeasedTurn('contested', { kind: 'running', pending: { calls: [], requests: [] }, pid: process.pid }, { holder: 'dead-instance', ms: ${LONG} })`
        : `return store.leaseTurn('contested', { holder: 'pid-' + process.pid, ms: ${LONG} })`,
    )
    const took = contest.winners.filter((pid) => contest.pids.indexOf(pid) % 2 === 1)
    const wrote = contest.winners.filter((pid) => contest.pids.indexOf(pid) % 2 === 0)
    const contested = (await store.loadTurn('contested'))?.state as { pid?: number }
    if (took.length > 0) {
      expect(took).toHaveLength(1)
      expect(wrote).toEqual([])
      expect(contested.pid).toBeUndefined()
    } else {
      expect(wrote).toContain(contested.pid)
    }
  })
})
