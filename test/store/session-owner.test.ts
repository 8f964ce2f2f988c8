// Issue 36, item 4: with `--store`, a session id presented by another identity gets exactly the
// unknown-id 404, on the instance serving it and on any other; its owner is still told where it lives.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, spawnServe, tempDir, writeConfig } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let url: string
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('owners')
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  await killChildren(children)
  server?.destroy()
  await work?.cleanup()
})

async function gateway(config: string): Promise<{ child: ChildProcess; url: string }> {
  const { child, url: endpoint } = await spawnServe(
    ['--http', '0', '--root', work.dir, '--config', config, '--store', url],
    { children },
  )
  return { child, url: endpoint }
}

function post(endpoint: string, token: string, body: unknown, session?: string): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
    },
    body: JSON.stringify(body),
  })
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('sessions of one identity, presented by another, with --store (issue 36, item 4)', {
  timeout: 180_000,
}, () => {
  it('answers exactly "Session not found" on every instance; the owner alone learns where it lives', async () => {
    expect((await runCli(['store', 'migrate', '--store', url])).code).toBe(0)
    const config = await writeConfig(work.dir, {
      auth: {
        tokens: [
          { sha256: sha256('alice-token'), subject: 'alice' },
          { sha256: sha256('bob-token'), subject: 'bob' },
        ],
      },
    })
    const a = await gateway(config)
    const b = await gateway(config)

    const init = await post(a.url, 'alice-token', {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    })
    expect(init.status).toBe(200)
    await init.text()
    const session = init.headers.get('mcp-session-id') as string
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' }
    const notFound = { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }

    // The session is registered in the store once its owner asks instance B about it.
    await until(async () => {
      const reply = await post(b.url, 'alice-token', list, session)
      return JSON.stringify(await reply.json()).includes(`served by`)
    }, 'the session in the store')
    const owner = await post(b.url, 'alice-token', list, session)
    expect(owner.status).toBe(404)
    expect(((await owner.json()) as { error: { message: string } }).error.message).toMatch(
      new RegExp(`served by [^:]+:${a.child.pid}; route each session to one instance`),
    )

    // bob with alice's id: the same answer as an id nobody ever had, on B and on A.
    for (const endpoint of [b.url, a.url]) {
      const stolen = await post(endpoint, 'bob-token', list, session)
      expect(stolen.status).toBe(404)
      expect(await stolen.json()).toEqual(notFound)
      const never = await post(endpoint, 'bob-token', list, crypto.randomUUID())
      expect(never.status).toBe(404)
      expect(await never.json()).toEqual(notFound)
    }
    for (const { child } of [a, b]) child.kill('SIGTERM')
  })
})
