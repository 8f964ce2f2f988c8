// toolgate beside a bare relay on the SDK v2 (bench/fixtures/bare-v2-relay.mjs) and mcp-proxy from
// npm, in one run (issue 35, "Performance"): every gateway in front of server-everything over
// stdio, reached over Streamable HTTP by a 2025-11-25 client (SDK v1, the gateway's own 2025
// serving), over Streamable HTTP by a 2026-07-28 client (SDK v2 pinned to it), and over stdio
// (SDK v1 client, 2025 handshake). Per face: p50 of one `tools/call` (the gateways interleaved call
// by call), calls/s with 256 in flight (errors counted), the gateway process's own CPU per 1,000
// calls (/proc user+system, upstream excluded), and cold start to the first listing against
// server-everything alone. Not part of `npm test`. Run after `npm run build`:
//
//   npx tsx bench/gateway-sides.bench.ts
//   SIDES_BENCH_CALLS   sequential calls per case for the p50 (default 300)
//   SIDES_BENCH_BURST   calls per concurrency burst, 256 in flight (default 2048)

import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { spawnUntil, stop } from './processes.js'
import { isMain } from './util.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const RELAY = path.resolve(import.meta.dirname, 'fixtures/bare-v2-relay.mjs')
const BIN = path.resolve(import.meta.dirname, '../dist/cli/bin.cjs')
const CALLS = Number(process.env.SIDES_BENCH_CALLS ?? 300)
const BURST = Number(process.env.SIDES_BENCH_BURST ?? 2048)
const IN_FLIGHT = 256
const WARMUP = 50
const TICK_MS = 10 // USER_HZ is 100 on Linux

type Call = () => Promise<unknown>
interface Case {
  gateway: string
  pid: number
  call: Call
}

/** mcp-proxy (npm) when installed beside toolgate; the project does not depend on it. */
function mcpProxyBin(): string | undefined {
  try {
    return require.resolve('mcp-proxy/package.json')
  } catch {
    return undefined
  }
}

