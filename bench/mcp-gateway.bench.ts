// The gateway's cost (issue 23): added median latency of one `tools/call` through `toolgate serve`
// on stdio and on Streamable HTTP, against the same upstream called directly, interleaved in one
// run; cold start to the first `tools/list`; and 1,000 concurrent calls through one gateway.
// Upstream: the registry's server-everything (`echo`). Run after `npm run build`.
//
//   GATEWAY_BENCH_CALLS   calls per path (default 1000)
//   GATEWAY_BENCH_BLOCK   calls of one path in a row (default 1: call by call)
//   GATEWAY_BENCH_BINS    other builds measured in the same run, `name=path/to/dist/cli/bin.js`
//                         separated by commas (e.g. main's build, for an A/B of a change)
//   GATEWAY_BENCH_ONLY    `stdio` or `http`: only that transport's pair, no concurrency, no cold start

import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { freePort, spawnUntil, stop } from './processes.js'
import { isMain } from './util.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const RELAY = path.resolve(import.meta.dirname, 'fixtures/byte-relay.mjs')
const HTTP_RELAY = path.resolve(import.meta.dirname, 'fixtures/http-relay.mjs')
const BIN = path.resolve(import.meta.dirname, '../dist/cli/bin.js')
const CALLS = Number(process.env.GATEWAY_BENCH_CALLS ?? 1000)
const WARMUP = 200
const BLOCK = Math.max(1, Number(process.env.GATEWAY_BENCH_BLOCK ?? 1))
const ONLY = process.env.GATEWAY_BENCH_ONLY
const OTHERS = (process.env.GATEWAY_BENCH_BINS ?? '')
  .split(',')
  .filter((entry) => entry !== '')
  .map((entry) => {
    const at = entry.indexOf('=')
    return { name: entry.slice(0, at), bin: path.resolve(entry.slice(at + 1)) }
  })

async function stdioClient(args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }))
  return client
}

async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]
const ms = (value: number) => `${value.toFixed(3)} ms`

