// The gateway's CPU time per 1k MCP 2026-07-28 retry rounds (issue 35, item 1): a call that needs
// approval is answered with an input-required result and a sealed requestState; its retry carries
// the client's answer and runs the call. One server process holds two 2026 legs on one runtime, one
// with the fast path (src/mcp/server/modern-fast-path.ts) and one without (the SDK's per-request
// server); this process is the client. Blocks take turns: 100 first rounds (their states kept, CPU
// counted apart), then their 100 retries, the server's CPU (utime + stime from /proc/<pid>/stat)
// read around each. Linux only; runs the sources through tsx (no build needed).
//   npx tsx bench/modern-retry-cpu.bench.ts            (RETRY_BENCH_ROUNDS, default 2000 per leg)
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { spawnUntil, stop } from './processes.js'

const ROUNDS = Number(process.env.RETRY_BENCH_ROUNDS ?? 2000)
const WARMUP = 300
const BLOCK = 100
const TICK_MS = 10 // USER_HZ is 100 on Linux
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
}

/** The server: two legs (fast path on, off) on one runtime, each on its own port. */
async function serve(): Promise<void> {
  const { createToolRuntime, defineTool } = await import('../src/index.js')
  const { createModernHttpLeg } = await import('../src/mcp/server/server-modern.js')
  const rt = await createToolRuntime()
  rt.tools.register(
    defineTool({
      name: 'deploy',
      description: 'Deploys (needs approval).',
      parameters: { env: { type: 'string', required: true } },
      needsApproval: true,
      output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
      execute: async ({ env }) => `deployed to ${env}`,
    }),
  )
  const ports: number[] = []
  for (const fastPath of [true, false]) {
    const leg = createModernHttpLeg(rt.ctx, {
      agentFor: () => undefined,
      name: 'bench',
      version: '1.0.0',
      maxMessageBytes: 1 << 20,
      fastPath,
    })
    const http = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        if (!(await leg.isModern(req, body))) return res.writeHead(400).end()
        await leg.handle(req, res, body)
      })
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    ports.push((http.address() as AddressInfo).port)
  }
  process.stderr.write(`legs on ${ports.join(' ')}\n`)
}

/** utime + stime of a process, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

let nextId = 0
/** One raw tools/call of `deploy`; the retry carries the state and an accepting answer. */
async function call(url: string, env: string, state?: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'deploy',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++nextId,
      method: 'tools/call',
      params: {
        name: 'deploy',
        arguments: { env },
        _meta: ENVELOPE,
        ...(state === undefined
          ? {}
          : {
              requestState: state,
              inputResponses: { 'toolgate/approval': { action: 'accept', content: { approve: true } } },
            }),
      },
    }),
  })
  const message = JSON.parse(await res.text()) as { result?: Record<string, unknown>; error?: unknown }
  if (message.result === undefined) throw new Error(`refused: ${JSON.stringify(message.error)}`)
  return message.result
}

/** `count` first rounds, then their retries; the server's CPU for each half. */
async function block(url: string, pid: number, count: number): Promise<{ ask: number; retry: number }> {
  let cpu = cpuMs(pid)
  const states: string[] = []
  for (let i = 0; i < count; i++) {
    const first = await call(url, `env-${i}`)
    if (first.resultType !== 'input_required') throw new Error('expected an input-required result')
    states.push(first.requestState as string)
  }
  const ask = cpuMs(pid) - cpu
  cpu = cpuMs(pid)
  for (let i = 0; i < count; i++) {
    const done = await call(url, `env-${i}`, states[i])
    if (done.isError === true || done.resultType !== 'complete') throw new Error('the retry did not run the call')
  }
  return { ask, retry: cpuMs(pid) - cpu }
}

async function main(): Promise<void> {
  const server = spawnUntil(['--import', 'tsx', fileURLToPath(import.meta.url), 'serve'], /legs on (\d+) (\d+)/)
  const [, fastPort, sdkPort] = await server.match
  const pid = server.child.pid as number
  const legs = [
    { name: 'fast path', url: `http://127.0.0.1:${fastPort}/mcp`, ask: 0, retry: 0 },
    { name: "SDK's path", url: `http://127.0.0.1:${sdkPort}/mcp`, ask: 0, retry: 0 },
  ]
  try {
    for (const leg of legs) await block(leg.url, pid, WARMUP)
    const load = loadavg()[0]
    for (let done = 0; done < ROUNDS; done += BLOCK)
      for (const leg of done % (2 * BLOCK) === 0 ? legs : [...legs].reverse()) {
        const spent = await block(leg.url, pid, BLOCK)
        leg.ask += spent.ask
        leg.retry += spent.retry
      }
    console.log(`${ROUNDS} rounds per leg, load average ${load.toFixed(2)} → ${loadavg()[0].toFixed(2)}`)
    console.log('| leg | CPU per 1k first rounds | CPU per 1k retries |')
    console.log('| --- | ---: | ---: |')
    for (const leg of legs)
      console.log(`| ${leg.name} | ${(leg.ask / ROUNDS).toFixed(2)} s | ${(leg.retry / ROUNDS).toFixed(2)} s |`)
  } finally {
    await stop(server.child)
  }
}

if (process.argv[2] === 'serve') await serve()
else await main()
