// The gateway's CPU time per tools/call on Streamable HTTP, for two builds side by side:
// `toolgate serve --http` of this checkout's dist and of another checkout's (BASE_DIST=<checkout>),
// each in front of server-everything `streamableHttp`, plus the upstream called directly. The three
// paths take turns in blocks of 100 sequential echo calls after a warm-up; each gateway's CPU
// (utime + stime from /proc/<pid>/stat) is counted over its own blocks only, since wall clock on a
// shared machine swings with other work. Linux only. `npm run build` first, in both checkouts.
//   BASE_DIST=/tmp/base GATEWAY_CPU_CALLS=2000 npx tsx bench/gateway-http-cpu.bench.ts
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { freePort, spawnUntil, stop } from './processes.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const HERE = path.resolve(import.meta.dirname, '..')
const BASE = process.env.BASE_DIST
if (BASE === undefined) throw new Error('BASE_DIST: the checkout whose dist/ to compare with')
const CALLS = Number(process.env.GATEWAY_CPU_CALLS ?? 2000)
const WARMUP = Number(process.env.GATEWAY_CPU_WARMUP ?? 300)
const BLOCK = 100
const TICK_MS = 10 // USER_HZ is 100 on Linux

/** utime + stime of a process, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-gw-cpu-'))
  const port = await freePort()
  const upstream = spawnUntil([EVERYTHING, 'streamableHttp'], /listening on port/, {
    ...process.env,
    PORT: String(port),
  })
  await upstream.match
  const upstreamUrl = `http://127.0.0.1:${port}/mcp`
  const config = path.join(dir, 'http.json')
  await writeFile(config, JSON.stringify({ servers: { ev: { url: upstreamUrl } } }))
  const gateway = (checkout: string) =>
    spawnUntil(
      [path.join(checkout, 'dist/cli/bin.js'), 'serve', '--config', config, '--root', dir, '--http', '0'],
      /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    )
  const gateways = { base: gateway(BASE as string), this: gateway(HERE) }
  const connect = async (url: string) => {
    const client = new Client({ name: 'bench', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    return client
  }
  const paths = [
    { name: 'direct', client: await connect(upstreamUrl), tool: 'echo', pid: undefined },
    {
      name: 'base',
      client: await connect((await gateways.base.match)[1]),
      tool: 'ev__echo',
      pid: gateways.base.child.pid,
    },
    {
      name: 'this',
      client: await connect((await gateways.this.match)[1]),
      tool: 'ev__echo',
      pid: gateways.this.child.pid,
    },
  ]
  const call = async (client: Client, tool: string) => {
    const start = performance.now()
    const result = await client.callTool({ name: tool, arguments: { message: 'x' } })
    if (result.isError) throw new Error(`${tool} failed`)
    return performance.now() - start
  }
  try {
    for (const p of paths) for (let i = 0; i < WARMUP; i++) await call(p.client, p.tool)
    const wall = new Map(paths.map((p) => [p.name, [] as number[]]))
    const cpu = new Map(paths.map((p) => [p.name, 0]))
    for (let block = 0; block < CALLS / BLOCK; block++)
      for (let k = 0; k < paths.length; k++) {
        const p = paths[(k + block) % paths.length]
        const before = p.pid === undefined ? 0 : cpuMs(p.pid)
        for (let i = 0; i < BLOCK; i++) wall.get(p.name)?.push(await call(p.client, p.tool))
        if (p.pid !== undefined) cpu.set(p.name, (cpu.get(p.name) ?? 0) + cpuMs(p.pid) - before)
      }
    const direct = median(wall.get('direct') ?? [])
    console.log(
      `${CALLS} calls each, blocks of ${BLOCK}, ${WARMUP} warm-up; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
    )
    for (const p of paths) {
      const m = median(wall.get(p.name) ?? [])
      const perCall = p.pid === undefined ? '' : ` gateway CPU ${((cpu.get(p.name) ?? 0) / CALLS).toFixed(3)} ms/call`
      console.log(
        `${p.name}: median ${m.toFixed(3)} ms${p.pid === undefined ? '' : ` (+${(m - direct).toFixed(3)} ms)`}${perCall}`,
      )
    }
  } finally {
    await Promise.all(paths.map((p) => p.client.close()))
    await Promise.all([stop(gateways.base.child), stop(gateways.this.child), stop(upstream.child)])
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
