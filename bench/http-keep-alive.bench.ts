// Connection resets on `serve --http` under machine load: a 2025-11-25 client (SDK v1, fetch) runs
// bursts of `tools/call` with 256 in flight against toolgate (and optionally another build and the
// bare v2 relay) in front of server-everything, while busy-loop processes load the CPUs, and counts
// the calls that fail by cause ("other side closed", ECONNRESET). Not part of `npm test`. After
// `npm run build`:
//
//   npx tsx bench/http-keep-alive.bench.ts
//   KEEPALIVE_BENCH_BURST    calls per burst (default 2048)
//   KEEPALIVE_BENCH_ROUNDS   bursts per gateway (default 2)
//   KEEPALIVE_BENCH_SPIN     busy-loop processes during the bursts (default 2)
//   KEEPALIVE_BENCH_BEFORE   another build's dist/cli/bin.cjs, run first as "toolgate (before)"
//   KEEPALIVE_BENCH_RELAY=1  the bare v2 relay too

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { spawnUntil, stop } from './processes.js'
import { isMain } from './util.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const RELAY = path.resolve(import.meta.dirname, 'fixtures/bare-v2-relay.mjs')
const BIN = path.resolve(import.meta.dirname, '../dist/cli/bin.cjs')
const BEFORE = process.env.KEEPALIVE_BENCH_BEFORE
const BURST = Number(process.env.KEEPALIVE_BENCH_BURST ?? 2048)
const ROUNDS = Number(process.env.KEEPALIVE_BENCH_ROUNDS ?? 2)
const SPIN = Number(process.env.KEEPALIVE_BENCH_SPIN ?? 2)
const IN_FLIGHT = 256

/** Why a call failed, in a few words: the fetch error's cause when there is one. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
  if (cause?.message !== undefined) return `${String(cause.code ?? '')} ${String(cause.message)}`.trim()
  return String(error).slice(0, 80)
}

async function bursts(gateway: string, url: string, tool: string): Promise<void> {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  const call = () => client.callTool({ name: tool, arguments: { message: 'x' } })
  for (let i = 0; i < 50; i++) await call()
  const spinners: ChildProcess[] = Array.from({ length: SPIN }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  )
  try {
    for (let round = 0; round < ROUNDS; round++) {
      let next = 0
      const causes = new Map<string, number>()
      const start = performance.now()
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < BURST) {
            next++
            await call().catch((error: unknown) => {
              const cause = causeOf(error)
              causes.set(cause, (causes.get(cause) ?? 0) + 1)
            })
          }
        }),
      )
      const seconds = (performance.now() - start) / 1000
      const errors = [...causes.values()].reduce((sum, n) => sum + n, 0)
      const why = [...causes].map(([cause, n]) => `${n} ${cause}`).join('; ')
      console.log(
        `| ${gateway} | ${round + 1} | ${Math.round(BURST / seconds)} | ${errors} | ${why} | ${loadavg()[0].toFixed(1)} |`,
      )
    }
  } finally {
    for (const spinner of spinners) spinner.kill('SIGKILL')
    await client.close().catch(() => {})
  }
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-keepalive-bench-'))
  const config = path.join(dir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({ servers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  )
  const gateways: Array<[string, string[], RegExp, string]> = [
    ...(BEFORE
      ? [['toolgate (before)', [BEFORE], /serving MCP at (\S+)/, 'ev__echo'] as [string, string[], RegExp, string]]
      : []),
    ['toolgate', [BIN], /serving MCP at (\S+)/, 'ev__echo'],
    ...(process.env.KEEPALIVE_BENCH_RELAY
      ? [
          ['bare v2 relay', [RELAY, 'http', process.execPath, EVERYTHING, 'stdio'], /relaying at (\S+)/, 'echo'] as [
            string,
            string[],
            RegExp,
            string,
          ],
        ]
      : []),
  ]
  console.log(`\n${IN_FLIGHT} in flight, ${BURST} calls per burst, ${SPIN} busy loops beside`)
  console.log('| gateway | burst | calls/s | errors | causes | load (1 min) |')
  console.log('| --- | ---: | ---: | ---: | --- | ---: |')
  try {
    for (const [gateway, args, ready, tool] of gateways) {
      const toolgate = args[0] !== RELAY
      const started = spawnUntil(
        toolgate ? [...args, 'serve', '--config', config, '--root', dir, '--http', '0'] : args,
        ready,
      )
      try {
        await bursts(gateway, (await started.match)[1], tool)
      } finally {
        await stop(started.child)
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
