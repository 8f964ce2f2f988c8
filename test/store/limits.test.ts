// Rate limits across instances (issue 26 with issue 24's limits): with a store, an identity's token
// bucket is a row of the store, so two gateways together admit no more than the burst; without the
// store each instance has its own bucket; when the store cannot answer, the instance's own applies.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IdentityLimiter } from '../../src/gateway/http-limits.js'
import type { Identity } from '../../src/mcp/protocol/identity.js'
import { createPostgresStore } from '../../src/store/index.js'
import { spawnServe, tempDir, writeConfig } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
beforeAll(async () => {
  server = await startPgServer()
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  await killChildren(children)
  server?.destroy()
  await work?.cleanup()
})

const who = (subject: string): Identity => ({ subject, groups: [], scopes: [], claims: {} })

async function gateway(args: string[]): Promise<string> {
  return (await spawnServe(['--http', '0', ...args], { children })).url
}

/** One authenticated POST (a ping outside any session: admitted requests get 400, refused ones 429). */
async function post(endpoint: string, token: string): Promise<number> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  })
  await response.text()
  return response.status
}

describe('rate limits shared through the store (issue 26)', { timeout: 180_000 }, () => {
  it('two limiters on one database admit the burst once between them; the retry is the shared refill', async () => {
    const url = server.createDatabase('limits')
    const stores = await Promise.all([0, 1].map(() => createPostgresStore({ connectionString: url })))
    const config = { rate: { perSecond: 0.01, burst: 5 } }
    const limiters = [new IdentityLimiter(config), new IdentityLimiter(config)]
    const failures: unknown[] = []
    const admissions = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        limiters[i % 2].admitShared(
          who('alice'),
          false,
          (key, limit) => stores[i % 2].take(key, limit),
          (e) => {
            failures.push(e)
          },
        ),
      ),
    )
    expect(admissions.filter((a) => a.ok)).toHaveLength(5)
    const refused = admissions.find((a) => !a.ok)
    // One token at 0.01/s: about 100 s, whatever instance is asked.
    expect(refused).toMatchObject({ ok: false, reason: 'rate limit of 0.01 requests per second (burst 5) reached' })
    expect(refused?.ok === false && refused.retryAfterSec).toBeGreaterThan(90)
    expect(failures).toEqual([])
    // Another identity has its own bucket.
    expect(
      (
        await limiters[0].admitShared(
          who('bob'),
          false,
          (k, l) => stores[0].take(k, l),
          () => {},
        )
      ).ok,
    ).toBe(true)
    await Promise.all(stores.map((s) => s.close()))
  })

  it('concurrency stays per instance: a refused take gives its slot back; a store that fails leaves the local bucket', async () => {
    const limiter = new IdentityLimiter({ rate: { perSecond: 1, burst: 2 }, concurrency: 1 })
    const refuse = async () => ({ allowed: false, remaining: 0, retryAfterMs: 2500 })
    const refused = await limiter.admitShared(who('a'), true, refuse, () => {})
    expect(refused).toMatchObject({ ok: false, retryAfterSec: 3 })
    const held = await limiter.admitShared(
      who('a'),
      true,
      async () => ({ allowed: true, remaining: 1, retryAfterMs: 0 }),
      () => {},
    )
    expect(held.ok).toBe(true)
    expect(await limiter.admitShared(who('a'), true, refuse, () => {})).toMatchObject({
      ok: false,
      reason: 'concurrency limit of 1 requests in progress reached',
    })
    if (held.ok) held.release()
    const seen: string[] = []
    const down = async () => {
      throw new Error('database down')
    }
    // The local bucket (burst 2) decides while the store is down.
    const local = [0, 1, 2].map(() => limiter.admitShared(who('b'), false, down, (e) => seen.push(String(e))))
    expect((await Promise.all(local)).map((a) => a.ok)).toEqual([true, true, false])
    expect(seen).toEqual(['Error: database down', 'Error: database down', 'Error: database down'])
  })

  it('two `serve --http --store` gateways: an identity gets its burst once across both; without the store, once per gateway', async () => {
    const url = server.createDatabase('limits_gateways')
    const token = 'limits-test-token'
    const config = await writeConfig(
      work.dir,
      {
        root: work.dir,
        auth: { tokens: [{ sha256: createHash('sha256').update(token).digest('hex'), subject: 'carol' }] },
        limits: { rate: { perSecond: 0.01, burst: 4 } },
      },
      'limits.json',
    )
    const shared = await Promise.all([0, 1].map(() => gateway(['--config', config, '--store', url])))
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push(await post(shared[i % 2], token))
    expect(statuses.filter((s) => s !== 429)).toHaveLength(4)
    expect(statuses.slice(4)).toEqual([429, 429, 429, 429])

    const apart = await Promise.all([0, 1].map(() => gateway(['--config', config])))
    const alone: number[] = []
    for (let i = 0; i < 8; i++) alone.push(await post(apart[i % 2], token))
    expect(alone.filter((s) => s !== 429)).toHaveLength(8)
  })

  it('a JSON-RPC batch takes one token per message from the shared bucket (issue 36, item 2)', async () => {
    const url = server.createDatabase('limits_batches')
    const token = 'batch-test-token'
    const config = await writeConfig(
      work.dir,
      {
        root: work.dir,
        auth: { tokens: [{ sha256: createHash('sha256').update(token).digest('hex'), subject: 'dave' }] },
        limits: { rate: { perSecond: 0.001, burst: 5 } },
      },
      'limits-batch.json',
    )
    const [a, b] = await Promise.all([0, 1].map(() => gateway(['--config', config, '--store', url])))
    const batch = async (endpoint: string, n: number) => {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))),
      })
      return {
        status: response.status,
        message: ((await response.json()) as { error: { message: string } }).error.message,
      }
    }
    // Admitted (3 of 5 tokens), then refused as outside any session.
    expect(await batch(a, 3)).toMatchObject({ status: 400, message: expect.stringMatching(/no session/) })
    // The other instance sees the 2 left: a batch of 3 does not fit, a batch of 2 does.
    expect(await batch(b, 3)).toMatchObject({ status: 429, message: expect.stringMatching(/^Too Many Requests/) })
    expect(await batch(b, 2)).toMatchObject({ status: 400, message: expect.stringMatching(/no session/) })
    expect(await batch(a, 1)).toMatchObject({ status: 429 })
  })
})
