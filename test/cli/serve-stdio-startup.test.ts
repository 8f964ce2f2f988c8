// `toolgate serve` over stdio answers its client while the upstreams start (issue 23, cold start):
// `initialize` as soon as every upstream has said what it offers, `ping` at once, and everything
// else held in order until the upstreams were tried, then answered. The upstream here is a fixture
// that holds its answers until the test creates a file, so "before" and "after" are events, not
// timings.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, tempDir, writeConfig } from './helpers.js'

const HELD = path.resolve(import.meta.dirname, '../fixtures/held-upstream.mjs')
/** A loaded machine may take its time; every wait is for an event, bounded by this. */
const BOUND_MS = 60_000
/** Each test's own bound: a few waits, each bounded above. */
const TEST_MS = 3 * BOUND_MS

interface Result {
  readonly [key: string]: unknown
  readonly tools?: readonly { readonly name: string }[]
}
type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; result?: Result; error?: unknown }

/** The gateway as a raw stdio peer: every line it writes is kept, and waited for by predicate. */
class Peer {
  readonly child: ChildProcessWithoutNullStreams
  readonly received: Message[] = []
  stderr = ''
  readonly exited: Promise<number | null>
  private waiters: { test: (m: Message) => boolean; resolve: (m: Message) => void }[] = []

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let buffer = ''
    this.child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      let at = buffer.indexOf('\n')
      while (at !== -1) {
        const message = JSON.parse(buffer.slice(0, at)) as Message
        buffer = buffer.slice(at + 1)
        this.received.push(message)
        for (const waiter of [...this.waiters])
          if (waiter.test(message)) {
            this.waiters.splice(this.waiters.indexOf(waiter), 1)
            waiter.resolve(message)
          }
        at = buffer.indexOf('\n')
      }
    })
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString()
    })
    // A gateway that exits first (the collision test) closes its stdin, and a write then fails with
    // EPIPE: kept for the failure's message, not thrown at the run. 'close', not 'exit': by then
    // all it wrote to stderr has been read.
    this.child.stdin.on('error', (error) => {
      this.stderr += `\n[the test's write failed: ${error.message}]`
    })
    this.exited = new Promise((resolve) => this.child.once('close', (code) => resolve(code)))
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
  }

  /** The first message (already received or to come) with this id. */
  answer(id: string | number): Promise<Message> {
    return this.next((m) => m.id === id && m.method === undefined, `an answer to ${id}`)
  }

  next(test: (m: Message) => boolean, what: string): Promise<Message> {
    const seen = this.received.find(test)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${what} within ${BOUND_MS} ms; stderr: ${this.stderr}`)),
        BOUND_MS,
      )
      this.waiters.push({
        test,
        resolve: (m) => {
          clearTimeout(timer)
          resolve(m)
        },
      })
    })
  }

  async stop(): Promise<number | null> {
    this.child.stdin.end()
    return this.exited
  }
}

const initialize = (id: string | number) => ({
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1.0.0' } },
})

let dir: string
let cleanup: () => Promise<void>
let serial = 0
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(() => cleanup())

/** A config with one held upstream; `release()` lets it answer. */
async function heldSetup(flags: string[] = [], extra: Record<string, unknown> = {}) {
  const release = path.join(dir, `release-${++serial}`)
  const config = await writeConfig(
    dir,
    { servers: { held: { command: process.execPath, args: [HELD, release, ...flags] }, ...extra } },
    `held-${serial}.json`,
  )
  return { config, release: () => writeFile(release, ''), pidFile: `${release}.pid` }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The file's text once it exists (polled: the upstream writes it when it runs), bounded. */
async function waitForFile(file: string): Promise<string> {
  const until = Date.now() + BOUND_MS
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => undefined)
    if (text) return text
    if (Date.now() > until) throw new Error(`${file} was not written within ${BOUND_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Until `pid` is gone (polled: a process's end has no event here), bounded. */
async function gone(pid: number): Promise<boolean> {
  const until = Date.now() + BOUND_MS
  while (alive(pid) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25))
  return !alive(pid)
}

describe('serve over stdio while its upstreams start', () => {
  it('answers initialize and ping before the upstream has listed its tools, and a held tools/list once it has', {
    timeout: TEST_MS,
  }, async () => {
    const { config, release } = await heldSetup()
    const peer = new Peer(['--config', config, '--root', dir])
    try {
      peer.send({ id: 'p', method: 'ping' })
      expect((await peer.answer('p')).result).toEqual({})
      peer.send(initialize(1))
      const init = await peer.answer(1)
      expect(init.result?.serverInfo).toEqual({ name: 'toolgate', version: expect.any(String) })
      expect(init.result?.protocolVersion).toBe('2025-06-18')
      peer.send({ method: 'notifications/initialized' })
      peer.send({ id: 2, method: 'tools/list' })
      peer.send({ id: 'p2', method: 'ping' })
      // The upstream still holds its tools/list: nothing but the ping can have been answered.
      expect((await peer.answer('p2')).result).toEqual({})
      expect(peer.received.some((m) => m.id === 2)).toBe(false)
      await release()
      const listed = await peer.answer(2)
      const names = (listed.result?.tools ?? []).map((tool) => tool.name)
      expect(names).toContain('held__echo')
      expect(names).toContain('read_file')
      // The initialize was answered once, though the server made later handled it too.
      expect(peer.received.filter((m) => m.id === 1)).toHaveLength(1)
      peer.send({ id: 3, method: 'tools/call', params: { name: 'held__echo', arguments: { text: 'hi' } } })
      expect((await peer.answer(3)).result?.content).toEqual([{ type: 'text', text: 'hi' }])
    } finally {
      expect(await peer.stop()).toBe(0)
    }
  })

  it('holds initialize until the upstream has said what it offers, and declares exactly what it would later', {
    timeout: 3 * TEST_MS,
  }, async () => {
    const cases: [string[], Record<string, unknown>][] = [
      [[], {}],
      [['--all'], {}],
      // A server that cannot start is down: every part it might offer is declared.
      [['--hold-initialize'], { down: { command: '/nonexistent/toolgate-test-server' } }],
    ]
    for (const [flags, extra] of cases) {
      const { config, release } = await heldSetup(flags, extra)
      const early = new Peer(['--config', config, '--root', dir])
      try {
        early.send(initialize(1))
        if (flags.includes('--hold-initialize')) {
          // Its features are not known yet: the answer waits for them.
          early.send({ id: 'p', method: 'ping' })
          await early.answer('p')
          expect(early.received.some((m) => m.id === 1)).toBe(false)
          await release()
        }
        const earlyResult = (await early.answer(1)).result
        await release()
        early.send({ id: 2, method: 'tools/list' })
        await early.answer(2)
        // The upstreams wait for the client's initialize, so the first one always meets the gate;
        // once a held request was answered the server itself reads the client, and answers another.
        early.send(initialize(3))
        expect(earlyResult).toEqual((await early.answer(3)).result)
      } finally {
        expect(await early.stop()).toBe(0)
      }
    }
  })

  it('starts its upstreams on a first request that is not a valid initialize, rather than wait for one (issue 23 item 1)', {
    timeout: TEST_MS,
  }, async () => {
    // The upstreams' initialize waits for the client's capabilities; a client that never declares
    // them (a bad initialize, or none before its first request) declared nothing and is still answered.
    for (const first of [
      { id: 1, method: 'initialize', params: { capabilities: 'none' } },
      { id: 1, method: 'tools/list' },
    ]) {
      const { config, release } = await heldSetup()
      const peer = new Peer(['--config', config, '--root', dir])
      try {
        peer.send(first)
        await release()
        const answered = await peer.answer(1)
        expect(answered.result !== undefined || answered.error !== undefined).toBe(true)
        peer.send({ id: 2, method: 'tools/list' })
        const names = ((await peer.answer(2)).result?.tools ?? []).map((tool) => tool.name)
        expect(names).toContain('held__echo')
      } finally {
        expect(await peer.stop()).toBe(0)
      }
    }
  })

  it('never answers a held request the client cancelled', { timeout: TEST_MS }, async () => {
    const { config, release } = await heldSetup()
    const peer = new Peer(['--config', config, '--root', dir])
    try {
      peer.send(initialize(1))
      await peer.answer(1)
      peer.send({ method: 'notifications/initialized' })
      peer.send({ id: 2, method: 'tools/list' })
      peer.send({ method: 'notifications/cancelled', params: { requestId: 2, reason: 'changed my mind' } })
      peer.send({ id: 3, method: 'tools/list' })
      await release()
      await peer.answer(3)
      peer.send({ id: 'p', method: 'ping' })
      await peer.answer('p')
      expect(peer.received.some((m) => m.id === 2)).toBe(false)
    } finally {
      expect(await peer.stop()).toBe(0)
    }
  })

  it('exits cleanly, its upstream stopped, when the client leaves during startup', { timeout: TEST_MS }, async () => {
    const { config, release, pidFile } = await heldSetup()
    const peer = new Peer(['--config', config, '--root', dir])
    peer.send(initialize(1))
    await peer.answer(1)
    peer.send({ id: 2, method: 'tools/list' })
    const pid = Number(await readFile(pidFile, 'utf8'))
    peer.child.stdin.end()
    await release()
    expect(await peer.exited).toBe(0)
    expect(peer.stderr).toBe('')
    expect(await gone(pid)).toBe(true)
  })

  it('exits cleanly, its upstream stopped, when the client leaves before it sent initialize (issue 23 item 1)', {
    timeout: TEST_MS,
  }, async () => {
    // The upstreams' initialize waits for the client's; a client gone first declared nothing.
    const { config, release, pidFile } = await heldSetup()
    const peer = new Peer(['--config', config, '--root', dir])
    const pid = Number(await waitForFile(pidFile))
    peer.child.stdin.end()
    await release()
    expect(await peer.exited).toBe(0)
    expect(peer.stderr).toBe('')
    expect(await gone(pid)).toBe(true)
  })

  it('still exits 1 with the collision named when two upstreams serve one name, the client connected', {
    timeout: TEST_MS,
  }, async () => {
    const config = await writeConfig(
      dir,
      {
        servers: {
          one: { command: process.execPath, args: [HELD, path.join(dir, 'released'), '--all'], prefix: '' },
          two: { command: process.execPath, args: [HELD, path.join(dir, 'released')], prefix: '' },
        },
      },
      'clash.json',
    )
    await writeFile(path.join(dir, 'released'), '')
    const peer = new Peer(['--config', config, '--root', dir])
    peer.send(initialize(1))
    // stdin stays open: the gateway must still stop reading it and exit.
    expect(await peer.exited).toBe(1)
    expect(peer.stderr).toMatch(
      /servers\.(one|two): its tool "echo" is not served: the name "echo" is already served by servers\.(one|two)/,
    )
    peer.child.stdin.end()
  })
})
