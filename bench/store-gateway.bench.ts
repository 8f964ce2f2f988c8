// Issue 26: the added latency of one gateway `tools/call` with the PostgreSQL store, against no
// journal and the file journal, in the same run. The path is serve's: the SDK client, an in-memory
// transport, `createMcpServer`, and for the store `shareStore` (a body waits for its call's
// `call-started` record, the response for the `result` record). Starts its own PostgreSQL 15
// (test/store/pg-server.ts, `fsync = on`), so it is run by hand, not by bench/index.ts:
//   npm run build && npx tsx bench/store-gateway.bench.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Context } from 'cordis'
import { startPgServer } from '../test/store/pg-server.js'
import { addTool, isMain, loadBuilt } from './util.js'

const { Journal, ToolRuntime, createAgent } = await loadBuilt()
const dist = (path: string) => import(new URL(`../dist/${path}`, import.meta.url).href)
const { createPostgresStore } = (await dist('store/index.js')) as typeof import('../src/store/index.js')
const { createMcpServer } = (await dist('mcp/server/server.js')) as typeof import('../src/mcp/server/server.js')
const { shareStore } = (await dist('gateway/serve-store.js')) as typeof import('../src/gateway/serve-store.js')
type Store = Awaited<ReturnType<typeof createPostgresStore>>

const quiet = { info: () => {}, debug: () => {} }

/** A gateway (one agent, one `add` tool) and a connected client; journaled as `journal` says. */
async function gateway(journal: { path: string } | { store: Store } | undefined) {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  ctx.tools.register(await addTool())
  const agent = createAgent(ctx, { id: 'toolgate' })
  let shared: Awaited<ReturnType<typeof shareStore>> | undefined
  if (journal && 'path' in journal) await agent.ctx.plugin(Journal, journal)
  if (journal && 'store' in journal) shared = await shareStore({ agent }, journal.store, quiet)
  const plain = createMcpServer(ctx, { agent, name: 'bench', version: '1.0.0' })
  const server = shared ? shared.acknowledging(plain) : plain
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(clientSide)
  return { client, close: async () => void (await client.close()) }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const us = (ms: number) => `${Math.round(ms * 1000).toLocaleString('en')} µs`

async function sequential(g: Awaited<ReturnType<typeof gateway>>, n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await g.client.callTool({ name: 'add', arguments: { a: i, b: 2 } })
    out.push(performance.now() - t)
  }
  return out
}

/** `callers` loops each making `perCaller` calls at once: per-call latencies and calls per second. */
async function concurrent(gateways: Awaited<ReturnType<typeof gateway>>[], perCaller: number) {
  const latencies: number[] = []
  const started = performance.now()
  await Promise.all(
    gateways.map(async (g) => {
      for (let i = 0; i < perCaller; i++) {
        const t = performance.now()
        await g.client.callTool({ name: 'add', arguments: { a: i, b: 2 } })
        latencies.push(performance.now() - t)
      }
    }),
  )
  return { median: median(latencies), perSecond: latencies.length / ((performance.now() - started) / 1000) }
}

export async function run(): Promise<void> {
  const server = await startPgServer()
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-gateway-bench-'))
  const lines: string[] = []
  try {
    const url = server.createDatabase('bench')
    const { default: pg } = await import('pg')
    const probe = new pg.Client({ connectionString: url })
    await probe.connect()
    const setting = async (name: string) => (await probe.query(`SHOW ${name}`)).rows[0][name]
    lines.push(
      `server: fsync = ${await setting('fsync')}, synchronous_commit = ${await setting('synchronous_commit')}, wal_sync_method = ${await setting('wal_sync_method')}`,
    )
    // The floors: a round trip, and one durable commit (a one-row insert waiting for its WAL flush).
    await probe.query('CREATE TABLE bench_commit (n integer)')
    const trips: number[] = []
    const commits: number[] = []
    for (let i = 0; i < 300; i++) {
      let t = performance.now()
      await probe.query('SELECT 1')
      trips.push(performance.now() - t)
      t = performance.now()
      await probe.query('INSERT INTO bench_commit VALUES ($1)', [i])
      commits.push(performance.now() - t)
    }
    lines.push(`median SELECT 1 round trip: ${us(median(trips))}`)
    lines.push(`median durable commit (one-row INSERT): ${us(median(commits))}`)

    const syncStore = await createPostgresStore({ connectionString: url })
    const asyncStore = await createPostgresStore({ connectionString: url, synchronousCommit: false })
    const cases = [
      { name: 'no journal', g: await gateway(undefined) },
      { name: 'file journal', g: await gateway({ path: join(dir, 'calls.jsonl') }) },
      { name: 'PostgreSQL store', g: await gateway({ store: syncStore }) },
      { name: 'PostgreSQL store, synchronousCommit: false', g: await gateway({ store: asyncStore }) },
    ]
    for (const c of cases) await sequential(c.g, 200) // warm-up

    // Commits per call, counted by the server (every transaction in the bench database).
    const xacts = async () =>
      Number(
        (await probe.query("SELECT xact_commit FROM pg_stat_database WHERE datname = 'bench'")).rows[0].xact_commit,
      )
    await probe.query('SELECT pg_stat_clear_snapshot()')
    const before = await xacts()
    await sequential(cases[2].g, 200)
    await new Promise((resolve) => setTimeout(resolve, 600)) // the statistics are reported every 500 ms
    await probe.query('SELECT pg_stat_clear_snapshot()')
    const after = await xacts()
    lines.push(`commits per sequential call, PostgreSQL store: ${((after - before - 2) / 200).toFixed(2)}`)

    // Interleaved rounds, so machine load hits every case alike.
    const samples = cases.map(() => [] as number[])
    for (let round = 0; round < 5; round++)
      for (const [i, c] of cases.entries()) samples[i].push(...(await sequential(c.g, 300)))
    const base = median(samples[0])
    for (const [i, c] of cases.entries()) {
      const m = median(samples[i])
      lines.push(`median gateway call, ${c.name}: ${us(m)}${i === 0 ? '' : ` (+${us(m - base)})`}`)
    }

    // 16 clients at once on one gateway: their records share commits (group commit).
    for (const [name, journal] of [
      ['no journal', undefined],
      ['PostgreSQL store', { store: syncStore }],
    ] as const) {
      const clients = await Promise.all(Array.from({ length: 16 }, () => gateway(journal)))
      await concurrent(clients, 20)
      const { median: m, perSecond } = await concurrent(clients, 100)
      lines.push(
        `16 concurrent clients, ${name}: median ${us(m)} per call, ${Math.round(perSecond).toLocaleString('en')} calls/s`,
      )
      for (const c of clients) await c.close()
    }
    for (const c of cases) await c.g.close()
    await probe.end()
    await syncStore.close()
    await asyncStore.close()
    console.log(lines.join('\n'))
  } finally {
    server.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
