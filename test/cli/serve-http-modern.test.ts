// Issue 35, item 2: `toolgate serve --http` speaks MCP 2026-07-28 beside 2025-11-25, the era chosen
// per request. The official SDK v2 client pinned to 2026-07-28 against the built CLI over real HTTP:
// discovery, listing, calls with progress, the SDK's envelope and header checks answered with the
// request's id, each caller's identity scope, and a 2025 client served by the same process.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, tempDir, textOf, writeConfig } from './helpers.js'
import { killChildren } from './spawn-ready.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const MODERN = '2026-07-28'
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let dir: string
let cleanup: () => Promise<void>
const children: ChildProcess[] = []
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  await writeFile(path.join(dir, 'hello.txt'), 'hello')
})
afterAll(async () => {
  await killChildren(children)
  await cleanup()
})

async function startGateway(config: string): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--root', dir, '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const match = /serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

async function modernClient(url: string, token?: string): Promise<Client> {
  const client = new Client(
    { name: 'modern-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  )
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
    ),
  )
  return client
}

async function legacyClient(url: string, token?: string): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'legacy-test', version: '1.0.0' })
  await client.connect(
    new LegacyTransport(
      new URL(url),
      token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
    ),
  )
  return client
}

/** The 2026 envelope a well-formed request carries in its `_meta`. */
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

async function rawPost(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: { id?: unknown; error?: { code: number; message: string }; result?: unknown } }> {
  const reply = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      ...headers,
    },
    body: JSON.stringify(body),
  })
  const text = await reply.text()
  // A streamed answer carries its JSON-RPC message in a data line.
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}')
  return { status: reply.status, json: JSON.parse(data) }
}

describe('serve --http speaks MCP 2026-07-28 beside 2025-11-25', { timeout: 90_000 }, () => {
  let gateway: { url: string; close(): Promise<void> }
  beforeAll(async () => {
    const config = await writeConfig(dir, { servers: { up: { command: process.execPath, args: [UPSTREAM] } } })
    gateway = await startGateway(config)
  })
  afterAll(() => gateway?.close())

  it('discovers, lists and calls with a client pinned to 2026-07-28', async () => {
    const client = await modernClient(gateway.url)
    try {
      expect(client.getServerCapabilities()?.tools).toBeDefined()
      expect(client.getServerVersion()?.name).toBe('toolgate')
      const names = (await client.listTools()).tools.map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(['read_file', 'list_dir', 'up__echo', 'up__slow']))
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } })
      expect(textOf(read)).toContain('hello')
      const echo = await client.callTool({ name: 'up__echo', arguments: { text: 'hi' } })
      expect(echo.structuredContent).toEqual({ echoed: 'hi', length: 2 })
    } finally {
      await client.close()
    }
  })

  it("relays an upstream call's progress to the 2026 client on the call's own stream", async () => {
    const client = await modernClient(gateway.url)
    try {
      const seen: number[] = []
      const result = await client.callTool(
        { name: 'up__slow', arguments: { ms: 350 } },
        { onprogress: (progress: { progress: number }) => seen.push(progress.progress) },
      )
      expect(textOf(result)).toBe('slept 350')
      expect(seen.length).toBeGreaterThan(0)
    } finally {
      await client.close()
    }
  })

  it('answers a list with its cache hints and server/discover without a session', async () => {
    const list = await rawPost(
      gateway.url,
      { jsonrpc: '2.0', id: 'list-1', method: 'tools/list', params: { _meta: ENVELOPE } },
      { 'mcp-method': 'tools/list' },
    )
    expect(list.status).toBe(200)
    expect(list.json.id).toBe('list-1')
    const result = list.json.result as { tools: unknown[]; ttlMs?: unknown; cacheScope?: unknown }
    expect(result.tools.length).toBeGreaterThan(0)
    expect(typeof result.ttlMs).toBe('number')
    expect(['public', 'private']).toContain(result.cacheScope)
    const discover = await rawPost(
      gateway.url,
      { jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: ENVELOPE } },
      { 'mcp-method': 'server/discover' },
    )
    expect(discover.json.id).toBe(2)
    expect((discover.json.result as { supportedVersions: string[] }).supportedVersions).toContain(MODERN)
  })

  it('refuses a bad envelope with -32602 and the request id', async () => {
    const bad = await rawPost(
      gateway.url,
      {
        jsonrpc: '2.0',
        id: 41,
        method: 'tools/list',
        params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 'not an object' } },
      },
      { 'mcp-method': 'tools/list' },
    )
    expect(bad.json.id).toBe(41)
    expect(bad.json.error?.code).toBe(-32602)
  })

  it('refuses an Mcp-Method header that does not match the body with -32020 and the request id', async () => {
    const mismatch = await rawPost(
      gateway.url,
      { jsonrpc: '2.0', id: 42, method: 'tools/list', params: { _meta: ENVELOPE } },
      { 'mcp-method': 'prompts/list' },
    )
    expect(mismatch.json.id).toBe(42)
    expect(mismatch.json.error?.code).toBe(-32020)
  })

  it('serves a 2025 client in the same process as before, sessions and all', async () => {
    const modern = await modernClient(gateway.url)
    const legacy = await legacyClient(gateway.url)
    try {
      const [a, b] = await Promise.all([
        legacy.callTool({ name: 'up__echo', arguments: { text: 'old' } }),
        modern.callTool({ name: 'up__echo', arguments: { text: 'new' } }),
      ])
      expect(textOf(a)).toBe('echo: old')
      expect(textOf(b)).toBe('echo: new')
      expect((await legacy.listTools()).tools.map((tool) => tool.name)).toContain('up__echo')
      // Without a session a 2025 request is still told to initialize.
      const stray = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      })
      expect(stray.status).toBe(400)
      expect(await stray.text()).toContain('no session')
    } finally {
      await modern.close()
      await legacy.close()
    }
  })
})

describe('a 2026 request is served its caller identity scope', { timeout: 90_000 }, () => {
  let gateway: { url: string; close(): Promise<void> }
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      {
        auth: {
          tokens: [
            { sha256: sha256('alice-token'), subject: 'alice' },
            { sha256: sha256('bob-token'), subject: 'bob' },
          ],
        },
        policy: {
          rules: [
            { who: { subject: 'alice' }, allow: ['list_dir'] },
            { who: { subject: 'bob' }, allow: ['list_dir', 'read_file'] },
          ],
        },
      },
      'auth.json',
    )
    gateway = await startGateway(config)
  })
  afterAll(() => gateway?.close())

  it('alice sees and calls only her tools, bob his (as over 2025); no token is refused', async () => {
    const alice = await modernClient(gateway.url, 'alice-token')
    const bob = await modernClient(gateway.url, 'bob-token')
    try {
      expect((await alice.listTools()).tools.map((tool) => tool.name)).toEqual(['list_dir'])
      const write = await alice.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } })
      expect(write.isError).toBe(true)
      // Bob's 2026 scope is his 2025 one.
      const bobLegacy = await legacyClient(gateway.url, 'bob-token')
      try {
        const legacyNames = (await bobLegacy.listTools()).tools.map((tool) => tool.name)
        expect((await bob.listTools()).tools.map((tool) => tool.name)).toEqual(legacyNames)
        expect([...legacyNames].sort()).toEqual(['list_dir', 'read_file'])
      } finally {
        await bobLegacy.close()
      }
    } finally {
      await alice.close()
      await bob.close()
    }
    const anonymous = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } }),
    })
    expect(anonymous.status).toBe(401)
  })
})