/** One echo call's wall time in ms. */
async function timeCall(client: Client, name: string): Promise<number> {
  const start = performance.now()
  const result = await client.callTool({ name, arguments: { message: 'x' } })
  const elapsed = performance.now() - start
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`)
  return elapsed
}

/**
 * Each case's per-call times, the cases interleaved (each round starting at another case): call by
 * call by default, or `BLOCK` calls of one case in a row (`GATEWAY_BENCH_BLOCK`), which keeps each
 * path's processes and caches warm between its calls.
 */
async function interleaved(cases: Array<{ client: Client; tool: string }>, calls: number): Promise<number[][]> {
  for (const { client, tool } of cases) for (let i = 0; i < WARMUP; i++) await timeCall(client, tool)
  const samples = cases.map(() => [] as number[])
  for (let round = 0; round < Math.ceil(calls / BLOCK); round++)
    for (let k = 0; k < cases.length; k++) {
      const i = (k + round) % cases.length
      for (let b = 0; b < BLOCK; b++) samples[i].push(await timeCall(cases[i].client, cases[i].tool))
    }
  return samples
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-gw-bench-'))
  const upstreamPort = await freePort()
  const upstream = spawnUntil([EVERYTHING, 'streamableHttp'], /listening on port/, {
    ...process.env,
    PORT: String(upstreamPort),
  })
  await upstream.match
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/mcp`
  const stdioConfig = path.join(dir, 'stdio.json')
  await writeFile(
    stdioConfig,
    JSON.stringify({ servers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
  )
  const httpConfig = path.join(dir, 'http.json')
  await writeFile(httpConfig, JSON.stringify({ servers: { ev: { url: upstreamUrl } } }))
  const serveHttp = (bin: string, config: string) =>
    spawnUntil(
      [bin, 'serve', '--config', config, '--root', dir, '--http', '0'],
      /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    )
  const builds = [{ name: 'this build', bin: BIN }, ...OTHERS]
  const gatewaysHttp = builds.map((build) => serveHttp(build.bin, httpConfig))
  const gatewaysHttpStdio = builds.map((build) => serveHttp(build.bin, stdioConfig))
  const relayHttp = spawnUntil([HTTP_RELAY, upstreamUrl], /relaying at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)
  const relayUrl = (await relayHttp.match)[1]
  const clients = {
    directStdio: await stdioClient([EVERYTHING, 'stdio']),
    gatewayStdio: await Promise.all(
      builds.map((build) => stdioClient([build.bin, 'serve', '--config', stdioConfig, '--root', dir])),
    ),
    relayStdio: await stdioClient([RELAY, process.execPath, EVERYTHING, 'stdio']),
    directHttp: await httpClient(upstreamUrl),
    gatewayHttp: await Promise.all(gatewaysHttp.map(async (gateway) => httpClient((await gateway.match)[1]))),
    gatewayHttpStdio: await Promise.all(gatewaysHttpStdio.map(async (gateway) => httpClient((await gateway.match)[1]))),
    relayHttp: await httpClient(relayUrl),
  }
  const allClients = Object.values(clients).flat()
  const row = (label: string, samples: number[], direct?: number[]) =>
    console.log(
      `| ${label} | ${ms(median(samples))} | ${ms(quantile(samples, 0.99))} | ${direct ? ms(median(samples) - median(direct)) : ''} |`,
    )
  const of = (name: string) => (name === 'this build' ? '' : ` (${name})`)
  try {
    console.log(
      `\n## MCP gateway: one tools/call of echo (server-everything), ${CALLS} calls each, interleaved with the direct path of the same transport ${BLOCK === 1 ? 'call by call' : `in blocks of ${BLOCK}`}\n`,
    )
    console.log('| path | median | p99 | added median |')
    console.log('| --- | ---: | ---: | ---: |')
    // Each transport's pair on its own: the gateway against the same upstream called directly,
    // interleaved call by call. The other transport's processes stay idle meanwhile, so that their
    // after-answer work on the 2 cores is not charged to the pair being measured.
    if (ONLY !== 'http') {
      const [directStdio, relayStdio, ...gatewayStdio] = await interleaved(
        [
          { client: clients.directStdio, tool: 'echo' },
          { client: clients.relayStdio, tool: 'echo' },
          ...clients.gatewayStdio.map((client) => ({ client, tool: 'ev__echo' })),
        ],
        CALLS,
      )
      row('direct, stdio', directStdio)
      for (const [i, build] of builds.entries())
        row(`client → toolgate serve${of(build.name)} → upstream, all stdio`, gatewayStdio[i], directStdio)
      row('client → byte relay → upstream (the floor: forwards bytes, parses nothing)', relayStdio, directStdio)
    }
    if (ONLY !== 'stdio') {
      const n = builds.length
      const [directHttp, relayedHttp, ...gateways] = await interleaved(
        [
          { client: clients.directHttp, tool: 'echo' },
          { client: clients.relayHttp, tool: 'echo' },
          ...clients.gatewayHttp.map((client) => ({ client, tool: 'ev__echo' })),
          ...clients.gatewayHttpStdio.map((client) => ({ client, tool: 'ev__echo' })),
        ],
        CALLS,
      )
      row('direct, Streamable HTTP', directHttp)
      for (const [i, build] of builds.entries())
        row(`client → toolgate serve --http${of(build.name)} → upstream, all Streamable HTTP`, gateways[i], directHttp)
      row(
        'client → HTTP byte relay → upstream (the floor: a node:http reverse proxy, parses nothing)',
        relayedHttp,
        directHttp,
      )
      // The gateway's own Streamable HTTP face in front of the same server started on stdio, against
      // that server's own Streamable HTTP face: what a client pays for reaching it through toolgate.
      for (const [i, build] of builds.entries())
        row(
          `client → toolgate serve --http${of(build.name)} → upstream on stdio (against the upstream's own HTTP face)`,
          gateways[n + i],
          directHttp,
        )
    }
    // 1,000 calls at once through one gateway: every one must succeed; p99 of their latencies.
    const concurrent = [
      ['stdio', clients.gatewayStdio[0]],
      ['Streamable HTTP', clients.gatewayHttp[0]],
    ] as const
    for (const [label, client] of ONLY === undefined ? concurrent : []) {
      const settled = await Promise.allSettled(Array.from({ length: 1000 }, () => timeCall(client, 'ev__echo')))
      const times = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
      const errors = settled.length - times.length
      console.log(
        `\n1,000 concurrent calls through the gateway (${label}): ${errors} errors, ` +
          `p50 ${ms(median(times))}, p99 ${ms(quantile(times, 0.99))}`,
      )
      if (errors)
        console.log(
          `  first error: ${String((settled.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason)}`,
        )
    }
  } finally {
    await Promise.all(allClients.map((client) => client.close()))
    for (const gateway of [...gatewaysHttp, ...gatewaysHttpStdio]) await stop(gateway.child)
    await stop(relayHttp.child)
  }
  if (ONLY !== undefined) {
    await stop(upstream.child)
    await rm(dir, { recursive: true, force: true })
    return
  }

  // Cold start: spawn to the first tools/list answered, alone vs behind the gateway, interleaved.
  const cold: Record<'alone' | 'gateway', number[]> = { alone: [], gateway: [] }
  for (let round = 0; round < 9; round++) {
    for (const which of round % 2 ? (['gateway', 'alone'] as const) : (['alone', 'gateway'] as const)) {
      const start = performance.now()
      const client = await stdioClient(
        which === 'alone' ? [EVERYTHING, 'stdio'] : [BIN, 'serve', '--config', stdioConfig, '--root', dir],
      )
      await client.listTools()
      cold[which].push(performance.now() - start)
      await client.close()
    }
  }
  console.log('\n## Cold start to the first tools/list (stdio, 9 interleaved starts, medians)\n')
  console.log(`| server-everything alone | ${ms(median(cold.alone))} |`)
  console.log(`| toolgate serve with it as the one upstream | ${ms(median(cold.gateway))} |`)
  console.log(`| ratio | ${(median(cold.gateway) / median(cold.alone)).toFixed(2)}× |`)
  await stop(upstream.child)
  await rm(dir, { recursive: true, force: true })
}

if (isMain(import.meta.url)) await run()
