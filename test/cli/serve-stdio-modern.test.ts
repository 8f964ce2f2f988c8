// Issue 35, item 2: `toolgate serve` over stdio speaks MCP 2026-07-28 beside 2025-11-25, the era
// chosen per connection by its first message. The built CLI as a real process, driven by the
// official SDK v2 client pinned to 2026-07-28 (and in auto mode), by raw 2026 lines for the
// envelope checks, and by 2025 clients of both SDKs, which are served as before.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, tempDir, textOf, writeConfig } from './helpers.js'
import { type EraMode, modernStdioClient, type StdioClientOptions } from './modern-client.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const MODERN = '2026-07-28'
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

let dir: string
let cleanup: () => Promise<void>
let config: string
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  await writeFile(path.join(dir, 'hello.txt'), 'hello')
  config = await writeConfig(dir, {
    servers: { up: { command: process.execPath, args: [UPSTREAM] } },
    policy: { ask: ['write_file'] },
  })
})
afterAll(() => cleanup())

const modernClient = (mode: EraMode, answer?: StdioClientOptions['answer']) =>
  modernStdioClient(['--root', dir, '--config', config], { mode, answer })

describe('serve over stdio speaks MCP 2026-07-28 beside 2025-11-25', { timeout: 90_000 }, () => {
  it('discovers, lists and calls with a client pinned to 2026-07-28', async () => {
    const client = await modernClient({ pin: MODERN })
    try {
      expect(client.getProtocolEra()).toBe('modern')
      expect(client.getServerCapabilities()?.tools).toBeDefined()
      expect(client.getServerVersion()?.name).toBe('toolgate')
      const names = (await client.listTools()).tools.map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(['read_file', 'write_file', 'up__echo']))
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } })
      expect(textOf(read)).toContain('hello')
      const echo = await client.callTool({ name: 'up__echo', arguments: { text: 'hi' } })
      expect(echo.structuredContent).toEqual({ echoed: 'hi', length: 2 })
    } finally {
      await client.close()
    }
  })

  it('is chosen by a client in auto mode', async () => {
    const client = await modernClient('auto')
    try {
      expect(client.getProtocolEra()).toBe('modern')
      const echo = await client.callTool({ name: 'up__echo', arguments: { text: 'auto' } })
      expect(echo.structuredContent).toEqual({ echoed: 'auto', length: 4 })
    } finally {
      await client.close()
    }
  })

  it("puts toolgate's ask to the 2026 client as input required: accept runs the call", async () => {
    const asked: string[] = []
    const client = await modernClient({ pin: MODERN }, (params) => {
      asked.push(params.message)
      return { action: 'accept', content: { approve: true } }
    })
    try {
      const done = await client.callTool({ name: 'write_file', arguments: { path: 'yes.txt', content: 'approved' } })
      expect(done.isError).not.toBe(true)
      expect(asked).toHaveLength(1)
      expect(asked[0]).toMatch(/write_file/)
      expect(await readFile(path.join(dir, 'yes.txt'), 'utf8')).toBe('approved')
    } finally {
      await client.close()
    }
  })

  it('a declined ask denies the call and writes nothing; a client that cannot be asked is denied', async () => {
    const client = await modernClient({ pin: MODERN }, () => ({ action: 'decline' }))
    const mute = await modernClient({ pin: MODERN })
    try {
      const declined = await client.callTool({ name: 'write_file', arguments: { path: 'no.txt', content: 'x' } })
      expect(declined.isError).toBe(true)
      expect(textOf(declined)).toMatch(/declined/)
      const denied = await mute.callTool({ name: 'write_file', arguments: { path: 'no.txt', content: 'x' } })
      expect(denied.isError).toBe(true)
      expect(textOf(denied)).toMatch(/cannot be asked/)
      expect(existsSync(path.join(dir, 'no.txt'))).toBe(false)
    } finally {
      await client.close()
      await mute.close()
    }
  })

  it('serves 2025 clients of both SDKs as before', async () => {
    const legacy = new LegacyClient({ name: 'legacy-stdio-test', version: '1.0.0' })
    await legacy.connect(
      new LegacyTransport({ command: process.execPath, args: [BIN, 'serve', '--root', dir, '--config', config] }),
    )
    const v2 = await modernClient('legacy')
    try {
      expect(legacy.getServerVersion()?.name).toBe('toolgate')
      expect(v2.getProtocolEra()).toBe('legacy')
      const [a, b] = await Promise.all([
        legacy.callTool({ name: 'up__echo', arguments: { text: 'old' } }),
        v2.callTool({ name: 'up__echo', arguments: { text: 'v2' } }),
      ])
      expect(a.structuredContent).toEqual({ echoed: 'old', length: 3 })
      expect(b.structuredContent).toEqual({ echoed: 'v2', length: 2 })
    } finally {
      await legacy.close()
      await v2.close()
    }
  })
})

