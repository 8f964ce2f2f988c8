// The 2026-07-28 calls of `serve --http` with a store (issue 35, Performance): a 2026-07-28 client
// (SDK v2 pinned to it) calls server-everything's echo through toolgate, with no store, with
// `--store` on a real PostgreSQL (the CLI), and through serve's 2026-07-28 leg over the file store
// and over PostgreSQL (bench/fixtures/store-leg.mjs: `serve --store` takes only PostgreSQL).
// Per case: p50 of one call (the cases interleaved call by call), calls/s with 256 in flight
// (errors counted), the gateway process's own CPU per 1,000 calls (/proc user+system, upstream and
// database excluded). Starts its own PostgreSQL 15 (test/store/pg-server.ts, `fsync = on`). Not part
// of `npm test`. Run after `npm run build`:
//
//   npx tsx bench/serve-store.bench.ts
//   STORE_BENCH_BEFORE  another checkout's root (built: dist/), run beside this one as "before"
//   STORE_BENCH_CALLS   sequential calls per case for the p50 (default 300)
//   STORE_BENCH_BURST   calls per burst, 256 in flight (default 2048)

import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { startPgServer } from '../test/store/pg-server.js'
import { spawnUntil, stop } from './processes.js'
import { isMain } from './util.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const LEG = path.resolve(import.meta.dirname, 'fixtures/store-leg.mjs')
const HERE = path.resolve(import.meta.dirname, '..')
const BEFORE = process.env.STORE_BENCH_BEFORE
const CALLS = Number(process.env.STORE_BENCH_CALLS ?? 300)
const BURST = Number(process.env.STORE_BENCH_BURST ?? 2048)
const IN_FLIGHT = 256
const WARMUP = 50
const TICK_MS = 10 // USER_HZ is 100 on Linux

interface Case {
  label: string
  pid: number
  call: () => Promise<void>
}

/** The process's own user+system CPU so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]

export async function run(): Promise<void> {
  const pg = await startPgServer()
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-store-bench-'))
  const config = path.join(dir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({ servers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  )
  const builds: Array<[string, string]> = [['after', HERE], ...(BEFORE ? [['before', BEFORE] as [string, string]] : [])]
  const children: ChildProcess[] = []
  const clients: Client[] = []
  const cases: Case[] = []
  let databases = 0
  const add = async (label: string, args: string[]) => {
    const started = spawnUntil(args, /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)
    children.push(started.child)
    const url = (await started.match)[1]
    const client = new Client(
      { name: 'bench', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    clients.push(client)
    cases.push({
      label,
      pid: started.child.pid as number,
      call: async () => {
        const result = await client.callTool({ name: 'ev__echo', arguments: { message: 'x' } })
        if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result.content)}`)
      },
    })
  }
  console.log(
    `\nload average at start: ${loadavg().map((v) => v.toFixed(1))}; builds: ${builds.map(([, root]) => root)}`,
  )
  try {
    for (const [name, root] of builds) {
      const bin = path.join(root, 'dist/cli/bin.cjs')
      const serve = [bin, 'serve', '--config', config, '--root', dir, '--http', '0']
      await add(`${name}: serve --http, no store`, serve)
      await add(`${name}: serve --http --store (PostgreSQL)`, [
        ...serve,
        '--store',
        pg.createDatabase(`bench_${++databases}`),
      ])
      const upstream = [process.execPath, EVERYTHING, 'stdio']
      await add(`${name}: 2026 leg, file store`, [
        LEG,
        path.join(root, 'dist'),
        'file',
        path.join(dir, `journal-${name}.jsonl`),
        ...upstream,
      ])
      await add(`${name}: 2026 leg, PostgreSQL`, [
        LEG,
        path.join(root, 'dist'),
        'postgres',
        pg.createDatabase(`bench_${++databases}`),
        ...upstream,
      ])
    }
    for (const { call } of cases) for (let i = 0; i < WARMUP; i++) await call()
    const samples = cases.map(() => [] as number[])
    for (let round = 0; round < CALLS; round++)
      for (let k = 0; k < cases.length; k++) {
        const i = (k + round) % cases.length
        const start = performance.now()
        await cases[i].call()
        samples[i].push(performance.now() - start)
      }
    console.log(`\n| HTTP 2026-07-28 | p50 | p90 | calls/s at ${IN_FLIGHT} in flight | errors | CPU per 1k calls |`)
    console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
    for (const [i, c] of cases.entries()) {
      let next = 0
      let errors = 0
      let firstError: unknown
      const cpuBefore = cpuMs(c.pid)
      const start = performance.now()
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < BURST) {
            next++
            await c.call().catch((error: unknown) => {
              errors++
              firstError ??= error
            })
          }
        }),
      )
      const seconds = (performance.now() - start) / 1000
      const cpu = cpuMs(c.pid) - cpuBefore
      console.log(
        `| ${c.label} | ${quantile(samples[i], 0.5).toFixed(2)} ms | ${quantile(samples[i], 0.9).toFixed(2)} ms | ` +
          `${Math.round(BURST / seconds)} | ${errors} | ${(cpu / BURST).toFixed(2)} s |`,
      )
      if (firstError) console.log(`  first error: ${String(firstError).slice(0, 300)}`)
    }
  } finally {
    for (const client of clients) await client.close().catch(() => {})
    for (const child of children) await stop(child)
    pg.destroy()
    await rm(dir, { recursive: true, force: true })
  }
  console.log(`load average at the end: ${loadavg().map((v) => v.toFixed(1))}`)
}

if (isMain(import.meta.url)) await run()
