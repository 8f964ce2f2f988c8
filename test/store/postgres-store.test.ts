// The PostgreSQL store against a real PostgreSQL 15 server (issue 26): migrations, journal order and
// LISTEN/NOTIFY follow, claims and decisions under concurrency, buckets, a restart mid-session.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JournalRecord } from '../../src/journal/records.js'
import { createPostgresStore, type Store, StoreError } from '../../src/store/index.js'
import { migrate } from '../../src/store/migrations.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let databases = 0
const fresh = () => server.createDatabase(`t${++databases}`)

beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => server?.destroy())

function record(callId: string, type: 'call-started' | 'result' = 'call-started', n = 0): JournalRecord {
  const base = {
    v: 1 as const,
    ts: Date.now(),
    callId,
    rootCallId: callId,
    parentCallId: null,
    agentId: 'a',
    toolName: 't',
  }
  return type === 'call-started'
    ? { ...base, type, arguments: { n } }
    : { ...base, type, result: { isError: false, content: [], value: n } as never, durationMs: 1 }
}

const state = (calls: string[]) => ({
  v: 1,
  format: 'openai-chat',
  agentId: 'a',
  messages: [],
  steps: [],
  pending: {
    reply: [],
    calls: calls.map((callId) => ({ callId, name: 't', arguments: {} })),
    results: calls.map(() => null),
    requests: calls.map((callId) => ({ callId, toolName: 't' })),
  },
})

async function collect(store: Store, after = 0): Promise<number[]> {
  const out: number[] = []
  for await (const { record } of store.read({ after }))
    if (record.type === 'call-started') out.push((record.arguments as { n: number }).n)
  return out
}

describe('migrations (issue 26)', () => {
  it('from an empty database to the newest version; instances starting together apply each migration once', async () => {
    const url = fresh()
    const stores = await Promise.all(Array.from({ length: 5 }, () => createPostgresStore({ connectionString: url })))
    const status = await stores[0].status()
    expect(status).toMatchObject({ kind: 'postgres', schemaVersion: 5, codeSchemaVersion: 5, journalRecords: 0 })
    expect(status.where).not.toContain('password')
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const applied = await client.query('SELECT version FROM toolgate_schema ORDER BY version')
    expect(applied.rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5])
    await client.end()
    await Promise.all(stores.map((s) => s.close()))
  })

  it('from the previous version: records written under version 1 are kept and read after the upgrade', async () => {
    const url = fresh()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    expect(await migrate(client, 1)).toEqual({ from: 0, to: 1 })
    await client.query('SELECT toolgate_append($1, $2, $3, $4, $5)', [
      ['call-started'],
      ['old'],
      ['a'],
      ['t'],
      [JSON.stringify(record('old', 'call-started', 7))],
    ])
    const refused = await createPostgresStore({ connectionString: url, migrate: false }).catch((e) => e)
    expect(refused).toBeInstanceOf(StoreError)
    expect(refused.code).toBe('STORE_SCHEMA')
    expect(refused.message).toMatch(/schema version 1, this toolgate needs 5: run "toolgate store migrate"/)
    const store = await createPostgresStore({ connectionString: url })
    expect((await store.status()).schemaVersion).toBe(5)
    expect(await collect(store)).toEqual([7])
    await store.setStandingApproval({ agentId: null, toolName: 'x', kind: 'allowed-always' })
    await store.close()
    await client.end()
  })

  it('a newer schema than the code knows is refused and left untouched', async () => {
    const url = fresh()
    const first = await createPostgresStore({ connectionString: url })
    await first.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query("INSERT INTO toolgate_schema (version, name) VALUES (99, 'from the future')")
    const error = await createPostgresStore({ connectionString: url }).catch((e) => e)
    expect(error).toBeInstanceOf(StoreError)
    expect(error.code).toBe('STORE_SCHEMA')
    expect(error.message).toMatch(/schema version 99, newer than this toolgate knows \(5\)/)
    const versions = await client.query('SELECT version FROM toolgate_schema ORDER BY version')
    expect(versions.rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5, 99])
    await client.end()
  })

  it('a bad connection string is a ConfigError with the path', async () => {
    await expect(createPostgresStore({ connectionString: 'mysql://x' })).rejects.toThrow(
      /createPostgresStore\(options\)\.connectionString: expected a postgres/,
    )
  })
})

