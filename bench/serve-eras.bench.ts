// One `tools/call` through `toolgate serve --http` in each protocol era (issue 35, item 2): a 2025
// client on its session and a 2026-07-28 client (the SDK v2 client pinned to it, one request per
// call and a fresh per-request server in the gateway), the same gateway process, the calls
// interleaved. Upstream: the registry's server-everything (`echo`) over stdio. Run after
// `npm run build`.
//
//   ERAS_BENCH_CALLS   calls per era (default 1000)

import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { spawnUntil, stop } from './processes.js'
import { isMain } from './util.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const BIN = path.resolve(import.meta.dirname, '../dist/cli/bin.cjs')
const CALLS = Number(process.env.ERAS_BENCH_CALLS ?? 1000)
const WARMUP = 200

type Call = () => Promise<object>

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]

async function timeCall(call: Call): Promise<number> {
  const start = performance.now()
  const result = await call()
  const elapsed = performance.now() - start
  if ((result as { isError?: unknown }).isError) throw new Error(`the call failed: ${JSON.stringify(result)}`)
  return elapsed
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-eras-bench-'))
  const config = path.join(dir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({ servers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  )
  const gateway = spawnUntil(
    [BIN, 'serve', '--config', config, '--root', dir, '--http', '0'],
    /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  )
  const url = new URL((await gateway.match)[1])
  const legacy = new Client({ name: 'bench', version: '1.0.0' })
  await legacy.connect(new StreamableHTTPClientTransport(url))
  const modern = new ModernClient(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  await modern.connect(new ModernTransport(url))
  const args = { name: 'ev__echo', arguments: { message: 'x' } }
  const cases: [string, Call][] = [
    ['HTTP 2025-11-25 (session)', () => legacy.callTool(args)],
    ['HTTP 2026-07-28 (per request)', () => modern.callTool(args)],
  ]
  try {
    for (const [, call] of cases) for (let i = 0; i < WARMUP; i++) await timeCall(call)
    const samples = cases.map(() => [] as number[])
    for (let round = 0; round < CALLS; round++)
      for (let k = 0; k < cases.length; k++) {
        const i = (k + round) % cases.length
        samples[i].push(await timeCall(cases[i][1]))
      }
    console.log(`\none tools/call through serve --http, ${CALLS} calls per era, interleaved`)
    for (const [i, [label]] of cases.entries()) {
      const p50 = quantile(samples[i], 0.5).toFixed(3)
      const p90 = quantile(samples[i], 0.9).toFixed(3)
      console.log(`${label.padEnd(32)} p50 ${p50} ms   p90 ${p90} ms`)
    }
  } finally {
    await legacy.close().catch(() => {})
    await modern.close().catch(() => {})
    await stop(gateway.child)
    await rm(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
