// `toolgate serve` over stdio answers its client's first `initialize` and `tools/list` from the
// executable's first script, before the CLI's bundle and the MCP SDK load (issue 35, Performance):
// the upstream's handshake and listing run as plain JSON-RPC over the process spawned early, the
// upstream connection adopts that handshake, and the gateway's server still sees every message.
// The upstream is a fixture that records every message it gets, so "once" is counted, not assumed.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listOwnFileTools, OWN_TOOLS_FILE } from '../../src/gateway/own-tools-listing.js'
import { FIRST_LISTING_MAX_DEPTH } from '../../src/gateway/raw-first-own.js'
import { MAX_SCHEMA_DEPTH } from '../../src/runtime/definition-check.js'
import { type Connected, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'
import { BOUND_MS, INITIALIZE, Peer } from './raw-peer.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/raw-first-upstream.mjs')
const TEST_MS = 3 * BOUND_MS

let dir: string
let cleanup: () => Promise<void>
let runs = 0
/** The 'hold' case's gateway (the file's last case), started with the file. */
let holding: Promise<Serving>

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  // Its upstream never gives the first listing, so this gateway sits out the 10 s deadline before
  // it lists: started here, it does so while the other cases run. Its case awaits it and reports a
  // failure to start; until then, a rejection is not left unhandled.
  holding = serving('hold')
  holding.catch(() => {})
})
afterAll(async () => {
  await (await holding.catch(() => undefined))?.s.close()
  await cleanup()
})

/** A config with the fixture as its one upstream (in `mode`), and the file it records to. */
async function setup(mode = '', extra: Record<string, unknown> = {}): Promise<{ config: string; record: string }> {
  const record = path.join(dir, `record-${++runs}.jsonl`)
  const config = await writeConfig(
    dir,
    {
      servers: { raw: { command: process.execPath, args: [UPSTREAM], env: { RECORD: record, MODE: mode } } },
      files: false,
      ...extra,
    },
    `config-${runs}.json`,
  )
  return { config, record }
}

interface Serving {
  readonly s: Connected
  readonly record: string
}

/** `serve` over stdio with an SDK client, the fixture its one upstream in `mode`. */
async function serving(mode: string): Promise<Serving> {
  const { config, record } = await setup(mode)
  return { s: await serveStdio(['--config', config]), record }
}

/** The `initialize` requests the upstream got. */
async function initializes(record: string): Promise<{ id: unknown; params?: unknown }[]> {
  const text = await readFile(record, 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { id?: unknown; method?: string })
    .filter((m) => m.method === 'initialize') as { id: unknown; params?: unknown }[]
}

/** `tools/list` through a raw peer: the first listing (`ping` first turns it off), the tools' JSON. */
async function listed(
  config: string,
  pingFirst: boolean,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ tools: string; initialized: string; peer: Peer }> {
  const peer = new Peer(['--config', config, '--drain-timeout', '600', ...args], env)
  if (pingFirst) peer.send({ id: 0, method: 'ping' })
  peer.send({ id: 1, ...INITIALIZE })
  peer.send({ method: 'notifications/initialized' })
  peer.send({ id: 2, method: 'tools/list' })
  const initialized = JSON.stringify((await peer.answer(1)).result)
  const answer = await peer.answer(2)
  return { tools: JSON.stringify(answer.result?.tools), initialized, peer }
}

/** The case of an upstream answering `what` (in `mode`), on the gateway `serve` gives. */
function wholeListingCase(mode: string, what: string, serve: () => Promise<Serving>): void {
  it.concurrent(
    `an upstream answering ${what}: the client gets the whole listing, the upstream one initialize`,
    async ({ expect }) => {
      const { s, record } = await serve()
      try {
        await expect
          .poll(async () => (await s.client.listTools()).tools.map((t) => t.name), { timeout: BOUND_MS })
          .toEqual(['raw__echo', 'raw__structured', 'raw__tasky', 'raw__grow'])
        expect(textOf(await s.client.callTool({ name: 'raw__echo', arguments: { text: mode } }))).toBe(`echo: ${mode}`)
        expect(await initializes(record)).toHaveLength(1)
      } finally {
        await s.close()
      }
    },
    TEST_MS,
  )
}

