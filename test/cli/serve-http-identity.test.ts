// Issue 36 (identity, items 1–3, and search_tools): attacks on who a caller of `serve --http` is,
// run against the built CLI over real HTTP: tokens whose claims name no usable caller, JSON-RPC
// batches against the rate limit, agent scope ids that must not depend on arrival order, and
// search_tools offered and callable alike.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, tempDir, textOf, writeConfig } from './helpers.js'
import { type AuthServer, startAuthServer } from './oauth-server.js'
import { killChildren } from './spawn-ready.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const VERSION = '2025-06-18'

let dir: string
let cleanup: () => Promise<void>
const children: ChildProcess[] = []
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => {
  await killChildren(children)
  await cleanup()
})

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

interface Gateway {
  url: string
  close(): Promise<void>
}

async function startGateway(config: string, port = 0): Promise<Gateway> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', String(port), '--root', dir, '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  const actual = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const match = /serving MCP at http:\/\/[^\s]+:(\d+)\/mcp/.exec(err)
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  return {
    url: `http://127.0.0.1:${actual}/mcp`,
    close: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}

function post(url: string, token: string, body: unknown, session?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': VERSION } : {}),
    },
    body: JSON.stringify(body),
  })
}

async function openSession(url: string, token: string): Promise<string> {
  const init = await post(url, token, INITIALIZE)
  expect(init.status).toBe(200)
  await init.text()
  const session = init.headers.get('mcp-session-id') as string
  const done = await post(url, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)
  expect(done.status).toBe(202)
  return session
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  )
  return client
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('a verified JWT must name a caller (issue 36, item 1)', { timeout: 60_000 }, () => {
  let as: AuthServer
  let gateway: Gateway
  let audience = ''
  beforeAll(async () => {
    as = await startAuthServer({ clients: {}, audience: () => audience })
    const port = await freePort()
    audience = `http://127.0.0.1:${port}/mcp`
    const config = await writeConfig(
      dir,
      {
        auth: { oauth: { issuer: as.issuer, audience, jwksUri: as.jwksUri } },
        // Everyone is served the top-level policy (every file tool); the rules give alice list_dir only.
        policy: { rules: [{ who: { subject: 'alice' }, allow: ['list_dir'] }] },
      },
      'oauth.json',
    )
    gateway = await startGateway(config, port)
  })
  afterAll(async () => {
    await gateway?.close()
    await as?.close()
  })

  it('refuses a sub that is empty, a number, null, an array, an object or true with 401 invalid_token', async () => {
    for (const sub of ['', 42, null, ['alice'], { name: 'alice' }, true, 'a\u0000b']) {
      const token = await as.mint({ sub } as never)
      const reply = await post(gateway.url, token, INITIALIZE)
      expect(reply.status, JSON.stringify(sub)).toBe(401)
      expect(reply.headers.get('mcp-session-id')).toBeNull()
      const challenge = reply.headers.get('www-authenticate') ?? ''
      expect(challenge).toMatch(/^Bearer realm="toolgate", error="invalid_token", error_description="[^"]*sub claim/)
      const body = (await reply.json()) as { error: string; error_description: string }
      expect(body).toEqual({
        error: 'invalid_token',
        error_description: "the token's sub claim is not a non-empty string",
      })
      expect(challenge).not.toContain(token)
    }
  })

  it('refuses groups and scope claims of the wrong type instead of dropping them', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ groups: 42 }, /groups claim/],
      [{ groups: ['dev', 7] }, /groups claim/],
      [{ groups: { dev: true } }, /groups claim/],
      [{ groups: null }, /groups claim/],
      [{ scope: 42 }, /scope claim/],
      [{ scope: ['mcp', { x: 1 }] }, /scope claim/],
      [{ scope: undefined, scp: false }, /scp claim/],
    ]
    for (const [claims, reason] of cases) {
      const token = await as.mint(claims as never)
      const reply = await post(gateway.url, token, INITIALIZE)
      expect(reply.status, JSON.stringify(claims)).toBe(401)
      expect(reply.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
      const body = (await reply.json()) as { error: string; error_description: string }
      expect(body.error).toBe('invalid_token')
      expect(body.error_description).toMatch(reason)
    }
  })

  it('still serves a well-formed token its own rules: alice sees list_dir only, and cannot write', async () => {
    const client = await connect(gateway.url, await as.mint({ sub: 'alice', groups: 'staff', scp: ['a', 'b'] }))
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_dir'])
      const write = await client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } })
      expect(write.isError).toBe(true)
    } finally {
      await client.close()
    }
  })
})

