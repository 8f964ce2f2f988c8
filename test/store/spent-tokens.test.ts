// Issue 35, item 4 (last bullet): with a store, any instance takes an approval's retry. The nonces of
// used approval states are spent in PostgreSQL (store schema version 4, `toolgate_spent`): one
// insert wins across instances, rows long expired are pruned, and two seals under one key (two
// instances) accept a state once between them; an expired state is refused and spends nothing.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spentInStore } from '../../src/gateway/spent-approvals.js'
import { createFileStore } from '../../src/journal/file-store.js'
import { APPROVAL_STATE_TTL_MS, ApprovalStateSeal, argumentsDigest } from '../../src/mcp/server/approval-state.js'
import { createPostgresStore, type Store, StoreError } from '../../src/store/index.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let url: string
let stores: Store[] = []

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('spent')
  stores = await Promise.all([
    createPostgresStore({ connectionString: url }),
    createPostgresStore({ connectionString: url }),
  ])
}, 120_000)
afterAll(async () => {
  for (const store of stores) await store.close().catch(() => {})
  server?.destroy()
})

async function rows(): Promise<string[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ token: string }>('SELECT token FROM toolgate_spent ORDER BY token')).rows.map(
      (row) => row.token,
    )
  } finally {
    await client.end()
  }
}

const bound = { subject: 'alice', tool: 'guarded', args: argumentsDigest({ n: 1 }) }
const fields = { ...bound, asked: 'guarded', callId: 'mcp-r-1' }
const KEY = new TextEncoder().encode('spent-tokens-test-state-key-0123')

describe('one-time tokens in PostgreSQL (issue 35, item 4)', { timeout: 120_000 }, () => {
  it('40 concurrent spends of one token from two instances: exactly one wins', async () => {
    const expires = Date.now() + 60_000
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => stores[i % 2].spendOnce('race', expires)))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await stores[0].spendOnce('race', expires)).toBe(false)
  })

  it('rows expired past the grace are pruned; a recently expired one is still remembered', async () => {
    const now = Date.now()
    expect(await stores[0].spendOnce('long-gone', now - 2 * 3_600_000)).toBe(true)
    expect(await rows()).toContain('long-gone')
    // The next spend prunes what expired more than the grace ago, and keeps what expired since.
    expect(await stores[1].spendOnce('just-expired', now - 60_000)).toBe(true)
    const left = await rows()
    expect(left).not.toContain('long-gone')
    expect(left).toContain('just-expired')
    expect(await stores[1].spendOnce('just-expired', now + 60_000)).toBe(false)
  })

  it('two instances under one key: a state is accepted once between them, on either', async () => {
    const [a, b] = stores.map((store) => new ApprovalStateSeal(KEY, spentInStore(store)))
    const wire = a.seal(fields)
    // Sealed on A, opened on B: the retry need not come back.
    const opened = await b.open(wire, bound)
    expect(opened).toMatchObject({ ok: true, state: fields })
    expect(await a.open(wire, bound)).toEqual({ ok: false, reason: 'it has already been used' })
    expect(await b.open(wire, bound)).toEqual({ ok: false, reason: 'it has already been used' })
    // Under another key (another gateway), refused.
    const stranger = new ApprovalStateSeal(undefined, spentInStore(stores[0]))
    expect((await stranger.open(a.seal(fields), bound)).ok).toBe(false)
  })

  it('an expired or foreign state is refused and spends nothing', async () => {
    const [a, b] = stores.map((store) => new ApprovalStateSeal(KEY, spentInStore(store)))
    const before = await rows()
    const wire = a.seal(fields, 0)
    expect(await b.open(wire, bound, APPROVAL_STATE_TTL_MS)).toEqual({ ok: false, reason: 'it has expired' })
    const fresh = a.seal(fields)
    expect(await b.open(fresh, { ...bound, subject: 'bob' })).toEqual({
      ok: false,
      reason: 'it was issued to another caller',
    })
    expect(await rows()).toEqual(before)
    // Its own caller's retry still goes through.
    expect((await b.open(fresh, bound)).ok).toBe(true)
  })

  it('a store out of reach refuses to decide: open rejects, nothing is accepted', async () => {
    const closed = await createPostgresStore({ connectionString: url })
    await closed.close()
    const seal = new ApprovalStateSeal(KEY, spentInStore(closed))
    await expect(seal.open(seal.seal(fields), bound)).rejects.toBeInstanceOf(StoreError)
  })

  it('the file store remembers spent tokens in its process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-spent-'))
    try {
      const store = createFileStore({ journal: join(dir, 'journal.jsonl') })
      expect(await store.spendOnce('t', Date.now() + 60_000)).toBe(true)
      expect(await store.spendOnce('t', Date.now() + 60_000)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