describe('serve over stdio: the first listing before the bundle loads (issue 35)', () => {
  it(
    'lists byte for byte what the gateway lists itself, initializes the upstream once, and serves on',
    async () => {
      const first = await setup()
      const raw = await listed(first.config, false)
      // The raw path ran: the upstream's one initialize came from the first script.
      expect(await initializes(first.record)).toEqual([expect.objectContaining({ id: 'toolgate-raw-initialize' })])
      // The gateway's own listing afterwards is the same, and announces no change.
      raw.peer.send({ id: 3, method: 'tools/list' })
      const again = await raw.peer.answer(3)
      raw.peer.send({ id: 4, method: 'ping' })
      await raw.peer.answer(4)
      expect(JSON.stringify(again.result?.tools)).toBe(raw.tools)
      expect(raw.peer.received.filter((m) => m.method === 'notifications/tools/list_changed')).toEqual([])
      // Every request was answered once, the answered ones included: stdin's end closes at once
      // (a request counted unanswered would hold it for the whole --drain-timeout).
      expect(raw.peer.received.filter((m) => m.id === 1 || m.id === 2)).toHaveLength(2)
      raw.peer.child.stdin.end()
      expect(await raw.peer.exited).toBe(0)
      // Which way the first listing went is told only at debug level.
      expect(raw.peer.stderr).not.toContain('first listing')

      const second = await setup()
      const normal = await listed(second.config, true)
      expect(await initializes(second.record)).toEqual([expect.objectContaining({ id: expect.any(Number) })])
      normal.peer.child.stdin.end()
      await normal.peer.exited
      expect(raw.tools).toBe(normal.tools)
      // The client's initialize is answered as the gateway answers it: version, capabilities, serverInfo.
      expect(raw.initialized).toBe(normal.initialized)
      // The upstream was told what the SDK client would have told it.
      expect((await initializes(first.record))[0]?.params).toEqual((await initializes(second.record))[0]?.params)
      expect(JSON.parse(raw.tools).map((t: { name: string }) => t.name)).toEqual([
        'raw__echo',
        'raw__structured',
        'raw__tasky',
        'raw__grow',
      ])
    },
    TEST_MS,
  )

  it(
    "an official SDK client's whole session after it: lists again, calls, and the upstream's list_changed relayed",
    async () => {
      const { config, record } = await setup()
      const s = await serveStdio(['--config', config])
      try {
        const changed: string[] = []
        s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.push('tools'))
        const first = await s.client.listTools()
        expect(first.tools.map((t) => t.name)).toEqual(['raw__echo', 'raw__structured', 'raw__tasky', 'raw__grow'])
        expect((await s.client.listTools()).tools).toEqual(first.tools)
        expect(textOf(await s.client.callTool({ name: 'raw__echo', arguments: { text: 'hi' } }))).toBe('echo: hi')
        const structured = await s.client.callTool({ name: 'raw__structured', arguments: {} })
        expect(structured.structuredContent).toEqual({ n: 1 })
        await s.client.callTool({ name: 'raw__grow', arguments: {} })
        await expect.poll(() => changed, { timeout: BOUND_MS }).toContain('tools')
        await expect
          .poll(async () => (await s.client.listTools()).tools.map((t) => t.name), { timeout: BOUND_MS })
          .toContain('raw__grown')
        expect(await initializes(record)).toEqual([expect.objectContaining({ id: 'toolgate-raw-initialize' })])
      } finally {
        await s.close()
      }
    },
    TEST_MS,
  )

  // From here to the end of this describe, the cases run at once (each its own gateway and upstream).
  // None of them needs its first listing to beat the 10 s deadline, so sharing the cores cannot fail them.
  for (const [mode, what] of [
    ['cursor', 'a listing in pages'],
    ['error', 'an error for the listing'],
    ['version', 'another protocol version'],
    ['notify', 'a notification before the listing'],
  ] as const)
    wholeListingCase(mode, what, () => serving(mode))

  it.concurrent(
    'an initialize it cannot read (a null capability) is left to the gateway, which answers it',
    async ({ expect }) => {
      const { config } = await setup()
      const peer = new Peer(['--config', config])
      peer.send({ id: 1, method: 'initialize', params: { ...INITIALIZE.params, capabilities: { elicitation: null } } })
      peer.send({ id: 2, method: 'ping' })
      expect(await peer.answer(1)).toBeDefined()
      expect(await peer.answer(2)).toMatchObject({ result: {} })
      peer.child.stdin.end()
      expect(await peer.exited).toBe(0)
    },
    TEST_MS,
  )

  it.concurrent(
    'a 2026-07-28 client is served as before',
    async ({ expect }) => {
      const { config, record } = await setup()
      const peer = new Peer(['--config', config])
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      }
      peer.send({ id: 1, method: 'tools/list', params: { _meta: meta } })
      const answer = await peer.answer(1)
      expect(((answer.result?.tools ?? []) as { name: string }[]).map((t) => t.name)).toContain('raw__echo')
      expect(await initializes(record)).toEqual([expect.objectContaining({ id: expect.any(Number) })])
      peer.child.stdin.end()
      await peer.exited
    },
    TEST_MS,
  )

  it.concurrent(
    'a config it cannot list from (a policy) is served as before',
    async ({ expect }) => {
      const { config, record } = await setup('', { policy: { rules: [] } })
      const s = await serveStdio(['--config', config])
      try {
        expect((await s.client.listTools()).tools.map((t) => t.name)).toContain('raw__echo')
        expect(await initializes(record)).toEqual([expect.objectContaining({ id: expect.any(Number) })])
      } finally {
        await s.close()
      }
    },
    TEST_MS,
  )
})

