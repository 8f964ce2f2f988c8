// `toolgate serve` relays MCP logging (issue 23, item 2): a client's `logging/setLevel` goes to every
// upstream that declared logging, and each upstream's `notifications/message` reach the client with the
// logger set to the upstream's config name ("<name>/<logger>" when the upstream named its own); ping
// is answered.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveHttp, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const CHATTY = path.resolve(import.meta.dirname, '../fixtures/logging-mcp-server.mjs')
const PLAIN = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const BOUND_MS = 30_000

let cleanup: () => Promise<void>
let config: string
let s: Connected
const got: unknown[] = []
beforeAll(async () => {
  let dir: string
  ;({ dir, cleanup } = await tempDir())
  config = await writeConfig(dir, {
    root: '.',
    // "plain" declares no logging: setLevel must not be sent to it, nor fail because of it.
    servers: {
      chatty: { command: process.execPath, args: [CHATTY] },
      plain: { command: process.execPath, args: [PLAIN] },
    },
  })
  s = await serveStdio(['--config', config])
  s.client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    got.push(params)
  })
})
afterAll(async () => {
  await s?.close()
  await cleanup()
})

async function until(check: () => boolean, seen: unknown = got): Promise<void> {
  const deadline = Date.now() + BOUND_MS
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting; received ${JSON.stringify(seen)}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('logging through the gateway', () => {
  it('issue 23, item 2: ping is answered', async () => {
    await expect(s.client.ping()).resolves.toEqual({})
  })

  it('issue 23, item 2: the gateway declares logging; the level set reaches the upstream, messages come back named', async () => {
    expect(s.client.getServerCapabilities()?.logging).toEqual({})
    await s.client.setLoggingLevel('info')
    const result = await s.client.callTool({ name: 'chatty__chatter', arguments: {} })
    expect(textOf(result)).toBe('chattered at info')
    await until(() => got.length >= 3)
    await s.client.ping()
    expect(got).toEqual([
      { level: 'info', logger: 'chatty', data: { step: 1 } },
      { level: 'warning', logger: 'chatty/core', data: 'running low' },
      { level: 'error', logger: 'chatty', data: 'it broke' },
    ])
    got.length = 0
    await s.client.setLoggingLevel('error')
    const again = await s.client.callTool({ name: 'chatty__chatter', arguments: {} })
    expect(textOf(again)).toBe('chattered at error')
    await until(() => got.length >= 1)
    await s.client.ping()
    expect(got).toEqual([{ level: 'error', logger: 'chatty', data: 'it broke' }])
    expect(s.stderr()).not.toMatch(/setLevel failed/)
  })
})

describe('logging through the gateway over --http, two clients', () => {
  it('issue 23, item 2: upstreams are asked for the lowest level any client set; each client gets only its own', async () => {
    const a = await serveHttp(['--config', config])
    const b = new Client({ name: 'b', version: '1.0.0' })
    try {
      await b.connect(new StreamableHTTPClientTransport(new URL(a.url!)))
      const gotA: { level: string; logger?: string }[] = []
      const gotB: { level: string; logger?: string }[] = []
      a.client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
        gotA.push({ level: params.level, logger: params.logger })
      })
      b.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
        gotB.push({ level: params.level, logger: params.logger })
      })
      await a.client.setLoggingLevel('warning')
      await b.setLoggingLevel('error')
      // b set the higher level last; the upstream still runs at a's.
      const result = await b.callTool({ name: 'chatty__chatter', arguments: {} })
      expect(textOf(result)).toBe('chattered at warning')
      await until(() => gotA.length >= 2 && gotB.length >= 1, { gotA, gotB })
      await Promise.all([a.client.ping(), b.ping()])
      expect(gotA).toEqual([
        { level: 'warning', logger: 'chatty/core' },
        { level: 'error', logger: 'chatty' },
      ])
      expect(gotB).toEqual([{ level: 'error', logger: 'chatty' }])
    } finally {
      await b.close()
      await a.close()
    }
  })
})
