// `toolgate serve` over stdio answers its client's first `initialize` and `tools/list` from the
// executable's first script, before the CLI's bundle and the MCP SDK load (issue 35, Performance):
// the upstream's handshake and listing run as plain JSON-RPC over the process spawned early, the
// upstream connection adopts that handshake, and the gateway's server still sees every message.
// The upstream is a fixture that records every message it gets, so "once" is counted, not assumed.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serveStdio, tempDir, textOf, writeConfig } from './helpers.js'
import { BOUND_MS, INITIALIZE, Peer } from './raw-peer.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/raw-first-upstream.mjs')
const TEST_MS = 3 * BOUND_MS

let dir: string
let cleanup: () => Promise<void>
let runs = 0

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => {
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

  for (const [mode, what] of [
    ['cursor', 'a listing in pages'],
    ['error', 'an error for the listing'],
    ['version', 'another protocol version'],
    ['notify', 'a notification before the listing'],
    // Its first listing never comes: the deadline hands the client to the gateway, which lists anew.
    ['hold', 'no listing at all'],
  ] as const)
    it(
      `an upstream answering ${what}: the client gets the whole listing, the upstream one initialize`,
      async () => {
        const { config, record } = await setup(mode)
        const s = await serveStdio(['--config', config])
        try {
          await expect
            .poll(async () => (await s.client.listTools()).tools.map((t) => t.name), { timeout: BOUND_MS })
            .toEqual(['raw__echo', 'raw__structured', 'raw__tasky', 'raw__grow'])
          expect(textOf(await s.client.callTool({ name: 'raw__echo', arguments: { text: mode } }))).toBe(
            `echo: ${mode}`,
          )
          expect(await initializes(record)).toHaveLength(1)
        } finally {
          await s.close()
        }
      },
      TEST_MS,
    )

  it(
    'an initialize it cannot read (a null capability) is left to the gateway, which answers it',
    async () => {
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

  it(
    'a 2026-07-28 client is served as before',
    async () => {
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

  it(
    'a config it cannot list from (a policy) is served as before',
    async () => {
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
