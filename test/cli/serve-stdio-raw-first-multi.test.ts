// `toolgate serve` over stdio answers its client's first `initialize` and `tools/list` from the
// executable's first script with several stdio upstreams too (issue 35, Performance): every
// upstream's handshake and listing run at once over the processes spawned early, the listing is the
// gateway's own (config order, prefixes), each connection adopts its upstream's handshake, and
// whatever one upstream does wrong hands the whole first listing to the gateway.
// The upstreams are the recording fixture; each line it records names its process, so "one
// initialize per process" is counted, not assumed.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'
import { BOUND_MS, INITIALIZE, Peer } from './raw-peer.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/raw-first-upstream.mjs')
const TEST_MS = 3 * BOUND_MS
const TOOLS = ['echo', 'structured', 'tasky', 'grow']

let dir: string
let cleanup: () => Promise<void>
let runs = 0
/** The 'hold' case's gateway (the file's last case), started with the file. */
let holding: Promise<Serving>

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  // One of its upstreams never gives the first listing, so this gateway sits out the 10 s deadline
  // before it lists: started here, it does so while the other cases run. Its case awaits it and
  // reports a failure to start; until then, a rejection is not left unhandled.
  holding = servingOddOne('hold')
  holding.catch(() => {})
})
afterAll(async () => {
  await (await holding.catch(() => undefined))?.s.close()
  await cleanup()
})

interface Upstream {
  readonly name: string
  readonly mode?: string
  readonly prefix?: string
  readonly resources?: boolean
}

/** A config with one fixture per upstream (in config order), and the file each records to. */
async function setup(upstreams: readonly Upstream[]): Promise<{ config: string; records: string[] }> {
  const run = ++runs
  const records = upstreams.map(({ name }) => path.join(dir, `record-${run}-${name}.jsonl`))
  const servers = Object.fromEntries(
    upstreams.map(({ name, mode, prefix, resources }, at) => [
      name,
      {
        command: process.execPath,
        args: [UPSTREAM],
        env: {
          RECORD: records[at] as string,
          MODE: mode ?? '',
          LABEL: `${name}: `,
          ...(resources ? { RESOURCES: '1' } : {}),
        },
        ...(prefix === undefined ? {} : { prefix }),
      },
    ]),
  )
  const config = await writeConfig(dir, { servers, files: false }, `config-${run}.json`)
  return { config, records }
}

interface Serving {
  readonly s: Connected
  readonly records: string[]
}

/** `serve` over stdio with an SDK client, two fixtures its upstreams: 'good', and 'odd' in `mode`. */
async function servingOddOne(mode: string): Promise<Serving> {
  const { config, records } = await setup([{ name: 'good' }, { name: 'odd', mode }])
  return { s: await serveStdio(['--config', config]), records }
}

/** Each process's `initialize` requests, by the process that got them. */
async function initializesByProcess(record: string): Promise<Map<number, { id: unknown }[]>> {
  const text = await readFile(record, 'utf8')
  const byProcess = new Map<number, { id: unknown }[]>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const message = JSON.parse(line) as { id?: unknown; method?: string; pid: number }
    const list = byProcess.get(message.pid) ?? []
    if (message.method === 'initialize') list.push({ id: message.id })
    byProcess.set(message.pid, list)
  }
  return byProcess
}

/** The requests of the first listing's own a process got (by id). */
async function rawRequests(record: string): Promise<string[]> {
  const text = await readFile(record, 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { id?: unknown })
    .flatMap((m) => (typeof m.id === 'string' && m.id.startsWith('toolgate-raw-') ? [m.id] : []))
}

/** `tools/list` through a raw peer: the first listing (`ping` first turns it off), the tools' JSON. */
async function listed(config: string, pingFirst: boolean): Promise<{ tools: string; initialized: string; peer: Peer }> {
  const peer = new Peer(['--config', config, '--drain-timeout', '600'])
  if (pingFirst) peer.send({ id: 0, method: 'ping' })
  peer.send({ id: 1, ...INITIALIZE })
  peer.send({ method: 'notifications/initialized' })
  peer.send({ id: 2, method: 'tools/list' })
  const initialized = JSON.stringify((await peer.answer(1)).result)
  const answer = await peer.answer(2)
  return { tools: JSON.stringify(answer.result?.tools), initialized, peer }
}

