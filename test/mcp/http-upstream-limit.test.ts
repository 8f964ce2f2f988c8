// The maxMessageBytes limit on an HTTP upstream (issue 22's bound, carried to toolgate's own
// Streamable HTTP client transport): a JSON body, an SSE event's data or a line without its end
// that grows past the limit is not read further; the request it answers fails naming the limit and
// the stream is not resumed; the server's own GET stream is closed and reported. A message exactly
// at the limit is read as usual.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { NodeHttpClientTransport } from '../../src/mcp/client/http-client-transport.js'
import { connectMcpServer } from '../../src/mcp/index.js'

const LIMIT = 1000
const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function listen(server: Server): Promise<URL> {
  cleanups.push(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`)),
    ),
  )
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of req) text += chunk
  return text
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Writes `chunk` again and again until the client hangs up; resolves then, with the bytes written. */
function endless(res: ServerResponse, chunk: string): Promise<number> {
  return new Promise((resolve) => {
    let written = 0
    let open = true
    res.once('close', () => {
      open = false
      resolve(written)
    })
    const write = () => {
      if (!open) return
      written += Buffer.byteLength(chunk)
      if (res.write(chunk)) setImmediate(write)
      else res.once('drain', write)
    }
    write()
  })
}

const request: JSONRPCMessage = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } }

/** A transport with the limit, what it reported, and the requests its server saw. */
async function setup(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: string[] = []
  const url = await listen(
    createServer((req, res) => {
      seen.push(req.method ?? '')
      handle(req, res)
    }),
  )
  const transport = new NodeHttpClientTransport(url, {
    maxMessageBytes: LIMIT,
    reconnectionOptions: {
      initialReconnectionDelay: 1,
      maxReconnectionDelay: 1,
      reconnectionDelayGrowFactor: 1,
      maxRetries: 2,
    },
  })
  const errors: string[] = []
  const messages: JSONRPCMessage[] = []
  let closed = false
  transport.onerror = (error) => errors.push(error.message)
  transport.onmessage = (message) => messages.push(message)
  transport.onclose = () => {
    closed = true
  }
  await transport.start()
  cleanups.push(() => transport.close())
  return { transport, seen, errors, messages, isClosed: () => closed }
}

describe('a JSON response body and maxMessageBytes', () => {
  it('stops reading an endless body past the limit and fails the request naming the limit', async () => {
    let hungUp: Promise<number> | undefined
    const { transport, errors, isClosed } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      hungUp = endless(res, ' '.repeat(100))
    })
    await expect(transport.send(request)).rejects.toThrow(
      /sent a message larger than the 1000-byte limit \(the maxMessageBytes option\)/,
    )
    // The connection is dropped as for a stdio server, with the cause the client checks for first.
    expect(errors[0]).toMatch(/exceeded maximum size of 1000 bytes \(the maxMessageBytes option\)/)
    expect(isClosed()).toBe(true)
    await waitUntil(() => hungUp !== undefined, 'the response')
    // The body was not read to its end: the client hung up.
    expect(await hungUp).toBeGreaterThan(LIMIT)
  })

  it('reads a body of exactly the limit', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} })
    const body = answer + ' '.repeat(LIMIT - answer.length)
    expect(Buffer.byteLength(body)).toBe(LIMIT)
    const { transport, errors, messages, isClosed } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      // In small pieces, so the count runs across chunks.
      for (let at = 0; at < body.length; at += 64) res.write(body.slice(at, at + 64))
      res.end()
    })
    await transport.send(request)
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }])
    expect(errors).toEqual([])
    expect(isClosed()).toBe(false)
  })
})

describe('an event stream and maxMessageBytes', () => {
  it('aborts a POST stream whose event grows past the limit over many chunks, and does not resume it', async () => {
    let hungUp: Promise<number> | undefined
    const { transport, seen, errors, isClosed } = await setup((req, res) => {
      if (req.method !== 'POST') return res.writeHead(405).end()
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      // A priming event id makes the stream resumable; the oversized event must still not be replayed.
      res.write('id: p1\ndata:\n\n')
      hungUp = endless(res, `data: ${'x'.repeat(40)}\n`)
    })
    await transport.send(request)
    await waitUntil(isClosed, 'the transport to close')
    expect(errors[0]).toMatch(/exceeded maximum size of 1000 bytes \(the maxMessageBytes option\)/)
    await waitUntil(() => hungUp !== undefined, 'the response')
    await hungUp
    expect(seen).toEqual(['POST'])
  })

  it('aborts a POST stream whose line never ends', async () => {
    const { transport, errors, isClosed } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: ')
      void endless(res, 'y'.repeat(64))
    })
    await transport.send(request)
    await waitUntil(isClosed, 'the transport to close')
    expect(errors[0]).toMatch(/exceeded maximum size of 1000 bytes/)
  })

  it('reads an event whose data is exactly the limit', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} })
    const data = answer + ' '.repeat(LIMIT - answer.length)
    const { transport, errors, messages, isClosed } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const event = `event: message\ndata: ${data}\n\n`
      for (let at = 0; at < event.length; at += 50) res.write(event.slice(at, at + 50))
      res.end()
    })
    await transport.send(request)
    await waitUntil(() => messages.length > 0, 'the response')
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }])
    expect(errors).toEqual([])
    expect(isClosed()).toBe(false)
  })

  it("closes the server's own GET stream past the limit, reports it, and keeps the transport", async () => {
    const { transport, seen, errors, isClosed } = await setup((req, res) => {
      if (req.method === 'POST') return res.writeHead(202).end()
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      void endless(res, `data: ${'z'.repeat(40)}\n`)
    })
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    await waitUntil(() => errors.length > 0, 'the error')
    expect(errors).toEqual([
      "Streamable HTTP error: the server's stream sent a message larger than the 1000-byte limit (the maxMessageBytes option), so the stream was closed",
    ])
    expect(isClosed()).toBe(false)
    expect(seen).toEqual(['POST', 'GET'])
  })
})

/** A hand-written MCP server: `say` answers with `bytes` characters of text, as JSON or as an event stream. */
async function upstream(stream: boolean, floodGetStream = false) {
  let initialized = 0
  const url = await listen(
    createServer(async (req, res) => {
      if (req.method === 'GET' && floodGetStream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        return void endless(res, `data: ${'z'.repeat(40)}\n`)
      }
      if (req.method !== 'POST') return res.writeHead(405).end()
      const message = JSON.parse(await bodyOf(req))
      if (!('id' in message)) return res.writeHead(202).end()
      let result: unknown = {}
      if (message.method === 'initialize') {
        initialized++
        result = {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'hand', version: '1.0.0' },
        }
      } else if (message.method === 'tools/list')
        result = {
          tools: [{ name: 'say', inputSchema: { type: 'object', properties: { bytes: { type: 'number' } } } }],
        }
      else if (message.method === 'tools/call')
        result = { content: [{ type: 'text', text: 'x'.repeat(message.params.arguments.bytes) }] }
      const json = JSON.stringify({ jsonrpc: '2.0', id: message.id, result })
      if (!stream) return res.writeHead(200, { 'content-type': 'application/json' }).end(json)
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const event = `event: message\ndata: ${json}\n\n`
      for (let at = 0; at < event.length; at += 100) res.write(event.slice(at, at + 100))
      res.end()
    }),
  )
  return { url, sessions: () => initialized }
}

describe('connectMcpServer over HTTP with maxMessageBytes', () => {
  for (const stream of [false, true]) {
    it(`fails a call answered too big (${stream ? 'event stream' : 'JSON'}) naming the limit; the next call works`, async () => {
      const { url, sessions } = await upstream(stream)
      await using runtime = await createToolRuntime()
      const connection = await connectMcpServer(
        runtime.ctx,
        { url: url.href },
        { prefix: 'up__', maxMessageBytes: LIMIT },
      )
      try {
        const call = (bytes: number) =>
          runtime.tools.execute({
            callId: `c-${bytes}-${Math.random()}`,
            name: 'up__say',
            arguments: { bytes },
            signal: new AbortController().signal,
          })
        const big = await call(5000)
        expect(big.isError).toBe(true)
        expect(big.error?.message).toMatch(
          /sent a message larger than the 1000-byte limit \(the maxMessageBytes option\), so the connection was dropped/,
        )
        const small = await call(10)
        expect(small).toMatchObject({ isError: false, content: [{ type: 'text', text: 'x'.repeat(10) }] })
        expect(sessions()).toBe(2)
      } finally {
        await connection.close()
      }
    })
  }
})

describe("an HTTP upstream's own event stream past maxMessageBytes", () => {
  it('is closed with a warning naming the limit, and calls go on', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => {
      if (warning.name === 'McpConnectionWarning') warnings.push(warning.message)
    }
    process.on('warning', onWarning)
    cleanups.push(() => process.off('warning', onWarning))
    const { url, sessions } = await upstream(false, true)
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(
      runtime.ctx,
      { url: url.href },
      { prefix: 'up__', maxMessageBytes: LIMIT },
    )
    try {
      await waitUntil(() => warnings.length > 0, 'the warning')
      expect(warnings).toEqual([
        expect.stringMatching(
          /: Streamable HTTP error: the server's stream sent a message larger than the 1000-byte limit \(the maxMessageBytes option\), so the stream was closed$/,
        ),
      ])
      const small = await runtime.tools.execute({
        callId: 'c-small',
        name: 'up__say',
        arguments: { bytes: 3 },
        signal: new AbortController().signal,
      })
      expect(small).toMatchObject({ isError: false, content: [{ type: 'text', text: 'xxx' }] })
      expect(sessions()).toBe(1)
    } finally {
      await connection.close()
    }
  })
})