/** A gateway process spoken to line by line: each answer is read by its id. */
class Raw {
  private readonly child: ChildProcess
  private readonly answers = new Map<unknown, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>()
  private readonly early = new Map<unknown, Reply>()
  constructor() {
    this.child = spawn(process.execPath, [BIN, 'serve', '--root', dir, '--config', config], {
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    // A gateway that exits early closes its stdin, and a write then fails with EPIPE: that error is
    // kept and fails the sends still waiting once all the gateway wrote has been read, not the run.
    let writeError: Error | undefined
    this.child.stdin!.on('error', (error) => {
      writeError = error
    })
    this.child.once('close', (code) => {
      const error = new Error(`toolgate serve exited with ${code}${writeError ? ` (${writeError.message})` : ''}`)
      for (const waiting of this.answers.values()) waiting.reject(error)
      this.answers.clear()
    })
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const reply = JSON.parse(line) as Reply
      const waiting = this.answers.get(reply.id)
      if (waiting) waiting.resolve(reply)
      else this.early.set(reply.id, reply)
    })
  }
  send(id: number, method: string, params: Record<string, unknown>): Promise<Reply> {
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    const early = this.early.get(id)
    if (early) return Promise.resolve(early)
    return new Promise((resolve, reject) => this.answers.set(id, { resolve, reject }))
  }
  async close(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', resolve))
    this.child.stdin!.end()
    return exited
  }
}
interface Reply {
  id?: unknown
  error?: { code: number; message: string }
  result?: Record<string, unknown>
}

describe('the 2026 envelope over stdio', { timeout: 90_000 }, () => {
  it('answers a bad envelope with -32602 and its id, then serves the era: cache hints, no ping', async () => {
    const raw = new Raw()
    try {
      const bad = await raw.send(7, 'tools/list', {
        _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': 'none' },
      })
      expect(bad.id).toBe(7)
      expect(bad.error?.code).toBe(-32602)
      const discover = await raw.send(8, 'server/discover', { _meta: ENVELOPE })
      expect(discover.result?.supportedVersions).toContain(MODERN)
      const list = await raw.send(9, 'tools/list', { _meta: ENVELOPE })
      expect(list.result?.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'read_file' })]))
      expect(typeof list.result?.ttlMs).toBe('number')
      // A method the era removed is not found, with its id.
      const ping = await raw.send(10, 'ping', { _meta: ENVELOPE })
      expect(ping.id).toBe(10)
      expect(ping.error?.code).toBe(-32601)
      // The connection stays 2026: a late initialize is refused with the supported revisions.
      const late = await raw.send(11, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'late', version: '1' },
      })
      expect(late.id).toBe(11)
      expect(late.error?.code).toBe(-32022)
    } finally {
      expect(await raw.close()).toBe(0)
    }
  })
})

// Issue 35, item 5: the v2 SDK serves no tasks runtime on a 2026 connection (its typed surface has
// no task methods, and a tool call cannot answer `resultType: "task"`), so the 2026 face declares no
// tasks extension, `tasks/get` is not found, and a call asking for a task completes in-band.
describe('tasks on a 2026 connection', { timeout: 90_000 }, () => {
  it('declares no tasks extension, answers tasks/get with -32601, and runs a task-augmented call in-band', async () => {
    const raw = new Raw()
    try {
      const discover = await raw.send(1, 'server/discover', { _meta: ENVELOPE })
      const capabilities = discover.result?.capabilities as Record<string, unknown>
      expect(capabilities.tools).toBeDefined()
      expect(capabilities.tasks).toBeUndefined()
      expect((capabilities.extensions as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/tasks']).toBe(
        undefined,
      )
      const get = await raw.send(2, 'tasks/get', { taskId: 'nope', _meta: ENVELOPE })
      expect(get.id).toBe(2)
      expect(get.error?.code).toBe(-32601)
      const call = await raw.send(3, 'tools/call', {
        name: 'up__echo',
        arguments: { text: 'now' },
        task: { ttl: 60_000 },
        _meta: ENVELOPE,
      })
      expect(call.result?.resultType).toBe('complete')
      expect(call.result?.structuredContent).toEqual({ echoed: 'now', length: 3 })
    } finally {
      expect(await raw.close()).toBe(0)
    }
  })
})
