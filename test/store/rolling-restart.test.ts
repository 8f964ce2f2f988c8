// A rolling restart of two `serve --http --store URL` instances on one PostgreSQL loses no call
// (issue 37, item 3): the instance asked to stop finishes its call in flight, refuses the new
// request with 503 + Retry-After, the client goes to the other instance, and every call started is
// journaled with its result.
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore } from '../../src/store/index.js'
import { BIN, runCli, tempDir, textOf, writeConfig } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
let server: PgServer
let url: string
let work: { dir: string; cleanup: () => Promise<void> }
let config: string
const children: ChildProcess[] = []

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('rolling')
  work = await tempDir()
  config = await writeConfig(work.dir, {
    files: false,
    servers: { up: { command: process.execPath, args: [UPSTREAM] } },
  })
}, 120_000)
afterAll(async () => {
  await killChildren(children)
  server?.destroy()
  await work?.cleanup()
})

interface Instance {
  child: ChildProcess
  endpoint: string
  exited: Promise<number | null>
  waitFor(pattern: RegExp): Promise<void>
}

async function instance(): Promise<Instance> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--config', config, '--store', url], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const waitFor = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(err)) return
        child.stderr?.off('data', check)
        resolve()
      }
      child.stderr?.on('data', check)
      check()
      void exited.then(() => reject(new Error(`toolgate exited before ${pattern}: ${err}`)))
    })
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString()
  })
  await waitFor(/serving MCP at http:\/\/127\.0\.0\.1:\d+\/mcp/)
  const endpoint = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)?.[1] as string
  return { child, endpoint, exited, waitFor }
}

async function connect(endpoint: string): Promise<Client> {
  const client = new Client({ name: 'rolling', version: '1' })
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)))
  return client
}

describe('a rolling restart on one PostgreSQL (issue 37, item 3)', () => {
  it('loses no call', async () => {
    expect((await runCli(['store', 'migrate', '--store', url])).code).toBe(0)
    const [a, b] = await Promise.all([instance(), instance()])
    const onA = await connect(a.endpoint)
    let began: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      began = resolve
    })
    const slow = onA.callTool({ name: 'up__slow', arguments: { ms: 2500 } }, undefined, {
      onprogress: () => began(),
      timeout: 120_000,
    })
    await started
    a.child.kill('SIGTERM')
    await a.waitFor(/draining: 1 request/)
    // A new client tries A first: refused with a hint to retry, it goes to B.
    const refused = await fetch(a.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'late', version: '1' } },
      }),
    })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).not.toBeNull()
    const onB = await connect(b.endpoint)
    expect(textOf(await onB.callTool({ name: 'up__echo', arguments: { text: 'b' } }))).toBe('echo: b')
    expect(textOf(await slow)).toBe('slept 2500')
    expect(await a.exited).toBe(0)
    // A comes back; then B is restarted the same way.
    const a2 = await instance()
    const onA2 = await connect(a2.endpoint)
    b.child.kill('SIGTERM')
    expect(await b.exited).toBe(0)
    expect(textOf(await onA2.callTool({ name: 'up__echo', arguments: { text: 'a2' } }))).toBe('echo: a2')
    await Promise.all([onA.close(), onB.close(), onA2.close()])
    a2.child.kill('SIGTERM')
    expect(await a2.exited).toBe(0)

    const store = await createPostgresStore({ connectionString: url, migrate: false })
    const byCall = new Map<string, string[]>()
    try {
      for await (const { record } of store.read()) {
        const types = byCall.get(record.callId) ?? []
        types.push(`${record.toolName}:${record.type}`)
        byCall.set(record.callId, types)
      }
    } finally {
      await store.close()
    }
    const calls = [...byCall.values()].sort((x, y) => String(x[0]).localeCompare(String(y[0])))
    expect(calls).toEqual([
      ['up__echo:call-started', 'up__echo:result'],
      ['up__echo:call-started', 'up__echo:result'],
      ['up__slow:call-started', 'up__slow:result'],
    ])
  }, 120_000)
})