describe('journal (issue 26)', () => {
  it('appends from two instances are read in one order, and a follower gets every record via LISTEN/NOTIFY', async () => {
    const url = fresh()
    const [a, b, reader] = await Promise.all([0, 1, 2].map(() => createPostgresStore({ connectionString: url })))
    const controller = new AbortController()
    const followed: number[] = []
    const follow = (async () => {
      for await (const { record } of reader.read({ follow: true, signal: controller.signal })) {
        if (record.type === 'call-started') followed.push((record.arguments as { n: number }).n)
        if (followed.length === 400) controller.abort()
      }
    })()
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => [
        a.append([record(`a${i}`, 'call-started', i)]),
        b.append([record(`b${i}`, 'call-started', 1000 + i)]),
      ]).flat(),
    )
    await follow
    const stored = await collect(reader)
    expect(stored).toHaveLength(400)
    expect(followed).toEqual(stored)
    // Each writer's records keep their order.
    expect(stored.filter((n) => n < 1000)).toEqual([...Array(200).keys()])
    expect(stored.filter((n) => n >= 1000)).toEqual([...Array(200).keys()].map((i) => 1000 + i))
    // A cursor resumes after a position.
    const seqs: number[] = []
    for await (const { seq } of reader.read()) seqs.push(seq)
    expect(await collect(reader, seqs[99])).toEqual(stored.slice(100))
    await Promise.all([a, b, reader].map((s) => s.close()))
  })

  it('retention deletes records older than the setting', async () => {
    const url = fresh()
    const store = await createPostgresStore({ connectionString: url })
    await store.append([record('old', 'call-started', 1), record('new', 'call-started', 2)])
    await store.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query("UPDATE toolgate_journal SET created_at = now() - interval '3 days' WHERE call_id = 'old'")
    await client.end()
    const kept = await createPostgresStore({ connectionString: url, retentionDays: 2 })
    expect(await collect(kept)).toEqual([2])
    await kept.close()
  })
})