/** The process's own user+system CPU so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]

async function checked(call: Call): Promise<void> {
  const result = (await call()) as { isError?: unknown; content?: unknown }
  if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result.content)}`)
}

async function v1Http(url: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

async function v2Http(url: string): Promise<V2Client> {
  const client = new V2Client(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  await client.connect(new V2HttpTransport(new URL(url)))
  return client
}

async function v1Stdio(args: string[]): Promise<{ client: Client; pid: number }> {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' })
  await client.connect(transport)
  return { client, pid: transport.pid as number }
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-sides-bench-'))
  const config = path.join(dir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({ servers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  )
  const toolgateArgs = [BIN, 'serve', '--config', config, '--root', dir]
  const relayArgs = (face: string) => [RELAY, face, process.execPath, EVERYTHING, 'stdio']
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(1))
      .join(', ')
  console.log(
    `\nload average at start: ${load()}; mcp-proxy: ${mcpProxyBin() ?? 'not installed (no dependency added)'}`,
  )

  const toolgateHttp = spawnUntil([...toolgateArgs, '--http', '0'], /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)
  const relayHttp = spawnUntil(relayArgs('http'), /relaying at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)
  const tgUrl = (await toolgateHttp.match)[1]
  const relayUrl = (await relayHttp.match)[1]
  const tgStdio = await v1Stdio(toolgateArgs)
  const relayStdio = await v1Stdio(relayArgs('stdio'))
  const clients = {
    tg2025: await v1Http(tgUrl),
    tg2026: await v2Http(tgUrl),
    relay2025: await v1Http(relayUrl),
    relay2026: await v2Http(relayUrl),
  }
  const tool =
    (client: Client | V2Client, name: string): Call =>
    () =>
      client.callTool({ name, arguments: { message: 'x' } })
  const faces: Array<[string, Case[]]> = [
    [
      'HTTP 2025-11-25',
      [
        {
          gateway: 'toolgate serve --http',
          pid: toolgateHttp.child.pid as number,
          call: tool(clients.tg2025, 'ev__echo'),
        },
        { gateway: 'bare v2 relay', pid: relayHttp.child.pid as number, call: tool(clients.relay2025, 'echo') },
      ],
    ],
    [
      'HTTP 2026-07-28',
      [
        {
          gateway: 'toolgate serve --http',
          pid: toolgateHttp.child.pid as number,
          call: tool(clients.tg2026, 'ev__echo'),
        },
        { gateway: 'bare v2 relay', pid: relayHttp.child.pid as number, call: tool(clients.relay2026, 'echo') },
      ],
    ],
    [
      'stdio (2025 handshake)',
      [
        { gateway: 'toolgate serve', pid: tgStdio.pid, call: tool(tgStdio.client, 'ev__echo') },
        { gateway: 'bare v2 relay', pid: relayStdio.pid, call: tool(relayStdio.client, 'echo') },
      ],
    ],
  ]
  console.log(`\n| face | gateway | p50 | p90 | calls/s at ${IN_FLIGHT} in flight | errors | CPU per 1k calls |`)
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
  try {
    for (const [face, cases] of faces) {
      for (const { call } of cases) for (let i = 0; i < WARMUP; i++) await checked(call)
      const samples = cases.map(() => [] as number[])
      for (let round = 0; round < CALLS; round++)
        for (let k = 0; k < cases.length; k++) {
          const i = (k + round) % cases.length
          const start = performance.now()
          await checked(cases[i].call)
          samples[i].push(performance.now() - start)
        }
      for (const [i, c] of cases.entries()) {
        // A burst of BURST calls, IN_FLIGHT at a time, each gateway alone.
        let next = 0
        let errors = 0
        let firstError: unknown
        const cpuBefore = cpuMs(c.pid)
        const start = performance.now()
        await Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            while (next < BURST) {
              next++
              await checked(c.call).catch((error: unknown) => {
                errors++
                firstError ??= error
              })
            }
          }),
        )
        const seconds = (performance.now() - start) / 1000
        const cpu = cpuMs(c.pid) - cpuBefore
        console.log(
          `| ${face} | ${c.gateway} | ${quantile(samples[i], 0.5).toFixed(2)} ms | ${quantile(samples[i], 0.9).toFixed(2)} ms | ` +
            `${Math.round(BURST / seconds)} | ${errors} | ${(cpu / BURST).toFixed(2)} s |`,
        )
        if (firstError)
          console.log(
            `  first error: ${String(firstError).slice(0, 300)} (cause: ${String((firstError as { cause?: unknown }).cause)})`,
          )
      }
      const proxy = mcpProxyBin() ? 'installed but not wired' : 'not installed'
      console.log(`| ${face} | mcp-proxy (npm) | ${proxy} | | | | |`)
    }
  } finally {
    for (const client of Object.values(clients)) await client.close().catch(() => {})
    await tgStdio.client.close().catch(() => {})
    await relayStdio.client.close().catch(() => {})
    await stop(toolgateHttp.child)
    await stop(relayHttp.child)
  }
  console.log(`load average after the calls: ${load()}`)

  // Cold start: spawn to the first tools/list answered (stdio, 2025 handshake), interleaved.
  const starts: Array<[string, string[]]> = [
    ['server-everything alone', [EVERYTHING, 'stdio']],
    ['toolgate serve', toolgateArgs],
    ['bare v2 relay', relayArgs('stdio')],
  ]
  const cold = starts.map(() => [] as number[])
  for (let round = 0; round < 7; round++)
    for (let k = 0; k < starts.length; k++) {
      const i = (k + round) % starts.length
      const start = performance.now()
      const { client } = await v1Stdio(starts[i][1])
      const { tools } = await client.listTools()
      if (tools.length === 0) throw new Error(`${starts[i][0]} listed no tools`)
      cold[i].push(performance.now() - start)
      await client.close()
    }
  const alone = quantile(cold[0], 0.5)
  console.log('\n| cold start to the first tools/list (stdio, median of 7) | ms | × alone |')
  console.log('| --- | ---: | ---: |')
  for (const [i, [label]] of starts.entries())
    console.log(`| ${label} | ${quantile(cold[i], 0.5).toFixed(0)} | ${(quantile(cold[i], 0.5) / alone).toFixed(2)} |`)
  console.log(`load average at the end: ${load()}`)
  await rm(dir, { recursive: true, force: true })
}

if (isMain(import.meta.url)) await run()