const names = (tools: string) => (JSON.parse(tools) as { name: string }[]).map((t) => t.name)

/** The case of one upstream of two answering `what` (in `mode`), on the gateway `serve` gives. */
function oddOneCase(mode: string, what: string, serve: () => Promise<Serving>): void {
  it.concurrent(
    `one upstream of two answering ${what}: the gateway lists both, each process gets one initialize`,
    async ({ expect }) => {
      const { s, records } = await serve()
      try {
        await expect
          .poll(async () => (await s.client.listTools()).tools.map((t) => t.name), { timeout: BOUND_MS })
          .toEqual(['good', 'odd'].flatMap((name) => TOOLS.map((tool) => `${name}__${tool}`)))
        for (const name of ['good', 'odd'])
          expect(textOf(await s.client.callTool({ name: `${name}__echo`, arguments: { text: mode } }))).toBe(
            `${name}: echo: ${mode}`,
          )
        for (const record of records)
          for (const got of (await initializesByProcess(record)).values()) expect(got).toHaveLength(1)
        // The good one's handshake was adopted: its process was started and initialized once.
        expect([...(await initializesByProcess(records[0] as string)).values()]).toEqual([
          [{ id: 'toolgate-raw-initialize' }],
        ])
        // An initialize answer the SDK client would refuse is not listed from.
        if (mode === 'badinit') expect(await rawRequests(records[1] as string)).toEqual(['toolgate-raw-initialize'])
      } finally {
        await s.close()
      }
    },
    TEST_MS,
  )
}

