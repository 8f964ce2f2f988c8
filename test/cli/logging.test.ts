// `toolgate serve` relays MCP logging (issue 23, item 2): a client's `logging/setLevel` goes to every
// upstream that declared logging, and each upstream's `notifications/message` reach the client with the
// logger set to the upstream's config name ("<name>/<logger>" when the upstream named its own); ping
// is answered.
import path from 'node:path'
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const CHATTY = path.resolve(import.meta.dirname, '../fixtures/logging-mcp-server.mjs')
const PLAIN = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const BOUND_MS = 30_000

let cleanup: () => Promise<void>
let s: Connected
const got: unknown[] = []
beforeAll(async () => {
  let dir: string
  ;({ dir, cleanup } = await tempDir())
  const config = await writeConfig(dir, {
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

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + BOUND_MS
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting; received ${JSON.stringify(got)}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('logging through the gateway', () => {
  it('R-23-2: ping is answered', async () => {
    await expect(s.client.ping()).resolves.toEqual({})
  })

  it('R-23-2: the gateway declares logging; the level set reaches the upstream, messages come back named', async () => {
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
