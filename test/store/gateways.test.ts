// Three `toolgate serve --http --store URL` processes on one PostgreSQL (issue 26): every call of
// every instance lands in one journal; a session is kept on its instance and another instance says
// where it lives; SIGKILL mid-call leaves the call's acknowledged start and no result (never re-run);
// `toolgate store migrate|status` and `toolgate view --store` work against the same database.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore } from '../../src/store/index.js'
import { BIN, runCli, tempDir } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let url: string
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('gateways')
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  await killChildren(children)
  server?.destroy()
  await work?.cleanup()
})

/** Start `toolgate` with `args` and wait for `pattern` on `stream`. */
function start(
  args: string[],
  pattern: RegExp,
  stream: 'stdout' | 'stderr',
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let text = ''
  return new Promise((resolve, reject) => {
    child[stream]?.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      const match = pattern.exec(text)
      if (match) resolve({ child, match })
    })
    let err = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    child.once('exit', (code) => reject(new Error(`toolgate ${args[0]} exited with ${code}: ${err}`)))
  })
}

async function gateway() {
  const { child, match } = await start(
    ['serve', '--http', '0', '--bash', '--root', work.dir, '--store', url],
    /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    'stderr',
  )
  const endpoint = match[1]
  const transport = new StreamableHTTPClientTransport(new URL(endpoint))
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(transport)
  return { child, endpoint, client, transport }
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('three gateways, one database (issue 26)', { timeout: 240_000 }, () => {
  it('store migrate and status, then three instances share the journal; a session stays on its instance; SIGKILL mid-call', async () => {
    const before = await runCli(['store', 'status', '--store', url])
    expect(before.code).toBe(1)
    expect(before.stdout).toMatch(/schema version 0 \(this toolgate: 5\)\nmigrations are due/)
    const migrated = await runCli(['store', 'migrate', '--store', url])
    expect(migrated).toMatchObject({ code: 0, stdout: 'schema version 0 → 5\n' })

    const instances = await Promise.all([gateway(), gateway(), gateway()])
    // Round-robin over the instances: each call goes to the next one.
    for (let i = 0; i < 6; i++) {
      const { client } = instances[i % 3]
      const result = await client.callTool({ name: 'write_file', arguments: { path: `f${i}.txt`, content: `n${i}` } })
      expect(result.isError).not.toBe(true)
    }
    for (const { client } of instances) expect((await client.listTools()).tools.map((t) => t.name)).toContain('bash')

    // A session id of instance A sent to instance B: 404, naming the instance that serves it.
    const sessionA = instances[0].transport.sessionId as string
    const elsewhere = await fetch(instances[1].endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionA,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(elsewhere.status).toBe(404)
    expect(JSON.stringify(await elsewhere.json())).toMatch(
      new RegExp(`served by [^:]+:${instances[0].child.pid}; route each session to one instance`),
    )

    // SIGKILL instance C in the middle of a bash call.
    const started = join(work.dir, 'started')
    const { child: victim, client: victimClient } = instances[2]
    const call = victimClient
      .callTool({ name: 'bash', arguments: { command: 'touch started; sleep 60; touch finished' } })
      .catch((error: unknown) => error)
    await until(() => existsSync(started), 'the bash body to start')
    victim.kill('SIGKILL')
    // The client's request stays open until its own timeout; nothing here waits for it.
    void call

    const store = await createPostgresStore({ connectionString: url, migrate: false })
    const byCall = new Map<string, string[]>()
    for await (const { record } of store.read()) {
      const types = byCall.get(record.callId) ?? []
      types.push(`${record.toolName}:${record.type}`)
      byCall.set(record.callId, types)
    }
    const writes = [...byCall.values()].filter((t) => t[0] === 'write_file:call-started')
    expect(writes).toHaveLength(6)
    for (const types of writes) expect(types).toEqual(['write_file:call-started', 'write_file:result'])
    // The killed call: its start was acknowledged before the body ran; no result, nothing re-ran it.
    const bash = [...byCall.values()].filter((t) => t[0] === 'bash:call-started')
    expect(bash).toEqual([['bash:call-started']])
    expect(existsSync(join(work.dir, 'finished'))).toBe(false)

    // The survivors keep serving and journaling.
    await instances[0].client.callTool({ name: 'list_dir', arguments: { path: '.' } })
    await until(async () => {
      let n = 0
      for await (const { record } of store.read()) if (record.toolName === 'list_dir' && record.type === 'result') n++
      return n === 1
    }, 'the list_dir result in the store')

    // The viewer over the store shows every instance's calls.
    const { child: viewer, match } = await start(
      ['view', '--store', url],
      /toolgate viewer on (http:\/\/127\.0\.0\.1:\d+\/)/,
      'stdout',
    )
    const controller = new AbortController()
    const events = await fetch(`${match[1]}events`, { signal: controller.signal })
    const reader = events.body!.getReader()
    let text = ''
    while (!(text.includes('f5.txt') && text.includes('touch started'))) {
      const { value, done } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    controller.abort()
    expect(text).toContain('f0.txt')
    expect(text).toContain('touch started')
    viewer.kill('SIGTERM')

    const status = await runCli(['store', 'status', '--store', url])
    expect(status.code).toBe(0)
    expect(status.stdout).toMatch(/journal records: \d+/)
    // The killed instance's bash call is the one call with a start and no result.
    expect(status.stdout).toContain('calls started without a result: 1 (interrupted, never re-run, or still running)')
    await store.close()
    for (const { client } of instances) await client.close().catch(() => {})
    for (const { child } of instances.slice(0, 2)) child.kill('SIGTERM')
  })
})