/** The gateway's own file tools, in the order it registers (and lists) them. */
const FILE_TOOLS = ['read_file', 'write_file', 'edit_file', 'glob', 'grep', 'list_dir']
const UPSTREAM_TOOLS = ['raw__echo', 'raw__structured', 'raw__tasky', 'raw__grow']

describe("serve over stdio: the first listing with the gateway's own file tools on (issue 35)", () => {
  /** A workspace root with one file in it. */
  async function workspace(): Promise<string> {
    const root = path.join(dir, `root-${++runs}`)
    await mkdir(root)
    await writeFile(path.join(root, 'note.txt'), 'hello from the root\n')
    return root
  }

  for (const [what, env] of [
    ['ripgrep', {}],
    // Where @vscode/ripgrep has no binary (another arch), grep is the JavaScript search, and says so.
    ['the JavaScript search', { npm_config_arch: 'no-such-arch' }],
  ] as const)
    it(
      `lists byte for byte what the gateway lists itself (the default "files", grep on ${what}), and says so at debug level`,
      async () => {
        const root = await workspace()
        // The default: the config does not mention "files".
        const first = await setup('', { files: undefined })
        const raw = await listed(first.config, false, ['--root', root, '--verbose'], env)
        expect(await initializes(first.record)).toEqual([expect.objectContaining({ id: 'toolgate-raw-initialize' })])
        // The gateway's own listing afterwards is the same, and announces no change.
        raw.peer.send({ id: 3, method: 'tools/list' })
        const again = await raw.peer.answer(3)
        raw.peer.send({ id: 4, method: 'ping' })
        await raw.peer.answer(4)
        expect(JSON.stringify(again.result?.tools)).toBe(raw.tools)
        expect(raw.peer.received.filter((m) => m.method === 'notifications/tools/list_changed')).toEqual([])
        raw.peer.child.stdin.end()
        expect(await raw.peer.exited).toBe(0)
        expect(raw.peer.stderr).toMatch(/toolgate: first listing: answered \(10 tools\), at \d+ ms/)

        // A `ping` first: the gateway lists, from the runtime's own projection of the file tools.
        const second = await setup('', { files: undefined })
        const normal = await listed(second.config, true, ['--root', root, '--verbose'], env)
        expect(await initializes(second.record)).toEqual([expect.objectContaining({ id: expect.any(Number) })])
        normal.peer.child.stdin.end()
        await normal.peer.exited
        expect(normal.peer.stderr).toContain(
          'first listing: left to the gateway: a client message it does not answer first ("ping")',
        )
        expect(raw.tools).toBe(normal.tools)
        expect(raw.initialized).toBe(normal.initialized)
        const tools = JSON.parse(raw.tools) as { name: string; description: string }[]
        expect(tools.map((t) => t.name)).toEqual([...FILE_TOOLS, ...UPSTREAM_TOOLS])
        const grep = tools.find((t) => t.name === 'grep')?.description
        expect(grep).toContain('npm_config_arch' in env ? 'JavaScript regular expression' : 'Rust regex')
      },
      TEST_MS,
    )

  it(
    "an official SDK client's whole session after it: a file tool and an upstream tool called (root from the config)",
    async () => {
      const root = await workspace()
      const { config, record } = await setup('', { files: true, root })
      const s = await serveStdio(['--config', config, '--verbose'])
      try {
        const first = await s.client.listTools()
        expect(first.tools.map((t) => t.name)).toEqual([...FILE_TOOLS, ...UPSTREAM_TOOLS])
        expect((await s.client.listTools()).tools).toEqual(first.tools)
        const read = await s.client.callTool({ name: 'read_file', arguments: { path: 'note.txt' } })
        expect(read.isError).not.toBe(true)
        expect(textOf(read)).toContain('hello from the root')
        expect(textOf(await s.client.callTool({ name: 'raw__echo', arguments: { text: 'hi' } }))).toBe('echo: hi')
        expect(await initializes(record)).toEqual([expect.objectContaining({ id: 'toolgate-raw-initialize' })])
        expect(s.stderr()).toContain('first listing: answered (10 tools)')
      } finally {
        await s.close()
      }
    },
    TEST_MS,
  )

  it(
    'an upstream tool named as a file tool is not listed first: the gateway refuses the collision as before',
    async () => {
      const root = await workspace()
      const { config } = await setup('collide', { files: true, root })
      const configured = JSON.parse(await readFile(config, 'utf8'))
      configured.servers.raw.prefix = ''
      await writeFile(config, JSON.stringify(configured))
      const peer = new Peer(['--config', config, '--verbose'])
      peer.send({ id: 1, ...INITIALIZE })
      peer.send({ method: 'notifications/initialized' })
      peer.send({ id: 2, method: 'tools/list' })
      expect(await peer.exited).not.toBe(0)
      expect(peer.stderr).toContain('first listing: left to the gateway, initialize answered: an upstream tool')
      expect(peer.stderr).toContain('its tool "read_file" is not served')
      expect(peer.received.filter((m) => m.id === 2)).toEqual([])
    },
    TEST_MS,
  )

  it(
    'a root that is not a directory is left to the gateway, which refuses it as before',
    async () => {
      const { config } = await setup('', { files: undefined })
      const peer = new Peer(['--config', config, '--root', path.join(dir, 'no-such-root'), '--verbose'])
      peer.send({ id: 1, ...INITIALIZE })
      expect(await peer.exited).not.toBe(0)
      expect(peer.stderr).toContain('first listing: not tried: the root')
      expect(peer.stderr).toContain('is not a directory')
      expect(peer.received).toEqual([])
    },
    TEST_MS,
  )

  it(
    'a listing longer than a chunk of the pipe: listed first, and the upstream session goes on whole',
    async () => {
      const root = await workspace()
      const { config, record } = await setup('big', { files: true, root })
      const s = await serveStdio(['--config', config, '--verbose'])
      try {
        const names = (await s.client.listTools()).tools.map((t) => t.name)
        expect(names).toEqual([...FILE_TOOLS, ...UPSTREAM_TOOLS, 'raw__big'])
        expect(textOf(await s.client.callTool({ name: 'raw__echo', arguments: { text: 'big' } }))).toBe('echo: big')
        expect(await initializes(record)).toEqual([expect.objectContaining({ id: 'toolgate-raw-initialize' })])
        expect(s.stderr()).toContain('first listing: answered (11 tools)')
      } finally {
        await s.close()
      }
    },
    TEST_MS,
  )

  it('the first listing refuses schemas as deep as registration does', () => {
    expect(FIRST_LISTING_MAX_DEPTH).toBe(MAX_SCHEMA_DEPTH)
  })

  it("the build's listing of the file tools is the live one (a stale or drifted build fails here)", async () => {
    const built = await readFile(path.resolve(import.meta.dirname, '../../dist/gateway', OWN_TOOLS_FILE), 'utf8')
    expect(built).toBe(`${JSON.stringify(await listOwnFileTools())}\n`)
    const { ripgrep, javascript } = JSON.parse(built) as Record<string, { name: string }[]>
    expect(ripgrep?.map((t) => t.name)).toEqual(FILE_TOOLS)
    expect(javascript?.map((t) => t.name)).toEqual(FILE_TOOLS)
  })
})

// Its first listing never comes: the deadline hands the client to the gateway, which lists anew. Last
// in the file: its gateway, started with the file, has sat out most of that deadline by now.
describe('serve over stdio: the first listing from an upstream that never lists (issue 35)', () => {
  wholeListingCase('hold', 'no listing at all', () => holding)
})
