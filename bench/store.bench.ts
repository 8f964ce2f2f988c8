// Issue 26: the PostgreSQL store against the file journal, in the same run. Starts its own
// PostgreSQL 15 (test/store/pg-server.ts) in a temp dir, so it is run by hand, not by bench/index.ts:
//   npx tsx bench/store.bench.ts
// 1. Journal append throughput: 20,000 records appended by concurrent callers (group commit: one
//    transaction and one WAL flush per batch), against the file journal's synchronous appends.
// 2. Added median latency per call: `tools.execute` of a trivial tool, no journal vs file journal
//    vs store journal (the store's call-started record is acknowledged before the body runs).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { startPgServer } from '../test/store/pg-server.js'
import { addTool, isMain, loadBuilt } from './util.js'

const { Journal, ToolRuntime } = await loadBuilt()
const { createFileStore, createPostgresStore } = (await import(
  '../dist/store/index.js' as string
)) as typeof import('../src/store/index.js')
type Store = Awaited<ReturnType<typeof createPostgresStore>>

async function runtime(journal?: { path: string } | { store: Store }) {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  ctx.tools.register(await addTool())
  let plugged: InstanceType<typeof Journal> | undefined
  if (journal) {
    await ctx.plugin({
      name: 'bench-journal',
      inject: ['tools'],
      apply: (inner: Context) => {
        plugged = new Journal(inner, journal as never)
      },
    })
  }
  return { tools: ctx.tools, flush: () => plugged?.flush() ?? Promise.resolve() }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

function record(i: number) {
  return {
    v: 1 as const,
    type: 'call-started' as const,
    ts: Date.now(),
    callId: `c${i}`,
    rootCallId: `c${i}`,
    parentCallId: null,
    agentId: 'bench',
    toolName: 'add',
    arguments: { a: i, b: 2 },
  }
}

/** Records per second for `total` single-record appends issued by `callers` concurrent loops. */
async function appendRate(store: Store, total: number, callers: number): Promise<number> {
  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < total) await store.append([record(next++)])
    }),
  )
  return total / ((performance.now() - started) / 1000)
}

async function callLatencies(run: Awaited<ReturnType<typeof runtime>>, n: number): Promise<number[]> {
  const signal = new AbortController().signal
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await run.tools.execute({ callId: `l${i}`, name: 'add', arguments: { a: 1, b: 2 }, signal })
    out.push(performance.now() - t)
  }
  await run.flush()
  return out
}

export async function run(): Promise<void> {
  const server = await startPgServer()
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-bench-'))
  try {
    const url = server.createDatabase('bench')
    const pgStore = await createPostgresStore({ connectionString: url })
    const fileStore = createFileStore({ journal: join(dir, 'store.jsonl') })
    const syncedFileStore = createFileStore({ journal: join(dir, 'synced.jsonl'), fsync: true })
    await appendRate(pgStore, 2000, 64) // warm-up
    const lines: string[] = []
    for (const callers of [1, 64, 256]) {
      const rate = await appendRate(pgStore, callers === 1 ? 2000 : 20_000, callers)
      lines.push(`PostgreSQL append, ${callers} concurrent callers: ${Math.round(rate).toLocaleString('en')} records/s`)
    }
    lines.push(
      `file store append (no fsync), 64 callers: ${Math.round(await appendRate(fileStore, 20_000, 64)).toLocaleString('en')} records/s`,
    )
    lines.push(
      `file store append (fsync each), 64 callers: ${Math.round(await appendRate(syncedFileStore, 2000, 64)).toLocaleString('en')} records/s`,
    )
    const none = await runtime()
    const file = await runtime({ path: join(dir, 'calls.jsonl') })
    const store = await runtime({ store: pgStore })
    const asyncStore = await createPostgresStore({ connectionString: url, synchronousCommit: false })
    const lazy = await runtime({ store: asyncStore })
    lines.push(
      `PostgreSQL append, synchronousCommit: false, 1 caller: ${Math.round(await appendRate(asyncStore, 2000, 1)).toLocaleString('en')} records/s`,
    )
    // The floor: one round trip to the server on this machine, whatever the store does.
    const { default: pg } = await import('pg')
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const trips: number[] = []
    for (let i = 0; i < 2000; i++) {
      const t = performance.now()
      await client.query('SELECT 1')
      trips.push(performance.now() - t)
    }
    await client.end()
    lines.push(`median SELECT 1 round trip: ${(median(trips) * 1000).toFixed(0)} µs`)
    const runs = [none, file, store, lazy]
    for (const r of runs) await callLatencies(r, 300) // warm-up
    // Interleaved rounds, so machine load hits them alike.
    const samples: number[][] = runs.map(() => [])
    for (let round = 0; round < 5; round++)
      for (const [i, r] of runs.entries()) samples[i].push(...(await callLatencies(r, 400)))
    const [m0, m1, m2, m3] = samples.map(median)
    lines.push(`median call, no journal: ${(m0 * 1000).toFixed(0)} µs`)
    lines.push(`median call, file journal: ${(m1 * 1000).toFixed(0)} µs (+${((m1 - m0) * 1000).toFixed(0)} µs)`)
    lines.push(
      `median call, PostgreSQL store journal: ${(m2 * 1000).toFixed(0)} µs (+${((m2 - m0) * 1000).toFixed(0)} µs)`,
    )
    lines.push(
      `median call, PostgreSQL store journal, synchronousCommit: false: ${(m3 * 1000).toFixed(0)} µs (+${((m3 - m0) * 1000).toFixed(0)} µs)`,
    )
    console.log(lines.join('\n'))
    await pgStore.close()
    await asyncStore.close()
  } finally {
    server.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
