// toolgate beside a bare relay on the SDK v2 (bench/fixtures/bare-v2-relay.mjs) and mcp-proxy from
// npm, in one run (issue 35, "Performance"): every gateway in front of server-everything over
// stdio, reached over Streamable HTTP by a 2025-11-25 client (SDK v1, the gateway's own 2025
// serving), over Streamable HTTP by a 2026-07-28 client (SDK v2 pinned to it), and over stdio
// (SDK v1 client, 2025 handshake). Per face: p50 of one `tools/call` (the gateways interleaved call
// by call), calls/s with 256 in flight (errors counted), the gateway process's own CPU per 1,000
// calls (/proc user+system, upstream excluded), and cold start to the first listing against
// server-everything alone (toolgate with the default config, and with `"files": false`: the
// upstream's listing only, as the other gateways relay it). Not part of `npm test`. Run after `npm run build`:
//
//   npx tsx bench/gateway-sides.bench.ts
//   SIDES_BENCH_CALLS   sequential calls per case for the p50 (default 300)
//   SIDES_BENCH_BURST   calls per concurrency burst, 256 in flight (default 2048)
//   SIDES_BENCH_ROUNDS  timed bursts per gateway, the gateways interleaved round by round; calls/s
//                       and CPU are the medians (default 5)
//   SIDES_BENCH_WARM    untimed bursts per gateway first (default 1: every process's JIT, the
//                       bench's own clients included, reaches its steady state before the timing)
//   SIDES_BENCH_BEFORE  another build's dist/cli/bin.cjs, run beside this one as "toolgate (before)"
//   SIDES_BENCH_COLD    cold starts per gateway (default 7; 0 skips the cold starts)
//   SIDES_BENCH_TRACE   1: every call carries W3C trace context in `_meta` (traceparent, tracestate)

import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { freePort, spawnUntil, stop } from './processes.js'
import { isMain } from './util.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const RELAY = path.resolve(import.meta.dirname, 'fixtures/bare-v2-relay.mjs')
const FLOOR = path.resolve(import.meta.dirname, 'fixtures/floor.cjs')
const BIN = path.resolve(import.meta.dirname, '../dist/cli/bin.cjs')
const BEFORE = process.env.SIDES_BENCH_BEFORE
const PROXY = require.resolve('mcp-proxy/dist/bin/mcp-proxy.mjs')
const COLD = Number(process.env.SIDES_BENCH_COLD ?? 7)
const CALLS = Number(process.env.SIDES_BENCH_CALLS ?? 300)
const BURST = Number(process.env.SIDES_BENCH_BURST ?? 2048)
const WARM_BURSTS = Number(process.env.SIDES_BENCH_WARM ?? 1)
const ROUNDS = Number(process.env.SIDES_BENCH_ROUNDS ?? 5)
const IN_FLIGHT = 256
/** The trace context a traced call carries (SIDES_BENCH_TRACE=1). */
const TRACE_META =
  process.env.SIDES_BENCH_TRACE === '1'
    ? { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=abc' }
    : undefined
const WARMUP = 50
const TICK_MS = 10 // USER_HZ is 100 on Linux

type Call = () => Promise<unknown>
interface Case {
  gateway: string
  pid: number
  call: Call
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

/** mcp-proxy on a free port in front of server-everything (stream endpoint only, both eras). */
async function startProxy(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort()
  const args = [PROXY, '--port', String(port), '--host', '127.0.0.1', '--server', 'stream']
  const child = spawn(process.execPath, [...args, '--', process.execPath, EVERYTHING, 'stdio'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  // It says so on stdout once it listens.
  let out = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes(`starting server on port ${port}`)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`mcp-proxy exited with ${code}: ${out}`)))
  })
  return { child, url: `http://127.0.0.1:${port}/mcp` }
}

/** Whether `error` or one of its causes is a refused connection (the v2 client wraps fetch's error once more). */
function refused(error: unknown): boolean {
  for (let at = error; typeof at === 'object' && at !== null; at = (at as { cause?: unknown }).cause)
    if ((at as { code?: unknown }).code === 'ECONNREFUSED') return true
  return false
}