describe('a JSON-RPC batch against limits.rate (issue 36, item 2)', { timeout: 60_000 }, () => {
  let gateway: Gateway
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      {
        auth: { tokens: [{ sha256: sha256('batch-token'), subject: 'batcher' }] },
        // A bucket of 5 that refills too slowly to matter during the test.
        limits: { rate: { perSecond: 0.001, burst: 5 } },
      },
      'batch.json',
    )
    gateway = await startGateway(config)
  })
  afterAll(() => gateway?.close())

  const calls = (n: number, from: number) =>
    Array.from({ length: n }, (_, i) => ({
      jsonrpc: '2.0',
      id: from + i,
      method: 'tools/call',
      params: { name: 'list_dir', arguments: { path: '.' } },
    }))

  it('counts each message of a batch, and refuses a batch larger than the burst with 400', async () => {
    // initialize and notifications/initialized take 2 of the 5 tokens.
    const session = await openSession(gateway.url, 'batch-token')
    const huge = await post(gateway.url, 'batch-token', calls(6, 10), session)
    expect(huge.status).toBe(400)
    expect(((await huge.json()) as { error: { message: string } }).error.message).toBe(
      'Invalid Request: a batch of 6 messages is more than the 5 requests limits.rate allows at once (each message counts as one request); send at most 5 per batch',
    )
    const over = await post(gateway.url, 'batch-token', calls(4, 20), session)
    expect(over.status).toBe(429)
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(((await over.json()) as { error: { message: string } }).error.message).toMatch(
      /^Too Many Requests: rate limit/,
    )
    // Three fit: they run, and take the bucket's last tokens.
    const fits = await post(gateway.url, 'batch-token', calls(3, 30), session)
    expect(fits.status).toBe(200)
    const text = await fits.text()
    for (const id of [30, 31, 32]) expect(text).toContain(`"id":${id}`)
    const next = await post(gateway.url, 'batch-token', { jsonrpc: '2.0', id: 40, method: 'ping' }, session)
    expect(next.status).toBe(429)
  })
})

describe("an identity's scope id does not depend on arrival order (issue 36, item 3)", { timeout: 60_000 }, () => {
  it('gives each of two tokens of one subject the same scope on every instance', async () => {
    const config = (journal: string) =>
      writeConfig(
        dir,
        {
          journal,
          auth: {
            tokens: [
              { sha256: sha256('alice-broad'), subject: 'alice', groups: ['leads'] },
              { sha256: sha256('alice-narrow'), subject: 'alice' },
            ],
          },
          policy: {
            rules: [
              { who: { subject: 'alice' }, allow: ['list_dir'] },
              { who: { group: 'leads' }, allow: ['*'] },
            ],
          },
        },
        `order-${journal}.json`,
      )
    const a = await startGateway(await config('a.jsonl'))
    const b = await startGateway(await config('b.jsonl'))
    try {
      // Instance A meets the broad token first, instance B the narrow one.
      for (const [gateway, tokens] of [
        [a, ['alice-broad', 'alice-narrow']],
        [b, ['alice-narrow', 'alice-broad']],
      ] as const) {
        for (const token of tokens) {
          const client = await connect(gateway.url, token)
          const result = await client.callTool({ name: 'list_dir', arguments: { path: '.' } })
          expect(result.isError).not.toBe(true)
          await client.close()
        }
      }
      const agents = async (file: string) => {
        const byGroups = new Map<string, string>()
        await until(async () => {
          const text = await readFile(path.join(dir, file), 'utf8').catch(() => '')
          for (const line of text.split('\n').filter(Boolean)) {
            const record = JSON.parse(line) as {
              type: string
              agentId?: string
              identity?: { groups: string[] }
            }
            if (record.type === 'call-started' && record.identity && record.agentId)
              byGroups.set(record.identity.groups.join(',') || 'none', record.agentId)
          }
          return byGroups.size === 2
        }, `both calls in ${file}`)
        return byGroups
      }
      const onA = await agents('a.jsonl')
      const onB = await agents('b.jsonl')
      expect(onA.get('leads')).toBe(onB.get('leads'))
      expect(onA.get('none')).toBe(onB.get('none'))
      expect(onA.get('leads')).not.toBe(onA.get('none'))
      expect(onA.get('leads')).toMatch(/^toolgate\/alice#[0-9a-f]{16}$/)
    } finally {
      await a.close()
      await b.close()
    }
  })
})

describe('search_tools is listed and callable alike (issue 36, smaller item)', { timeout: 60_000 }, () => {
  let gateway: Gateway
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      {
        servers: { up: { command: process.execPath, args: [UPSTREAM], defer: true } },
        auth: {
          tokens: [
            { sha256: sha256('dev-token'), subject: 'dev', groups: ['dev'] },
            { sha256: sha256('ops-token'), subject: 'ops', groups: ['ops'] },
          ],
        },
        policy: {
          rules: [
            { who: { group: 'dev' }, allow: ['read_file'] },
            { who: { group: 'ops' }, allow: ['up__*'] },
          ],
        },
      },
      'search.json',
    )
    gateway = await startGateway(config)
  })
  afterAll(() => gateway?.close())

  it('is offered with the deferred tools an identity may call, and then never refused; not offered, it is not there', async () => {
    // ops may call the deferred up__* tools: search_tools is offered, and a call of it is not refused.
    const ops = await connect(gateway.url, 'ops-token')
    try {
      expect((await ops.listTools()).tools.map((t) => t.name)).toEqual(['search_tools'])
      const found = await ops.callTool({ name: 'search_tools', arguments: { query: 'echo text back' } })
      expect(found.isError, textOf(found)).not.toBe(true)
      expect(textOf(found)).toContain('up__echo')
      expect((await ops.listTools()).tools.map((t) => t.name)).toContain('up__echo')
    } finally {
      await ops.close()
    }
    // dev may see no deferred tool: search_tools is neither offered nor there to call.
    const dev = await connect(gateway.url, 'dev-token')
    try {
      expect((await dev.listTools()).tools.map((t) => t.name)).toEqual(['read_file'])
      const found = await dev.callTool({ name: 'search_tools', arguments: { query: 'echo text back' } })
      expect(found.isError).toBe(true)
      expect(textOf(found)).toBe('Unknown tool "search_tools": no tool of that name is visible to this agent')
    } finally {
      await dev.close()
    }
  })
})
