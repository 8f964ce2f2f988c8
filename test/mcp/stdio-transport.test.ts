// The stdio server transport of `toolgate serve` (issue 22): an oversized or malformed line costs
// only that message, whichever way the bytes are split into chunks.
import { PassThrough } from 'node:stream'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { LineStdioClientTransport } from '../../src/mcp/client/stdio-client-transport.js'
import { LineStdioServerTransport } from '../../src/mcp/server/stdio-transport.js'

const LIMIT = 64 * 1024

async function open(endGraceMs?: number) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const transport = new LineStdioServerTransport({
    stdin,
    stdout,
    maxMessageBytes: LIMIT,
    ...(endGraceMs === undefined ? {} : { endGraceMs }),
  })
  const received: JSONRPCMessage[] = []
  const errors: string[] = []
  let closed = 0
  transport.onmessage = (message) => received.push(message)
  transport.onerror = (error) => errors.push(error.message)
  transport.onclose = () => closed++
  await transport.start()
  let out = ''
  stdout.setEncoding('utf8')
  stdout.on('data', (chunk: string) => {
    out += chunk
  })
  /** Write `text` in pieces of `size` bytes, then let the stream deliver them. */
  const feed = async (text: string, size = text.length) => {
    const bytes = Buffer.from(text)
    for (let i = 0; i < bytes.length; i += size) stdin.write(bytes.subarray(i, i + size))
    await new Promise((resolve) => setImmediate(resolve))
  }
  const replies = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
  return { stdin, transport, received, errors, feed, replies, closed: () => closed }
}

