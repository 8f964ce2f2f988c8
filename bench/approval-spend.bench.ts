// Issue 35, item 4: what the store adds to an approval's retry with `serve --store` (the nonce of
// its requestState spent in PostgreSQL: a slice of pruning, then one insert committed with the WAL
// flush). Starts its own PostgreSQL 15 (test/store/pg-server.ts), so it is run by hand:
//   npx tsx bench/approval-spend.bench.ts
// 1. Latency of one spend, one after another (p50, p99).
// 2. Spends per second from 32 concurrent callers.
import { startPgServer } from '../test/store/pg-server.js'

const { createPostgresStore } = (await import(
  '../dist/store/index.js' as string
)) as typeof import('../src/store/index.js')

const pg = await startPgServer()
try {
  const store = await createPostgresStore({ connectionString: pg.createDatabase('spend') })
  const expires = () => Date.now() + 600_000
  const times: number[] = []
  for (let i = 0; i < 1100; i++) {
    const started = performance.now()
    await store.spendOnce(`seq-${i}`, expires())
    if (i >= 100) times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  const at = (q: number) => times[Math.floor(times.length * q)].toFixed(2)
  console.log(`one spend after another: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`)
  const total = 4000
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < total) await store.spendOnce(`par-${next++}`, expires())
    }),
  )
  console.log(`32 concurrent callers: ${Math.round(total / ((performance.now() - started) / 1000))} spends/s`)
  await store.close()
} finally {
  pg.destroy()
}
