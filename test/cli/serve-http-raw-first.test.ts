// `toolgate serve --http` opens its port and answers its first client's `initialize` and
// `tools/list` from the executable's first script, before the CLI's bundle and the MCP SDK load
// (issue 35, Performance: cold start to the first listing), and the gateway then takes the port and
// that session over. The answers must be the gateway's own on the wire (statuses, headers, SSE
// frames), the session must go on (calls, resumes from its event ids), and whatever the first script
// does not answer must reach the gateway. The upstream records every message it gets, so "once" is
// counted, not assumed.
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type ServeProcess, spawnServe, tempDir, textOf, writeConfig } from './helpers.js'
import { killChildren } from './spawn-ready.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/raw-first-upstream.mjs')
const TEST_MS = 60_000
const REVISION = '2025-11-25'

let dir: string
let cleanup: () => Promise<void>
let runs = 0
const children: ChildProcess[] = []

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterEach(async () => {
  await killChildren(children.splice(0))
})
afterAll(async () => {
  await cleanup()
})

/** A config with the fixture as its one upstream, and the file it records to. */
async function setup(
  extra: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<{ config: string; record: string }> {
  const record = path.join(dir, `record-${++runs}.jsonl`)
  const config = await writeConfig(
    dir,
    {
      servers: { raw: { command: process.execPath, args: [UPSTREAM], env: { RECORD: record, ...env } } },
      files: false,
      ...extra,
    },
    `config-${runs}.json`,
  )
  return { config, record }
}

/** The messages the upstream got, by method. */
async function received(record: string, method: string): Promise<{ id?: unknown; params?: unknown }[]> {
  const text = await readFile(record, 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { method?: string; id?: unknown; params?: unknown })
    .filter((m) => m.method === method)
}

/** Once the gateway's stderr shows `pattern` (its log lines and the HTTP answers race to the test). */
async function shown(gateway: ServeProcess, pattern: RegExp): Promise<void> {
  if (pattern.test(gateway.stderr())) return
  const stderr = gateway.child.stderr
  if (stderr === null) throw new Error('no stderr to read')
  await new Promise<void>((resolve) => {
    const read = () => {
      if (!pattern.test(gateway.stderr())) return
      stderr.off('data', read)
      resolve()
    }
    stderr.on('data', read)
  })
}

/** One HTTP exchange: status, the headers a client reads, and the body. */
interface Exchange {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

const SHOWN_HEADERS = [
  'content-type',
  'cache-control',
  'connection',
  'keep-alive',
  'x-accel-buffering',
  'mcp-session-id',
  'transfer-encoding',
]

/** What a response says: its status, the headers a client reads, and its body. */
async function exchangeOf(res: Response): Promise<Exchange> {
  const headers: Record<string, string> = {}
  for (const name of SHOWN_HEADERS) {
    const value = res.headers.get(name)
    if (value !== null) headers[name] = value
  }
  return { status: res.status, headers, body: await res.text() }
}

async function post(url: string, message: object, session?: string): Promise<Exchange> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': REVISION }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  })
  return exchangeOf(res)
}

/** A 2026-07-28 request, as the SDK v2 client sends it (no session; the method in a header too). */
async function post26(url: string, id: string | number, method: string, params: object = {}): Promise<Exchange> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...('name' in params ? { 'mcp-name': String(params.name) } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } }),
  })
  return exchangeOf(res)
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw26', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