const ping = (id: number | string) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`

/** Starts `transport`, writes one ping and ends its stdin at once; resolves once the transport closed. */
async function endWithOnePing(transport: LineStdioServerTransport, stdin: PassThrough): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve
  })
  await transport.start()
  stdin.write(ping(1))
  stdin.end()
  await closed
}

describe('LineStdioServerTransport', () => {
  it('refuses an oversized request split at every byte boundary and finds its id past escapes', async () => {
    for (const size of [1, 7, 4096, 1 << 20]) {
      const t = await open()
      const big = 'a\\"b\\\\'.repeat(LIMIT / 4)
      await t.feed(`{"method":"x","params":{"s":"${big}","n":[1,{"id":5}]},"jsonrpc":"2.0","id":"r-${size}"}\n`, size)
      await t.feed(ping(2), size)
      expect(t.replies(), `chunks of ${size}`).toEqual([
        {
          jsonrpc: '2.0',
          id: `r-${size}`,
          error: { code: -32600, message: expect.stringMatching(/message too large/) },
        },
      ])
      expect(t.received).toEqual([{ jsonrpc: '2.0', id: 2, method: 'ping' }])
      expect(t.closed()).toBe(0)
    }
  })

  it("fails the server's own waiting request when the client's response is oversized", async () => {
    const t = await open()
    await t.feed(`{"jsonrpc":"2.0","id":4,"result":{"content":"${'z'.repeat(LIMIT)}"}}\n`)
    expect(t.replies()).toEqual([])
    expect(t.received).toEqual([
      { jsonrpc: '2.0', id: 4, error: { code: -32600, message: expect.stringMatching(/response was refused/) } },
    ])
  })

  it('never answers a notification, oversized or malformed, but reports it', async () => {
    const t = await open()
    await t.feed(`{"jsonrpc":"2.0","method":"notifications/x","params":{"s":"${'n'.repeat(LIMIT)}"}}\n`)
    await t.feed('{"jsonrpc":"1.0","method":"notifications/y"}\n')
    expect(t.replies()).toEqual([])
    expect(t.errors).toEqual([expect.stringMatching(/refused a notification/), expect.stringMatching(/not JSON-RPC/)])
  })

  it('answers a malformed request with its id, a non-JSON line without one, and ignores blank lines', async () => {
    const t = await open()
    await t.feed('{"jsonrpc":"2.0","id":9,"method":3}\n\r\n\n{oops\n')
    expect(t.replies()).toEqual([
      { jsonrpc: '2.0', id: 9, error: { code: -32600, message: expect.any(String) } },
      { jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) } },
    ])
  })

  it('ending stdin closes it without a reason; a read error closes it with one', async () => {
    const a = await open()
    a.stdin.end()
    // Nothing unanswered: it closes on the turn after the end, once stdout took what was written.
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(a.closed()).toBe(1)
    expect(a.transport.endReason).toBeUndefined()
    const b = await open()
    b.stdin.destroy(new Error('boom'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(b.closed()).toBe(1)
    expect(b.transport.endReason?.message).toBe('reading stdin failed: boom')
  })

  it("stays open after stdin's end until every request read was answered, a cancelled one aside (issue 35, item 2)", async () => {
    const t = await open()
    const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } }
    await t.feed(`${ping(1)}${ping('c')}${ping(2)}${JSON.stringify(cancelled)}\n`)
    t.stdin.end()
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(t.closed()).toBe(0)
    await t.transport.send({ jsonrpc: '2.0', id: 2, result: {} })
    await new Promise((resolve) => setImmediate(resolve))
    expect(t.closed()).toBe(0)
    const closed = new Promise<void>((resolve) => {
      t.transport.onclose = resolve
    })
    await t.transport.send({ jsonrpc: '2.0', id: 1, result: {} })
    await closed
    expect(t.transport.endReason).toBeUndefined()
    expect(t.replies().map((m: { id: unknown }) => m.id)).toEqual([2, 1])
  })

  it("closes anyway once endGraceMs passed after stdin's end, naming what was given up (issue 35, item 2)", async () => {
    const t = await open(10)
    await t.feed(ping(1))
    const closed = new Promise<void>((resolve) => {
      t.transport.onclose = resolve
    })
    t.stdin.end()
    await closed
    expect(t.transport.endReason).toBeUndefined()
    expect(t.errors).toEqual([expect.stringMatching(/1 request\(s\) still unanswered after 10 ms were given up/)])
  })

  it("fails the server's requests to the client at once once stdin ended: those waiting then and those sent after (issue 35, item 2)", async () => {
    const t = await open()
    await t.feed(ping(1))
    await t.transport.send({ jsonrpc: '2.0', id: 0, method: 'elicitation/create', params: {} })
    await t.transport.send({ jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: {} })
    // The client answered the first: it is not failed.
    await t.feed(`${JSON.stringify({ jsonrpc: '2.0', id: 0, result: { action: 'cancel' } })}\n`)
    t.stdin.end()
    await new Promise((resolve) => setImmediate(resolve))
    await t.transport.send({ jsonrpc: '2.0', id: 2, method: 'roots/list' })
    await new Promise((resolve) => setImmediate(resolve))
    const gone = { code: -32000, message: expect.stringMatching(/ended stdin, so it can never answer/) }
    expect(t.received.slice(2)).toEqual([
      { jsonrpc: '2.0', id: 1, error: gone },
      { jsonrpc: '2.0', id: 2, error: gone },
    ])
    // What was sent after the end never reached stdout.
    expect(t.replies().map((m: { method?: string }) => m.method)).toEqual([
      'elicitation/create',
      'sampling/createMessage',
    ])
    expect(t.closed()).toBe(0)
    await t.transport.send({ jsonrpc: '2.0', id: 1, result: {} })
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(t.closed()).toBe(1)
  })

  it('cancels the calls once endGraceMs passed, and closes when they answered (issue 35, item 2)', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough().resume()
    const transport = new LineStdioServerTransport({ stdin, stdout, endGraceMs: 10, cancelGraceMs: 60_000 })
    const reasons: string[] = []
    transport.cancelCalls = (reason) => {
      reasons.push(reason)
      // The cancelled call answers, as the pipeline's cancelled result does.
      setImmediate(() => void transport.send({ jsonrpc: '2.0', id: 1, result: { isError: true, content: [] } }))
    }
    await endWithOnePing(transport, stdin)
    expect(reasons).toEqual([expect.stringMatching(/ended stdin and --drain-timeout passed/)])
    expect(transport.endReason).toBeUndefined()
  })

  it('holds the end grace while the gateway starts: --drain-timeout counts from serving(), and the call is cancelled, not lost (issue 35, item 2)', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough().resume()
    const transport = new LineStdioServerTransport({ stdin, stdout, endGraceMs: 10, cancelGraceMs: 60_000 })
    const errors: string[] = []
    transport.onerror = (error) => errors.push(error.message)
    let closed = false
    const ended = new Promise<void>((resolve) => {
      transport.onclose = () => {
        closed = true
        resolve()
      }
    })
    transport.holdEndGrace()
    await transport.start()
    stdin.write(ping(1))
    stdin.end()
    await new Promise((resolve) => setImmediate(resolve))
    // A timer set after the end, five times the grace: a grace that ran would have fired first.
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(closed).toBe(false)
    expect(errors).toEqual([])
    const reasons: string[] = []
    transport.cancelCalls = (reason) => {
      reasons.push(reason)
      setImmediate(() => void transport.send({ jsonrpc: '2.0', id: 1, result: { isError: true, content: [] } }))
    }
    transport.serving()
    await ended
    expect(reasons).toEqual([expect.stringMatching(/ended stdin and --drain-timeout passed/)])
    expect(transport.endReason).toBeUndefined()
  })

  it('a held end grace does not hold a client whose requests were all answered: it closes at its end', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough().resume()
    const transport = new LineStdioServerTransport({ stdin, stdout, endGraceMs: 60_000 })
    transport.holdEndGrace()
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve
    })
    await transport.start()
    stdin.write(ping(1))
    await new Promise((resolve) => setImmediate(resolve))
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} })
    stdin.end()
    await closed
    expect(transport.endReason).toBeUndefined()
  })

  it('gives up the calls that do not answer within cancelGraceMs of their cancellation (issue 35, item 2)', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough().resume()
    const transport = new LineStdioServerTransport({ stdin, stdout, endGraceMs: 10, cancelGraceMs: 10 })
    const errors: string[] = []
    transport.onerror = (error) => errors.push(error.message)
    let cancelled = 0
    transport.cancelCalls = () => cancelled++
    await endWithOnePing(transport, stdin)
    expect(cancelled).toBe(1)
    expect(errors).toEqual([
      expect.stringMatching(/cancelling 1 request\(s\) still unanswered after 10 ms/),
      expect.stringMatching(/1 request\(s\) still unanswered 10 ms after they were cancelled were given up/),
    ])
  })

  it('reads every line whichever way the bytes are split: several per chunk, split lines, CRLF, a character across chunks (issue 23)', async () => {
    const text =
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n' +
      '{"jsonrpc":"2.0","method":"notifications/é","params":{"s":"ü€𝄞"}}\n' +
      '\n' +
      '{"jsonrpc":"2.0","id":"x","method":"ping"}\n'
    for (const size of [1, 2, 3, 5, 17, 64, Buffer.byteLength(text)]) {
      const t = await open()
      await t.feed(text, size)
      expect(t.received, `chunks of ${size}`).toEqual([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/é', params: { s: 'ü€𝄞' } },
        { jsonrpc: '2.0', id: 'x', method: 'ping' },
      ])
      expect(t.errors).toEqual([])
    }
  })
})

describe('LineStdioClientTransport', () => {
  it('reads every line of the server whichever way its output is split (issue 23)', async () => {
    // The server writes its lines in pieces with pauses between them, so they arrive as several chunks.
    const pieces = [
      '{"jsonrpc":"2.0","method":"a"}\r\n{"jsonrpc":"2.0","met',
      'hod":"b","params":{"s":"\u00e9\u20ac"}}\n{"jsonrpc":"2.0","method":"c"}\n{"jsonrpc":"2.0","id":"tg-1","res',
      'ult":{}}',
      '\n',
    ]
    const script = `const pieces = ${JSON.stringify(pieces)}; let i = 0; const next = () => { process.stdout.write(pieces[i++]); if (i < pieces.length) setTimeout(next, 30) }; next(); process.stdin.resume()`
    const transport = new LineStdioClientTransport(
      { command: process.execPath, args: ['-e', script] },
      { maxBufferSize: 1024 * 1024 },
    )
    const received: JSONRPCMessage[] = []
    const errors: Error[] = []
    let all!: () => void
    const done = new Promise<void>((resolve) => {
      all = resolve
    })
    transport.onmessage = (message) => {
      received.push(message)
      if (received.length === 4) all()
    }
    transport.onerror = (error) => errors.push(error)
    await transport.start()
    await done
    await transport.close()
    expect(received).toEqual([
      { jsonrpc: '2.0', method: 'a' },
      { jsonrpc: '2.0', method: 'b', params: { s: 'é€' } },
      { jsonrpc: '2.0', method: 'c' },
      { jsonrpc: '2.0', id: 'tg-1', result: {} },
    ])
    expect(errors).toEqual([])
  })
})