describe('serve over stdio: the first listing with several upstreams (issue 35)', () => {
  for (const upstreams of [
    [{ name: 'zeta' }, { name: 'alpha', prefix: 'a.' }],
    [{ name: 'zeta' }, { name: 'alpha' }, { name: 'mid-one' }],
  ] as Upstream[][])
    it(
      `${upstreams.length} upstreams: lists byte for byte what the gateway lists, in config order, each initialized once`,
      async () => {
        const first = await setup(upstreams)
        const raw = await listed(first.config, false)
        // The raw path ran: each upstream's one initialize came from the first script.
        for (const record of first.records) {
          expect([...(await initializesByProcess(record)).values()]).toEqual([[{ id: 'toolgate-raw-initialize' }]])
          expect(await rawRequests(record)).toEqual(['toolgate-raw-initialize', 'toolgate-raw-tools-list'])
        }
        // The gateway's own listing afterwards is the same, and announces no change.
        raw.peer.send({ id: 3, method: 'tools/list' })
        const again = await raw.peer.answer(3)
        raw.peer.send({ id: 4, method: 'ping' })
        await raw.peer.answer(4)
        expect(JSON.stringify(again.result?.tools)).toBe(raw.tools)
        expect(raw.peer.received.filter((m) => m.method === 'notifications/tools/list_changed')).toEqual([])
        raw.peer.child.stdin.end()
        expect(await raw.peer.exited).toBe(0)

        const second = await setup(upstreams)
        const normal = await listed(second.config, true)
        for (const record of second.records)
          expect([...(await initializesByProcess(record)).values()]).toEqual([[{ id: expect.any(Number) }]])
        normal.peer.child.stdin.end()
        await normal.peer.exited
        expect(raw.tools).toBe(normal.tools)
        expect(raw.initialized).toBe(normal.initialized)
        const prefixes = upstreams.map(({ name, prefix }) => prefix ?? `${name.replace(/-/g, '_')}__`)
        expect(names(raw.tools)).toEqual(prefixes.flatMap((prefix) => TOOLS.map((tool) => `${prefix}${tool}`)))
      },
      TEST_MS,
    )

  it(
    "an official SDK client's whole session after it: calls reach each upstream",
    async () => {
      const { config, records } = await setup([{ name: 'one' }, { name: 'two' }, { name: 'three' }])
      const s = await serveStdio(['--config', config])
      try {
        const first = await s.client.listTools()
        expect(first.tools.map((t) => t.name)).toEqual(
          ['one', 'two', 'three'].flatMap((name) => TOOLS.map((tool) => `${name}__${tool}`)),
        )
        for (const name of ['one', 'two', 'three'])
          expect(textOf(await s.client.callTool({ name: `${name}__echo`, arguments: { text: 'hi' } }))).toBe(
            `${name}: echo: hi`,
          )
        expect((await s.client.callTool({ name: 'three__structured', arguments: {} })).structuredContent).toEqual({
          n: 1,
        })
        expect((await s.client.listTools()).tools).toEqual(first.tools)
        for (const record of records)
          expect([...(await initializesByProcess(record)).values()]).toEqual([[{ id: 'toolgate-raw-initialize' }]])
      } finally {
        await s.close()
      }
    },
    TEST_MS,
  )

  // The odd upstreams' cases and the two refusals run at once (each its own gateway and upstreams):
  // a refusing gateway takes seconds to exit, and the others are served meanwhile. None of them needs
  // its first listing to beat the 10 s deadline (the good upstream's handshake is adopted either
  // way), so sharing the cores cannot fail them.
  for (const [mode, what] of [
    ['cursor', 'a listing in pages'],
    ['error', 'an error for the listing'],
    ['version', 'another protocol version'],
    ['badinit', 'an initialize answer without serverInfo.version'],
    ['crash', 'its end instead of an initialize answer'],
  ] as const)
    oddOneCase(mode, what, () => servingOddOne(mode))

  it.concurrent(
    'a name two upstreams share is left to the gateway, which refuses to start as it always does',
    async ({ expect }) => {
      const { config, records } = await setup([
        { name: 'first', prefix: '' },
        { name: 'second', prefix: '' },
      ])
      const peer = new Peer(['--config', config])
      peer.send({ id: 1, ...INITIALIZE })
      peer.send({ method: 'notifications/initialized' })
      peer.send({ id: 2, method: 'tools/list' })
      expect(await peer.exited).not.toBe(0)
      expect(peer.stderr).toContain('its tool "echo" is not served: the name "echo" is already served by servers.first')
      // No listing was answered with a name twice, or at all.
      expect(peer.received.filter((m) => m.id === 2)).toEqual([])
      for (const record of records)
        expect([...(await initializesByProcess(record)).values()]).toEqual([[{ id: 'toolgate-raw-initialize' }]])
    },
    TEST_MS,
  )

  it.concurrent(
    'two upstreams that may offer one resource URI are left to the gateway, which refuses to start',
    async ({ expect }) => {
      const { config, records } = await setup([
        { name: 'one', resources: true },
        { name: 'two', resources: true },
      ])
      const peer = new Peer(['--config', config])
      peer.send({ id: 1, ...INITIALIZE })
      peer.send({ method: 'notifications/initialized' })
      peer.send({ id: 2, method: 'tools/list' })
      expect(await peer.exited).not.toBe(0)
      expect(peer.stderr).toContain(
        'its resource "demo://fixed" is not served: the URI is already served by servers.one',
      )
      expect(peer.received.filter((m) => m.id === 2)).toEqual([])
      for (const record of records)
        expect([...(await initializesByProcess(record)).values()]).toEqual([[{ id: 'toolgate-raw-initialize' }]])
    },
    TEST_MS,
  )

  it(
    'one upstream with resources beside one without is listed here',
    async () => {
      const { config, records } = await setup([{ name: 'one', resources: true }, { name: 'two' }])
      const raw = await listed(config, false)
      raw.peer.child.stdin.end()
      expect(await raw.peer.exited).toBe(0)
      expect(JSON.parse(raw.initialized).capabilities.resources).toEqual({ subscribe: false, listChanged: true })
      for (const record of records)
        expect(await rawRequests(record)).toEqual(['toolgate-raw-initialize', 'toolgate-raw-tools-list'])
    },
    TEST_MS,
  )
})

// Its first listing never comes: the deadline hands the client to the gateway, which lists anew. Last
// in the file: its gateway, started with the file, has sat out most of that deadline by now.
describe('serve over stdio: the first listing with an upstream that never lists (issue 35)', () => {
  oddOneCase('hold', 'no listing at all', () => holding)
})