/** A client of `url` (2025 unless told), retrying while the port refuses (mcp-proxy announces the port before it listens). */
async function untilListening<C extends Client | V2Client = Client>(
  url: string,
  connect: (url: string) => Promise<C> = v1Http as (url: string) => Promise<C>,
): Promise<C> {
  for (;;) {
    try {
      return await connect(url)
    } catch (error) {
      if (!refused(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-sides-bench-'))
  const config = path.join(dir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({ servers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  )
  const serveArgs = (bin: string) => [bin, 'serve', '--config', config, '--root', dir]
  // The same upstream with toolgate's own file tools off: the listing the other gateways relay (the
  // default adds six tools with output schemas, which a client compiles validators for at listing).
  const relayConfig = path.join(dir, 'relay-config.json')
  await writeFile(
    relayConfig,
    JSON.stringify({ files: false, servers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  )
  const relayServeArgs = [BIN, 'serve', '--config', relayConfig]
  const builds: Array<[string, string]> = [
    ['toolgate', BIN],
    ...(BEFORE ? [['toolgate (before)', BEFORE] as [string, string]] : []),
  ]
  const relayArgs = (face: string) => [RELAY, face, process.execPath, EVERYTHING, 'stdio']
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(1))
      .join(', ')
  console.log(
    `\nload average at start: ${load()}; ${BEFORE ? `before: ${BEFORE}` : 'one toolgate build'}; ${WARM_BURSTS} untimed and ${ROUNDS} timed bursts per gateway`,
  )
  if (TRACE_META) console.log('every call carries _meta.traceparent and _meta.tracestate')

  const servers: Array<{ child: ChildProcess }> = []
  const stdioClients: Client[] = []
  const httpClients: Array<Client | V2Client> = []
  const tool =
    (client: Client | V2Client, name: string): Call =>
    () =>
      client.callTool({ name, arguments: { message: 'x' }, ...(TRACE_META === undefined ? {} : { _meta: TRACE_META }) })
  const http2025: Case[] = []
  const http2026: Case[] = []
  const stdio: Case[] = []
  const httpGateway = async (gateway: string, url: string, pid: number, name: string) => {
    const v1 = await untilListening(url)
    const v2 = await v2Http(url)
    httpClients.push(v1, v2)
    http2025.push({ gateway, pid, call: tool(v1, name) })
    http2026.push({ gateway, pid, call: tool(v2, name) })
  }
  for (const [label, bin] of builds) {
    const served = spawnUntil([...serveArgs(bin), '--http', '0'], /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)
    servers.push(served)
    await httpGateway(`${label} serve --http`, (await served.match)[1], served.child.pid as number, 'ev__echo')
    const viaStdio = await v1Stdio(serveArgs(bin))
    stdioClients.push(viaStdio.client)
    stdio.push({ gateway: `${label} serve`, pid: viaStdio.pid, call: tool(viaStdio.client, 'ev__echo') })
  }
  const relayHttp = spawnUntil(relayArgs('http'), /relaying at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)
  servers.push(relayHttp)
  await httpGateway('bare v2 relay', (await relayHttp.match)[1], relayHttp.child.pid as number, 'echo')
  const relayStdio = await v1Stdio(relayArgs('stdio'))
  stdioClients.push(relayStdio.client)
  stdio.push({ gateway: 'bare v2 relay', pid: relayStdio.pid, call: tool(relayStdio.client, 'echo') })
  const proxy = await startProxy()
  servers.push(proxy)
  await httpGateway('mcp-proxy (npm)', proxy.url, proxy.child.pid as number, 'echo')

  const faces: Array<[string, Case[]]> = [
    ['HTTP 2025-11-25', http2025],
    ['HTTP 2026-07-28', http2026],
    ['stdio (2025 handshake)', stdio],
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
      // Bursts of BURST calls, IN_FLIGHT at a time, each gateway alone: WARM_BURSTS untimed per
      // gateway, then ROUNDS timed rounds with the gateways' order rotated each round.
      const rates = cases.map(() => [] as number[])
      const cpus = cases.map(() => [] as number[])
      const errors = cases.map(() => 0)
      const firstErrors: unknown[] = cases.map(() => undefined)
      const burst = async (i: number) => {
        let next = 0
        await Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            while (next < BURST) {
              next++
              await checked(cases[i].call).catch((error: unknown) => {
                errors[i]++
                firstErrors[i] ??= error
              })
            }
          }),
        )
      }
      for (let warm = 0; warm < WARM_BURSTS; warm++) for (let i = 0; i < cases.length; i++) await burst(i)
      for (let round = 0; round < ROUNDS; round++)
        for (let k = 0; k < cases.length; k++) {
          const i = (k + round) % cases.length
          const cpuBefore = cpuMs(cases[i].pid)
          const start = performance.now()
          await burst(i)
          rates[i].push(BURST / ((performance.now() - start) / 1000))
          cpus[i].push((cpuMs(cases[i].pid) - cpuBefore) / BURST)
        }
      for (const [i, c] of cases.entries()) {
        console.log(
          `| ${face} | ${c.gateway} | ${quantile(samples[i], 0.5).toFixed(2)} ms | ${quantile(samples[i], 0.9).toFixed(2)} ms | ` +
            `${Math.round(quantile(rates[i], 0.5))} | ${errors[i]} | ${quantile(cpus[i], 0.5).toFixed(2)} s |`,
        )
        const firstError = firstErrors[i]
        if (firstError)
          console.log(
            `  first error: ${String(firstError).slice(0, 300)} (cause: ${String((firstError as { cause?: unknown }).cause)})`,
          )
      }
    }
    console.log('| stdio (2025 handshake) | mcp-proxy (npm) | no stdio face | | | | |')
  } finally {
    for (const client of [...httpClients, ...stdioClients]) await client.close().catch(() => {})
    for (const { child } of servers) await stop(child)
  }
  console.log(`load average after the calls: ${load()}`)
  if (COLD === 0) {
    await rm(dir, { recursive: true, force: true })
    return
  }

  // Cold start: spawn to the first tools/list answered, interleaved: over stdio (2025 handshake), and
  // over HTTP from spawn to the port announced and a listing answered there.
  // Each start returns its own time to the listing: stopping the process is not counted.
  type Start = () => Promise<number>
  const stdioStart =
    (args: string[]): Start =>
    async () => {
      const start = performance.now()
      const { client } = await v1Stdio(args)
      const { tools } = await client.listTools()
      const elapsed = performance.now() - start
      await client.close()
      if (tools.length === 0) throw new Error(`${args.join(' ')} listed no tools`)
      return elapsed
    }
  const httpStart =
    (spawn: () => Promise<{ child: ChildProcess; url: string }>, era: '2025' | '2026' = '2025'): Start =>
    async () => {
      const start = performance.now()
      const { child, url } = await spawn()
      try {
        const client = await untilListening<Client | V2Client>(url, era === '2025' ? v1Http : v2Http)
        const { tools } = await client.listTools()
        const elapsed = performance.now() - start
        await client.close()
        if (tools.length === 0) throw new Error(`${url} listed no tools`)
        return elapsed
      } finally {
        await stop(child)
      }
    }
  const announced = (args: string[], ready: RegExp) => async () => {
    const started = spawnUntil(args, ready)
    return { child: started.child, url: (await started.match)[1] }
  }
  const starts: Array<[string, Start]> = [
    ['server-everything alone (stdio)', stdioStart([EVERYTHING, 'stdio'])],
    ...builds.flatMap(
      ([label, bin]): Array<[string, Start]> => [
        [`${label} serve (stdio)`, stdioStart(serveArgs(bin))],
        [
          `${label} serve --http`,
          httpStart(announced([...serveArgs(bin), '--http', '0'], /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)),
        ],
        [
          `${label} serve --http (2026 client)`,
          httpStart(
            announced([...serveArgs(bin), '--http', '0'], /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/),
            '2026',
          ),
        ],
      ],
    ),
    ['toolgate serve (stdio, "files": false)', stdioStart(relayServeArgs)],
    [
      'toolgate serve --http ("files": false)',
      httpStart(announced([...relayServeArgs, '--http', '0'], /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)),
    ],
    [
      'toolgate serve --http (2026 client, "files": false)',
      httpStart(
        announced([...relayServeArgs, '--http', '0'], /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/),
        '2026',
      ),
    ],
    ['bare v2 relay (stdio)', stdioStart(relayArgs('stdio'))],
    ['bare v2 relay (HTTP)', httpStart(announced(relayArgs('http'), /relaying at (http:\/\/127\.0\.0\.1:\d+\/mcp)/))],
    [
      'bare v2 relay (HTTP, 2026 client)',
      httpStart(announced(relayArgs('http'), /relaying at (http:\/\/127\.0\.0\.1:\d+\/mcp)/), '2026'),
    ],
    ['mcp-proxy (npm, HTTP)', httpStart(startProxy)],
    ['mcp-proxy (npm, HTTP, 2026 client)', httpStart(startProxy, '2026')],
    // What any gateway process pays: its own Node start, then the upstream's (bench/fixtures/floor.cjs).
    ['floor: spawn and pipe (stdio)', stdioStart([FLOOR, 'stdio', process.execPath, EVERYTHING, 'stdio'])],
    [
      'floor: spawn, list raw, answer (HTTP)',
      httpStart(
        announced([FLOOR, 'http', process.execPath, EVERYTHING, 'stdio'], /floor at (http:\/\/127\.0\.0\.1:\d+\/mcp)/),
      ),
    ],
  ]
  const cold = starts.map(() => [] as number[])
  for (let round = 0; round < COLD; round++)
    for (let k = 0; k < starts.length; k++) {
      const i = (k + round) % starts.length
      cold[i].push(await starts[i][1]())
    }
  const alone = quantile(cold[0], 0.5)
  console.log(`\n| cold start to the first tools/list (median of ${COLD}, interleaved) | ms | × alone |`)
  console.log('| --- | ---: | ---: |')
  for (const [i, [label]] of starts.entries())
    console.log(`| ${label} | ${quantile(cold[i], 0.5).toFixed(0)} | ${(quantile(cold[i], 0.5) / alone).toFixed(2)} |`)
  console.log(`load average at the end: ${load()}`)
  await rm(dir, { recursive: true, force: true })
}

if (isMain(import.meta.url)) await run()
