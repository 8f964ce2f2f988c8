// Issue 27: the gateway defers upstream tools behind search_tools; a search loads its matches for
// that session only and sends list_changed.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/gateway/config.js'
import { type Connected, serveHttp, tempDir, textOf, writeConfig } from './helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')

let dir: string
let cleanup: () => Promise<void>
let s: Connected
let other: Client
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  const config = await writeConfig(dir, {
    root: '.',
    servers: { up: { command: process.execPath, args: [UPSTREAM], defer: true } },
    policy: { deny: ['up__fail'] },
  })
  s = await serveHttp(['--config', config])
  other = new Client({ name: 'other', version: '1.0.0' })
  await other.connect(new StreamableHTTPClientTransport(new URL(s.url!)))
})
afterAll(async () => {
  await other?.close()
  await s?.close()
  await cleanup()
})

describe('a gateway with a deferred upstream', () => {
  it('lists its own tools and search_tools, not the deferred ones, which stay callable', async () => {
    const names = (await s.client.listTools()).tools.map((t) => t.name)
    expect(names).toContain('read_file')
    expect(names).toContain('search_tools')
    expect(names.filter((n) => n.startsWith('up__'))).toEqual([])
    const echo = await s.client.callTool({ name: 'up__echo', arguments: { text: 'hi' } })
    expect(textOf(echo)).toBe('echo: hi')
  })

  it('a search loads the matches for that session, with list_changed; another session is unchanged', async () => {
    const changed = new Promise<void>((resolve) =>
      s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    )
    const found = await s.client.callTool({ name: 'search_tools', arguments: { query: 'echo text back' } })
    expect(found.isError).toBeFalsy()
    expect(textOf(found)).toContain('up__echo')
    await changed
    const names = (await s.client.listTools()).tools.map((t) => t.name)
    expect(names).toContain('up__echo')
    const otherNames = (await other.listTools()).tools.map((t) => t.name)
    expect(otherNames).not.toContain('up__echo')
    expect(otherNames).toContain('search_tools')
  })

  it('sends list_changed only to the session whose search loaded tools (issue 27 item 5)', async () => {
    const connect = async (name: string) => {
      const client = new Client({ name, version: '1.0.0' })
      let count = 0
      let wake: () => void = () => {}
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        count++
        wake()
      })
      await client.connect(new StreamableHTTPClientTransport(new URL(s.url!)))
      // Each session shows its list once, as a client does before it uses the tools.
      await client.listTools()
      const next = () => new Promise<void>((resolve) => (wake = resolve))
      return { client, count: () => count, next }
    }
    const a = await connect('a')
    const b = await connect('b')
    try {
      const aChanged = a.next()
      await a.client.callTool({ name: 'search_tools', arguments: { query: 'echo text back' } })
      await aChanged
      expect(a.count()).toBe(1)
      expect((await a.client.listTools()).tools.map((t) => t.name)).toContain('up__echo')
      expect((await b.client.listTools()).tools.map((t) => t.name)).not.toContain('up__echo')
      // B's own search is its first change: a notification A's search had caused would have come first
      // on the same stream, so B counting one here proves it got none for A's.
      const bChanged = b.next()
      await b.client.callTool({ name: 'search_tools', arguments: { query: 'echo text back' } })
      await bChanged
      expect(b.count()).toBe(1)
      // And A hears nothing of B's: A's next change is its own again.
      const aAgain = a.next()
      await a.client.callTool({ name: 'search_tools', arguments: { query: 'process id of this server' } })
      await aAgain
      expect(a.count()).toBe(2)
    } finally {
      await a.client.close()
      await b.client.close()
    }
  })

  it('never finds a denied tool', async () => {
    const found = await s.client.callTool({
      name: 'search_tools',
      arguments: { query: 'fail always fails', limit: 50 },
    })
    expect(textOf(found)).not.toContain('up__fail')
  })
})

describe('config checking of defer and deferAbove', () => {
  it('accepts true, patterns and a count; reports bad values with their path', () => {
    const ok = parseConfig(
      JSON.stringify({
        servers: { a: { command: 'x', defer: ['list_*'] }, b: { url: 'http://h/', defer: true } },
        deferAbove: 40,
      }),
      'toolgate.json',
    )
    expect(ok.servers?.a?.defer).toEqual(['list_*'])
    expect(ok.servers?.b?.defer).toBe(true)
    expect(ok.deferAbove).toBe(40)
    let error: unknown
    try {
      parseConfig(
        JSON.stringify({
          servers: { a: { command: 'x', defer: 'yes' }, c: { command: 'y', defer: [''] } },
          deferAbove: -1,
        }),
        'toolgate.json',
      )
    } catch (caught) {
      error = caught
    }
    expect((error as { issues: string[] }).issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^servers\.a\.defer: expected true, false or a non-empty array/),
        'servers.c.defer[0]: expected a non-empty tool-name pattern',
        expect.stringMatching(/^deferAbove: expected a whole number/),
      ]),
    )
  })
})

describe('applyDeferral', () => {
  it('defers every upstream tool past deferAbove, per-server patterns otherwise, and nothing by default', async () => {
    const { applyDeferral } = await import('../../src/gateway/gateway-defer.js')
    const { createAgent, createToolRuntime, defineTool } = await import('../../src/index.js')
    const handle = await createToolRuntime()
    try {
      const { ctx, tools } = handle
      const names = ['a__x', 'a__y', 'b__list_things', 'b__get_thing', 'own']
      for (const name of names)
        tools.register(
          defineTool({
            name,
            description: name,
            parameters: {},
            output: { schema: { type: 'string' }, render: () => [] },
            execute: async () => '',
          }),
        )
      const connections = new Map([
        ['a', { tools: ['a__x', 'a__y'] }],
        ['b', { tools: ['b__list_things', 'b__get_thing'] }],
      ]) as unknown as Parameters<typeof applyDeferral>[3]
      const base = { servers: { a: { command: 'x' }, b: { command: 'y', defer: ['list_*'] } } }
      const settings = (extra: object) => ({ ...base, ...extra }) as unknown as Parameters<typeof applyDeferral>[2]
      const patterns = createAgent(ctx, { id: 'p' })
      expect(applyDeferral(tools, patterns, settings({}), connections)).toBe(true)
      expect(tools.deferred(patterns)).toEqual(['b__list_things'])
      const auto = createAgent(ctx, { id: 'auto' })
      expect(applyDeferral(tools, auto, settings({ deferAbove: 3 }), connections)).toBe(true)
      expect(tools.deferred(auto).sort()).toEqual(['a__x', 'a__y', 'b__get_thing', 'b__list_things'])
      const none = createAgent(ctx, { id: 'none' })
      const plain = { servers: { a: { command: 'x' } }, deferAbove: 10 } as unknown as Parameters<
        typeof applyDeferral
      >[2]
      expect(applyDeferral(tools, none, plain, connections)).toBe(false)
      expect(tools.deferred(none)).toEqual([])
    } finally {
      await handle.dispose()
    }
  })
})