const INITIALIZE = {
  id: 1,
  method: 'initialize',
  params: { protocolVersion: REVISION, capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
}

/** A session's first three exchanges, as a 2025-11-25 client sends them. */
async function firstListing(url: string): Promise<{ session: string; exchanges: Exchange[] }> {
  const initialize = await post(url, INITIALIZE)
  const session = initialize.headers['mcp-session-id']
  expect(session).toMatch(/^[0-9a-f-]{36}$/)
  const initialized = await post(url, { method: 'notifications/initialized' }, session)
  const list = await post(url, { id: 2, method: 'tools/list' }, session)
  return { session, exchanges: [initialize, initialized, list] }
}

/** An SSE body's event ids. */
const eventIds = (body: string): string[] => [...body.matchAll(/^id: (.*)$/gm)].map((m) => m[1] as string)

/** An exchange with what differs between sessions by design (the session and event ids) masked. */
function masked(exchange: Exchange): Exchange {
  const { 'mcp-session-id': session, ...headers } = exchange.headers
  return {
    status: exchange.status,
    headers: session === undefined ? headers : { ...headers, 'mcp-session-id': 'SESSION' },
    body: exchange.body.replace(/^id: .*$/gm, 'id: ID'),
  }
}

describe('serve --http: the first listing before the bundle loads (issue 35)', () => {
  it(
    'answers as the gateway answers a later session, initializes the upstream once, and the session serves on',
    async () => {
      const { config, record } = await setup()
      const gateway = await spawnServe(['--http', '0', '--config', config, '--log-level', 'debug'], { children })
      const first = await firstListing(gateway.url)
      const second = await firstListing(gateway.url)
      // The first session was answered by the first script; the second by the gateway.
      await shown(gateway, /first listing: answered \(4 tools\)/)
      await shown(gateway, /session \S+ opened by the first listing/)
      expect(first.exchanges.map(masked)).toEqual(second.exchanges.map(masked))
      const [initialize, initialized, list] = first.exchanges as [Exchange, Exchange, Exchange]
      expect(initialized.status).toBe(202)
      expect(initialize.headers['content-type']).toBe('text/event-stream')
      expect(list.body).toContain('"name":"raw__echo"')
      // The upstream was initialized once, by the first script, and listed by it and the gateway.
      expect(await received(record, 'initialize')).toEqual([expect.objectContaining({ id: 'toolgate-raw-initialize' })])

      // The session goes on: its next stream's events come after the first script's.
      const ids = [...eventIds(initialize.body), ...eventIds(list.body)]
      expect(ids).toHaveLength(4)
      const token = (ids[0] as string).replace(/\.1$/, '')
      expect(ids).toEqual([1, 2, 3, 4].map((n) => `${token}.${n}`))
      const call = await post(
        gateway.url,
        { id: 3, method: 'tools/call', params: { name: 'raw__echo', arguments: { text: 'after' } } },
        first.session,
      )
      expect(call.status).toBe(200)
      expect(call.body).toContain('after')
      expect(eventIds(call.body)[0]).toBe(`${token}.5`)

      // A resume from the first script's last event finds it stored: the stream is complete.
      const resumed = await fetch(gateway.url, {
        headers: {
          accept: 'text/event-stream',
          'mcp-session-id': first.session,
          'mcp-protocol-version': REVISION,
          'last-event-id': ids[3] as string,
        },
      })
      expect(resumed.status).toBe(200)
      expect(await resumed.text()).toBe('')
    },
    TEST_MS,
  )

  it(
    'declares to the upstream what the gateway declares when it initializes the upstream itself',
    async () => {
      const raw = await setup()
      const rawGateway = await spawnServe(['--http', '0', '--config', raw.config, '--log-level', 'debug'], {
        children,
      })
      await firstListing(rawGateway.url)
      await shown(rawGateway, /first listing: answered/)
      // Behind a proxy the first script does not answer: the gateway initializes the upstream.
      const own = await setup()
      const ownGateway = await spawnServe(
        ['--http', '0', '--config', own.config, '--trust-proxy', '10.0.0.1', '--log-level', 'debug'],
        { children },
      )
      await firstListing(ownGateway.url)
      await shown(ownGateway, /first listing: not tried: behind a proxy/)
      const [rawInit] = await received(raw.record, 'initialize')
      const [ownInit] = await received(own.record, 'initialize')
      expect(ownInit?.id).not.toBe('toolgate-raw-initialize')
      expect(rawInit?.params).toEqual(ownInit?.params)
    },
    TEST_MS,
  )

  it(
    'leaves what it does not answer to the gateway, which answers it once it has taken the port',
    async () => {
      const { config } = await setup()
      const gateway = await spawnServe(['--http', '0', '--config', config, '--log-level', 'debug'], { children })
      const initialize = await post(gateway.url, INITIALIZE)
      const session = initialize.headers['mcp-session-id'] as string
      // A ping is the gateway's: the first listing ends, and the session is the gateway's from then on.
      const ping = await post(gateway.url, { id: 7, method: 'ping' }, session)
      expect(ping.status).toBe(200)
      expect(ping.body).toContain('data: {"result":{},"jsonrpc":"2.0","id":7}')
      await shown(gateway, /first listing: left to the gateway: a request it does not answer first \("ping"\)/)
      const list = await post(gateway.url, { id: 8, method: 'tools/list' }, session)
      expect(list.body).toContain('"name":"raw__echo"')
      // A probe and an unknown session are answered as the gateway answers them.
      expect((await fetch(new URL('/healthz', gateway.url))).status).toBe(200)
      expect((await post(gateway.url, { id: 9, method: 'tools/list' }, 'no-such-session')).status).toBe(404)
    },
    TEST_MS,
  )

  it(
    "an SDK client's session (its standalone stream held for the gateway) lists, calls and is counted",
    async () => {
      const { config } = await setup()
      const gateway = await spawnServe(['--http', '0', '--config', config, '--log-level', 'debug'], { children })
      const client = new Client({ name: 'sdk', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
      try {
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name)).toEqual(['raw__echo', 'raw__structured', 'raw__tasky', 'raw__grow'])
        await shown(gateway, /first listing: answered/)
        const result = await client.callTool({ name: 'raw__echo', arguments: { text: 'sdk' } })
        expect(textOf(result)).toContain('sdk')
      } finally {
        await client.close()
      }
      // The first script's answers are in the request count: initialize and tools/list (200), initialized (202).
      const metrics = await (await fetch(new URL('/metrics', gateway.url))).text()
      const counted = (status: number) =>
        Number(new RegExp(`^toolgate_http_requests_total\\{status="${status}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0)
      expect(counted(202)).toBeGreaterThanOrEqual(1)
      expect(counted(200)).toBeGreaterThanOrEqual(3)
    },
    TEST_MS,
  )

  it(
    "answers a 2026-07-28 client's server/discover and tools/list as the gateway's 2026 leg does, which then serves its calls",
    async () => {
      const { config, record } = await setup()
      const gateway = await spawnServe(['--http', '0', '--config', config, '--log-level', 'debug'], { children })
      const first = [await post26(gateway.url, 'd', 'server/discover'), await post26(gateway.url, 1, 'tools/list')]
      await shown(gateway, /first listing: answered \(4 tools, 2026-07-28\)/)
      // The same requests again, now answered by the gateway's 2026 leg: the same bytes.
      const again = [await post26(gateway.url, 'd', 'server/discover'), await post26(gateway.url, 1, 'tools/list')]
      expect(first).toEqual(again)
      expect(first.map((exchange) => exchange.status)).toEqual([200, 200])
      expect(first[0]?.headers['content-type']).toBe('application/json')
      expect(first[0]?.body).toContain('"supportedVersions":["2026-07-28"]')
      expect(first[1]?.body).toContain('"name":"raw__echo"')
      // The era leaves execution.taskSupport out of a listing.
      expect(first[1]?.body).not.toContain('taskSupport')
      expect(await received(record, 'initialize')).toEqual([expect.objectContaining({ id: 'toolgate-raw-initialize' })])
      const call = await post26(gateway.url, 2, 'tools/call', { name: 'raw__echo', arguments: { text: 'twenty-six' } })
      expect(call.status).toBe(200)
      expect(call.body).toContain('twenty-six')
    },
    TEST_MS,
  )

  it(
    'declares what each era declares when the upstream offers resources (tasks on 2025 only)',
    async () => {
      const { config } = await setup({}, { RESOURCES: '1' })
      const gateway = await spawnServe(['--http', '0', '--config', config, '--log-level', 'debug'], { children })
      const discovered = await post26(gateway.url, 'd', 'server/discover')
      const legacy = await firstListing(gateway.url)
      await shown(gateway, /first listing: answered \(4 tools\)/)
      expect(discovered.body).toContain('"resources":{"subscribe":false,"listChanged":true}')
      expect(await post26(gateway.url, 'd', 'server/discover')).toEqual(discovered)
      expect(discovered.body).not.toContain('"tasks"')
      const initialized = masked(legacy.exchanges[0] as Exchange).body
      expect(initialized).toContain('"tasks":{')
      expect(initialized).toContain('"resources":{"subscribe":false,"listChanged":true}')
      expect(legacy.exchanges.map(masked)).toEqual((await firstListing(gateway.url)).exchanges.map(masked))
    },
    TEST_MS,
  )

  it(
    'an SDK v2 client pinned to 2026-07-28 lists from the first script and calls through the gateway',
    async () => {
      const { config } = await setup()
      const gateway = await spawnServe(['--http', '0', '--config', config, '--log-level', 'debug'], { children })
      const client = new V2Client(
        { name: 'v2', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      )
      await client.connect(new V2HttpTransport(new URL(gateway.url)))
      try {
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name)).toEqual(['raw__echo', 'raw__structured', 'raw__tasky', 'raw__grow'])
        await shown(gateway, /first listing: answered \(4 tools, 2026-07-28\)/)
        const result = await client.callTool({ name: 'raw__echo', arguments: { text: 'pinned' } })
        expect(JSON.stringify(result)).toContain('pinned')
      } finally {
        await client.close()
      }
    },
    TEST_MS,
  )

  it(
    'a SIGTERM right after the first listing drains and exits 0',
    async () => {
      const { config } = await setup()
      const gateway = await spawnServe(['--http', '0', '--config', config], { children })
      await firstListing(gateway.url)
      const exited = once(gateway.child, 'exit')
      gateway.child.kill('SIGTERM')
      const [code] = await exited
      expect(code).toBe(0)
      expect(gateway.stderr()).toMatch(/draining: /)
    },
    TEST_MS,
  )

  it(
    'a port in use is reported by the gateway as before, and nothing is announced',
    async () => {
      const taken = createServer()
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
      try {
        const port = (taken.address() as { port: number }).port
        const { config } = await setup()
        const error = await spawnServe(['--http', String(port), '--config', config, '--log-level', 'debug'], {
          children,
        }).then(
          () => undefined,
          (refused: unknown) => String(refused),
        )
        expect(error).toMatch(/exited with 1/)
        expect(error).toMatch(/EADDRINUSE/)
        expect(error).toMatch(/first listing: left to the gateway: the port could not be opened here/)
        expect(error).not.toMatch(/serving MCP/)
      } finally {
        taken.close()
      }
    },
    TEST_MS,
  )
})
