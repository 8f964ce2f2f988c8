// `toolgate serve` over stdio keeps serving past one oversized or malformed message (issue 22): the
// request gets a JSON-RPC error, the next one works, and only a client hang-up ends the process
// with code 0.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, type Connected, serveStdio, tempDir, textOf } from './helpers.js'

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  await writeFile(path.join(dir, 'hello.txt'), 'hello\n')
})
afterAll(() => cleanup())

const MB = 1024 * 1024
// Twelve megabytes through a pipe to a child process: seconds on an idle machine, far more beside
// another suite on two cores. The bound only keeps a real hang from running forever.
const LOADED = 180_000

describe('serve over stdio with the default 10 MiB limit and the SDK client', { timeout: LOADED }, () => {
  let s: Connected
  beforeAll(async () => {
    s = await serveStdio(['--root', dir])
  }, LOADED)
  afterAll(() => s.close())

  it('answers a 12 MB write_file with an error naming the limit, writes nothing, and serves the next call', async () => {
    const content = 'x'.repeat(12 * MB)
    const error = await s.client.callTool({ name: 'write_file', arguments: { path: 'big.txt', content } }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).code).toBe(-32600)
    expect((error as McpError).message).toMatch(/message too large: \d+ bytes, over the limit of 10485760 bytes/)
    expect((error as McpError).message).toContain('--max-message-bytes')
    await expect(readFile(path.join(dir, 'big.txt'), 'utf8')).rejects.toThrow()
    const read = await s.client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } })
    expect(textOf(read)).toContain('hello')
    expect(s.stderr()).toMatch(/refused a request \(id \d+\): message too large/)
  })
})

/** A raw line-level client: what an SDK client cannot send (garbage, a chosen id placement). */
class RawClient {
  readonly child: ChildProcessWithoutNullStreams
  stderr = ''
  private buffer = ''
  private readonly messages: Record<string, unknown>[] = []
  private waiters: (() => void)[] = []
  private closed = false
  private writeError: Error | undefined
  readonly exited: Promise<number | null>

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: 'pipe' })
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk
      let newline = this.buffer.indexOf('\n')
      while (newline !== -1) {
        this.messages.push(JSON.parse(this.buffer.slice(0, newline)))
        this.buffer = this.buffer.slice(newline + 1)
        newline = this.buffer.indexOf('\n')
      }
      for (const wake of this.waiters.splice(0)) wake()
    })
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString()
    })
    // A server that exits early closes its stdin, and a pending write then fails with EPIPE: kept
    // for next()'s error rather than thrown at the run. 'close', not 'exit': by then all the
    // server wrote to stdout and stderr has been read.
    this.child.stdin.on('error', (error) => {
      this.writeError = error
    })
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code) => {
        this.closed = true
        for (const wake of this.waiters.splice(0)) wake()
        resolve(code)
      }),
    )
  }

  write(text: string): void {
    this.child.stdin.write(text)
  }

  /** The next message from the server that satisfies `match`. */
  async next(match: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (;;) {
      const index = this.messages.findIndex(match)
      if (index !== -1) return this.messages.splice(index, 1)[0]
      if (this.closed)
        throw new Error(`serve exited first${this.writeError ? ` (${this.writeError.message})` : ''}: ${this.stderr}`)
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
  }

  async initialize(): Promise<void> {
    this.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      })}\n${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
    )
    await this.next((m) => m.id === 0)
  }
}

const readHello = (id: number) =>
  `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'hello.txt' } } })}\n`

describe('serve over stdio, line by line', { timeout: LOADED }, () => {
  it('answers a garbage line over the limit and a short non-JSON line, then keeps serving; ending stdin exits 0', async () => {
    const raw = new RawClient(['--root', dir])
    await raw.initialize()
    // 12 MB without structure, written in pieces as a pipe delivers it.
    const garbage = 'g'.repeat(MB)
    for (let i = 0; i < 12; i++) raw.write(garbage)
    raw.write('\n')
    const refused = await raw.next((m) => m.id === undefined && 'error' in m)
    expect(refused.error).toMatchObject({ code: -32600, message: expect.stringMatching(/message too large/) })
    raw.write('not json at all\n')
    const parse = await raw.next((m) => m.id === undefined && 'error' in m)
    expect(parse.error).toMatchObject({ code: -32700 })
    raw.write(readHello(7))
    const answer = await raw.next((m) => m.id === 7)
    expect(JSON.stringify(answer.result)).toContain('hello')
    raw.child.stdin.end()
    expect(await raw.exited).toBe(0)
    expect(raw.stderr).toMatch(/message too large/)
  })

  it('takes the limit from --max-message-bytes and finds the id wherever the request puts it', async () => {
    const raw = new RawClient(['--root', dir, '--max-message-bytes', '100000'])
    await raw.initialize()
    const big = 'y'.repeat(200_000)
    // The id after the bulk (as the SDK client writes it), then before it, then as a string.
    raw.write(
      `{"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"${big}","q":"\\"id\\":99}"}},"jsonrpc":"2.0","id":11}\n`,
    )
    raw.write(`{"jsonrpc":"2.0","id":"s-12","method":"tools/call","params":{"arguments":{"content":"${big}"}}}\n`)
    const first = await raw.next((m) => m.id === 11)
    expect(first.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/over the limit of 100000 bytes/),
    })
    const second = await raw.next((m) => m.id === 's-12')
    expect(second.error).toMatchObject({ code: -32600 })
    // Just under the limit is read as usual.
    raw.write(readHello(13))
    expect(JSON.stringify((await raw.next((m) => m.id === 13)).result)).toContain('hello')
    raw.child.stdin.end()
    expect(await raw.exited).toBe(0)
  })

  it('rejects an unusable limit', async () => {
    const raw = new RawClient(['--root', dir, '--max-message-bytes', '12'])
    expect(await raw.exited).toBe(2)
    expect(raw.stderr).toMatch(/--max-message-bytes: expected a whole number of bytes, at least 65536/)
  })

  it('a transport that fails (stdout is a full disk) exits non-zero with the reason on stderr', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--root', dir], {
      stdio: ['pipe', openSync('/dev/full', 'w'), 'pipe'],
    })
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    // 'close', not 'exit': the reason written just before the exit is read by then.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
    child.stdin?.write(readHello(1).replace('"tools/call"', '"ping"'))
    expect(await exited).toBe(1)
    expect(stderr).toMatch(/the stdio transport ended: writing stdout failed: .*ENOSPC/)
  })
})
