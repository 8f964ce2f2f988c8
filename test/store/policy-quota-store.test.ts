// Policy quotas in a real PostgreSQL through the library (issue 38, item 3 and "Done when"): the
// guide's per-person hourly quota shared by two runtimes on one database, only calls that run
// counting, and the buckets of ended windows pruned.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent, createToolRuntime, type PolicyInput, type ToolRuntimeHandle } from '../../src/index.js'
import { storeQuotaCounter } from '../../src/policy/index.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { GUIDE_POLICY } from '../policy/guide-examples.js'
import { rawTool, signal } from '../runtime/helpers.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
const closers: (() => Promise<unknown>)[] = []
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {})
  server?.destroy()
})

async function store(url: string): Promise<Store> {
  const opened = await createPostgresStore({ connectionString: url })
  closers.push(() => opened.close())
  return opened
}

async function runtime(url: string, policy: PolicyInput): Promise<ToolRuntimeHandle> {
  const handle = await createToolRuntime({
    policy,
    quotaStore: await store(url),
    approval: async () => ({ kind: 'denied', reason: 'the test says no' }),
  })
  closers.push(() => handle.dispose())
  for (const name of ['github__create_issue', 'transfer', 'fetch']) handle.tools.register(rawTool(name))
  return handle
}

let ids = 0
function call(handle: ToolRuntimeHandle, name: string, args: unknown, agent?: ReturnType<typeof createAgent>) {
  return handle.tools.execute({ callId: `c${++ids}`, name, arguments: args, signal: signal(), agent })
}

describe('policy quotas in PostgreSQL through the library', { timeout: 120_000 }, () => {
  it("the guide's per-person hourly quota is shared by two runtimes on one database", async () => {
    const url = server.createDatabase('library_quota')
    const one = await runtime(url, GUIDE_POLICY as unknown as PolicyInput)
    const two = await runtime(url, GUIDE_POLICY as unknown as PolicyInput)
    const alice1 = createAgent(one.ctx, { id: 'a1', identity: { subject: 'alice' } })
    const alice2 = createAgent(two.ctx, { id: 'a2', identity: { subject: 'alice' } })
    const bob = createAgent(two.ctx, { id: 'b', identity: { subject: 'bob' } })
    const args = { repo: 'acme/web', title: 't' }
    for (let i = 0; i < 20; i++) {
      const result = await call(i % 2 ? two : one, 'github__create_issue', args, i % 2 ? alice2 : alice1)
      expect(result.isError).toBe(false)
    }
    for (const [handle, agent] of [
      [one, alice1],
      [two, alice2],
    ] as const) {
      const over = await call(handle, 'github__create_issue', args, agent)
      expect(over.error?.info?.code).toBe('QUOTA_EXCEEDED')
      expect(over.error?.info?.rule).toBe('issue-quota')
    }
    expect((await call(two, 'github__create_issue', args, bob)).isError).toBe(false)
  })

  it('only calls that run count: a denied ask, and a call refused by its second quota', async () => {
    const url = server.createDatabase('library_refund')
    const policy: PolicyInput = {
      rules: [
        { id: 'all', tools: ['transfer', 'fetch'], quota: { calls: 2, per: 'hour', by: 'global' } },
        { id: 'each', tools: ['fetch'], quota: { calls: 1, per: 'hour', by: 'subject' } },
        { id: 'big', ask: ['transfer'], when: 'args.amount > 100' },
      ],
    }
    const one = await runtime(url, policy)
    const two = await runtime(url, policy)
    const alice = createAgent(one.ctx, { id: 'a', identity: { subject: 'alice' } })
    const bob = createAgent(two.ctx, { id: 'b', identity: { subject: 'bob' } })
    expect((await call(one, 'transfer', { amount: 500 }, alice)).error?.message).toContain('the test says no')
    expect((await call(one, 'fetch', {}, alice)).isError).toBe(false)
    expect((await call(one, 'fetch', {}, alice)).error?.info?.rule).toBe('each')
    // neither the denied ask nor alice's refused fetch took one of the two global calls
    expect((await call(two, 'fetch', {}, bob)).isError).toBe(false)
    expect((await call(two, 'transfer', { amount: 5 }, bob)).error?.info?.rule).toBe('all')
  })

  it('the buckets of ended windows are pruned, those of current windows kept', async () => {
    const url = server.createDatabase('quota_prune')
    const counter = storeQuotaCounter(await store(url))
    const hour = 3_600_000
    const start = Date.now() - (Date.now() % hour)
    for (const key of ['old-a', 'old-b', 'current']) expect(await counter.take(key, start, hour, 5)).toBe(true)
    expect(await counter.take('minute', start, 60_000, 5)).toBe(true)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      // Two windows ended an hour ago (their last take lies before the current window) and a
      // minute window's last take 90 s ago: pruned. The current hour's bucket stays.
      await client.query(
        "UPDATE toolgate_buckets SET at_ms = at_ms - 2 * 3600000 WHERE key LIKE '%old-%' OR key LIKE '%rate%'",
      )
      await client.query("UPDATE toolgate_buckets SET at_ms = at_ms - 90000 WHERE key LIKE '%minute%'")
      // A bucket of another kind (a rate limit) is not the quota's to prune.
      await client.query("INSERT INTO toolgate_buckets (key, tokens, at_ms) VALUES ('rate:x', 1, 0)")
      expect(await counter.prune()).toBe(3)
      const left = (await client.query<{ key: string }>('SELECT key FROM toolgate_buckets ORDER BY key')).rows
      expect(left.map((row) => row.key)).toEqual([`quota:${hour}:${start}:current`, 'rate:x'])
      // The current window still counts where it was.
      for (let i = 0; i < 4; i++) expect(await counter.take('current', start, hour, 5)).toBe(true)
      expect(await counter.take('current', start, hour, 5)).toBe(false)
      expect(await counter.prune()).toBe(0)
    } finally {
      await client.end()
    }
  })
})