describe('claims and decisions under concurrency (issue 26)', () => {
  it('50 concurrent claims of one decided call: exactly one wins; none without the recorded decision', async () => {
    const url = fresh()
    const stores = await Promise.all(Array.from({ length: 5 }, () => createPostgresStore({ connectionString: url })))
    await stores[0].saveTurn('turn-1', state(['c1', 'c2']))
    expect(await stores[1].decide('turn-1', 'c1', { kind: 'allowed-once' })).toEqual({ applied: true })
    const call = { agentId: 'a', callId: 'c1', toolName: 't', arguments: {} }
    const claims = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % 5].claim(call, { turnId: 'turn-1', kind: 'allowed-once' })),
    )
    expect(claims.filter((c) => c.won)).toHaveLength(1)
    const lost = claims.find((c) => !c.won)
    expect(lost?.won === false && lost.holder?.pid).toBe(process.pid)
    // c2 has no recorded decision: a claim that depends on one is refused.
    const undecided = await stores[2].claim({ ...call, callId: 'c2' }, { turnId: 'turn-1', kind: 'allowed-once' })
    expect(undecided).toMatchObject({ won: false, reason: expect.stringMatching(/not recorded as "allowed-once"/) })
    // A released claim can be taken again (the call suspended again instead of running).
    const winner = claims.find((c) => c.won)
    if (winner?.won) await winner.release()
    expect((await stores[3].claim(call)).won).toBe(true)
    await Promise.all(stores.map((s) => s.close()))
  })

  it('two viewers deciding the same call at once: one decision is applied, the other is told which', async () => {
    const url = fresh()
    const [viewerA, viewerB] = await Promise.all([0, 1].map(() => createPostgresStore({ connectionString: url })))
    for (let round = 0; round < 10; round++) {
      const id = `turn-${round}`
      await viewerA.saveTurn(id, state(['c']))
      const [x, y] = await Promise.all([
        viewerA.decide(id, 'c', { kind: 'allowed-once' }),
        viewerB.decide(id, 'c', { kind: 'denied', reason: 'no' }),
      ])
      expect([x.applied, y.applied].filter(Boolean)).toHaveLength(1)
      const loser = x.applied ? y : x
      expect(loser).toMatchObject({ applied: false, reason: 'call "c" was already decided' })
      const turn = await viewerB.loadTurn(id)
      expect(Object.keys(turn?.decisions ?? {})).toEqual(['c'])
      expect(loser.applied === false && loser.existing).toEqual(turn?.decisions.c)
    }
    expect(await viewerA.decide('turn-0', 'nope', { kind: 'allowed-once' })).toMatchObject({
      applied: false,
      reason: 'call "nope" is not pending in turn "turn-0"',
    })
    await viewerA.closeTurn('turn-1')
    expect(await viewerB.decide('turn-1', 'c', { kind: 'allowed-once' })).toMatchObject({ applied: false })
    expect((await viewerB.pendingCalls()).map((p) => p.turnId)).not.toContain('turn-1')
    await Promise.all([viewerA, viewerB].map((s) => s.close()))
  })

  it('a rate-limit bucket is shared: 30 concurrent takes from two instances, capacity 10, no refill → 10 allowed', async () => {
    const url = fresh()
    const [a, b] = await Promise.all([0, 1].map(() => createPostgresStore({ connectionString: url })))
    const limit = { capacity: 10, refillPerSecond: 0 }
    const takes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take('user:1', limit)))
    expect(takes.filter((t) => t.allowed)).toHaveLength(10)
    expect(takes.find((t) => !t.allowed)?.retryAfterMs).toBe(Number.POSITIVE_INFINITY)
    await a.setStandingApproval({ agentId: 'ag', toolName: 'bash', kind: 'allowed-always' })
    expect(await b.standingApprovals('ag')).toEqual([{ agentId: 'ag', toolName: 'bash', kind: 'allowed-always' }])
    expect(await b.standingApprovals(null)).toEqual([])
    expect(await b.revokeStandingApproval('bash', 'ag')).toBe(true)
    expect(await a.standingApprovals()).toEqual([])
    await a.putSession({ id: 's1', instance: 'A', createdAt: Date.now() })
    expect((await b.getSession('s1'))?.instance).toBe('A')
    await Promise.all([a, b].map((s) => s.close()))
  })
})

describe('a database restart mid-session (issue 26)', () => {
  it('operations fail with STORE_UNAVAILABLE while it is down, then work again; a follower reads on', async () => {
    const url = fresh()
    const store = await createPostgresStore({ connectionString: url })
    await store.append([record('before', 'call-started', 1)])
    const controller = new AbortController()
    const followed: number[] = []
    const follow = (async () => {
      for await (const { record: r } of store.read({ follow: true, signal: controller.signal })) {
        if (r.type === 'call-started') followed.push((r.arguments as { n: number }).n)
        if (followed.length === 2) controller.abort()
      }
    })()
    server.stop()
    try {
      const error = await store.append([record('during', 'call-started', 99)]).catch((e) => e)
      expect(error).toBeInstanceOf(StoreError)
      expect(error.code).toBe('STORE_UNAVAILABLE')
      expect(error.message).toMatch(
        /^PostgreSQL store postgres:\/\/postgres@127\.0\.0\.1:\d+\/t\d+: journal append failed: /,
      )
      await expect(store.decide('x', 'y', { kind: 'allowed-once' })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
      })
    } finally {
      server.start()
    }
    // Recovery: the pool reconnects on its own.
    await store.append([record('after', 'call-started', 2)])
    await follow
    expect(followed).toEqual([1, 2])
    expect(await collect(store)).toEqual([1, 2])
    await store.close()
  })
})
