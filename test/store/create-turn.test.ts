// Issue 40, item 2: the store's insert-if-absent for turns (`createTurn`), on which a gateway
// instance takes a named run_code program before running it. Of processes creating one turn id
// together, exactly one gets true, in both stores: PostgreSQL (its primary key decides) and the file
// store (a hard link, which fails when the name exists, across processes of one machine). A turn
// that exists, open or closed, is never replaced; a created turn lists its pending calls and is
// heard by watchers like a saved one.
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

const waiting = (n: number) => ({
  n,
  pending: { calls: [{ callId: `c${n}`, name: 'guarded', arguments: {} }], requests: [{ callId: `c${n}` }] },
})

/** What every store must do, run against each. */
async function createsOnce(stores: readonly Store[]): Promise<void> {
  // 40 creations of one id from two store objects (two instances): exactly one wins, and its state stays.
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) => stores[i % 2].createTurn('race', waiting(i) as never)),
  )
  expect(results.filter(Boolean)).toHaveLength(1)
  const winner = results.indexOf(true)
  const turn = await stores[1].loadTurn('race')
  expect(turn).toMatchObject({ id: 'race', state: waiting(winner), closed: false, decisions: {} })
  // Its pending call is listed and can be decided, as for a saved turn.
  expect((await stores[0].pendingCalls()).filter((c) => c.turnId === 'race')).toEqual([
    { turnId: 'race', callId: `c${winner}`, toolName: 'guarded', agentId: null },
  ])
  expect((await stores[0].decide('race', `c${winner}`, { kind: 'allowed-once' })).applied).toBe(true)
  // A turn that exists is never replaced by a creation, not even once closed; saveTurn still replaces.
  expect(await stores[0].createTurn('race', waiting(99) as never)).toBe(false)
  await stores[0].closeTurn('race')
  expect(await stores[1].createTurn('race', waiting(98) as never)).toBe(false)
  expect(await stores[1].loadTurn('race')).toMatchObject({ state: waiting(winner), closed: true })
  await stores[1].saveTurn('race', waiting(97) as never)
  expect(await stores[0].loadTurn('race')).toMatchObject({
    state: waiting(97),
    closed: false,
    decisions: { [`c${winner}`]: { kind: 'allowed-once' } },
  })
  // Another id is another turn.
  expect(await stores[0].createTurn('other', { n: 0 })).toBe(true)
  expect(await stores[0].createTurn('', { n: 0 }).catch((error: Error) => error.message)).toMatch(/createTurn/)
}

describe('createTurn: one creator per turn id, across processes (issue 40, item 2)', { timeout: 180_000 }, () => {
  it('PostgreSQL: exactly one of two instances creates a turn; a created turn is heard like a saved one', async () => {
    const url = server.createDatabase('create_turn')
    const stores = [
      await createPostgresStore({ connectionString: url }),
      await createPostgresStore({ connectionString: url, migrate: false }),
    ]
    for (const store of stores) closers.push(() => store.close())
    let heard = 0
    const stop = stores[1].watchTurns?.(() => {
      heard++
    })
    closers.push(async () => stop?.())
    await until(() => (heard > 0 ? true : undefined), 'the watch to connect')
    const before = heard
    expect(await stores[0].createTurn('heard', waiting(1) as never)).toBe(true)
    await until(() => (heard > before ? true : undefined), 'the created turn to be heard')
    await createsOnce(stores)
  })

  it('file store: exactly one of two store objects creates a turn; no temporary file is left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-create-turn-'))
    dirs.push(dir)
    const journal = join(dir, 'journal.jsonl')
    await createsOnce([createFileStore({ journal }), createFileStore({ journal })])
    expect(readdirSync(`${journal}.turns`).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  it('file store: of eight processes creating one turn together, exactly one wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-create-turn-procs-'))
    dirs.push(dir)
    const journal = join(dir, 'journal.jsonl')
    const { winners } = await raceProcesses(journal, "return store.createTurn('race', { pid: process.pid })")
    expect(winners).toHaveLength(1)
    const turn = await createFileStore({ journal }).loadTurn('race')
    expect(turn?.state).toEqual({ pid: winners[0] })
  })
})
