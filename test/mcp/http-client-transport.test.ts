// Issue 23 (Performance, Streamable HTTP): the gateway's client transport to an HTTP upstream is
// toolgate's own, over node:http with a hand-written SSE reader, in place of the SDK's
// StreamableHTTPClientTransport. It must keep what the SDK transport does (sessions, protocol
// version, the GET stream, resumption with Last-Event-ID, OAuth on 401, its error texts) and read
// event streams correctly whatever the chunking.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { type JSONRPCMessage, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  NodeHttpClientTransport,
  StreamableHTTPError as OurStreamableHTTPError,
} from '../../src/mcp/client/http-client-transport.js'
import { upstreamFetch } from '../../src/mcp/client/http-fetch.js'
import { createMcpOAuthProvider } from '../../src/mcp/client/oauth.js'
import { type SseEvent, SseParser } from '../../src/mcp/client/sse-parser.js'
import { BoundedEventStore } from '../../src/mcp/server/event-store.js'

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function listen(server: Server): Promise<string> {
  cleanups.push(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  )
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of req) text += chunk
  return text
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 30_000
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** An MCP server over the SDK's own server transport, with the headers of every request kept. */
async function sdkServer(options: { json: boolean }) {
  const mcp = new McpServer({ name: 'sdk-upstream', version: '1.0.0' })
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
    const token = extra._meta?.progressToken
    if (token !== undefined)
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } })
    return { content: [{ type: 'text', text: `echo: ${text}` }] }
  })
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    enableJsonResponse: options.json,
    ...(options.json ? {} : { eventStore: new BoundedEventStore() }),
  })
  await mcp.connect(transport)
  cleanups.push(() => mcp.close())
  const requests: { method: string; headers: IncomingMessage['headers'] }[] = []
  const url = `${await listen(
    createServer(async (req, res) => {
      requests.push({ method: req.method ?? '', headers: req.headers })
      const text = await bodyOf(req)
      await transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text))
    }),
  )}/mcp`
  return { mcp, transport, requests, url: new URL(url) }
}

async function connect(transport: Transport, timeout = 20_000): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(transport, { timeout })
  cleanups.push(() => client.close())
  return client
}

describe('SseParser', () => {
  const stream =
    '\uFEFF: a comment first\r\n' +
    'retry: 1500\r\n' +
    'id: 1\r\n' +
    'data: {"a":"ü€😀"}\r\n\r\n' +
    'event: note\n' +
    'data:first\n' +
    'data: second\n' +
    ':keep-alive\n' +
    'data\n\n' +
    'id: 2\rdata: cr ends\r\r' +
    'retry: soon\n' +
    'id\n' +
    'bogus: field\n' +
    'data:  two spaces\n\n' +
    'id: only an id\n\n' +
    'data: never finished'
  const expected: SseEvent[] = [
    { event: 'message', data: '{"a":"ü€😀"}', id: '1' },
    { event: 'note', data: 'first\nsecond\n', id: '1' },
    { event: 'message', data: 'cr ends', id: '2' },
    { event: 'message', data: ' two spaces', id: '' },
    { event: 'message', data: undefined, id: 'only an id' },
  ]

  function parse(chunks: Buffer[]): { events: SseEvent[]; retries: number[]; last: string } {
    const events: SseEvent[] = []
    const retries: number[] = []
    const parser = new SseParser({ event: (e) => events.push(e), retry: (ms) => retries.push(ms) })
    for (const chunk of chunks) parser.push(chunk)
    return { events, retries, last: parser.lastEventId }
  }

  it('issue 23, item 6: reads fields, comments, CRLF/CR/LF line ends and multi-line data as the HTML standard does', () => {
    const whole = parse([Buffer.from(stream)])
    expect(whole.events).toEqual(expected)
    expect(whole.retries).toEqual([1500])
    expect(whole.last).toBe('only an id')
  })

  it('gives the same events however the bytes are split: at every boundary, and one byte at a time', () => {
    const bytes = Buffer.from(stream)
    for (let at = 0; at <= bytes.length; at++) {
      const split = parse([bytes.subarray(0, at), bytes.subarray(at)])
      expect(split.events, `split at byte ${at}`).toEqual(expected)
      expect(split.retries).toEqual([1500])
    }
    const single = parse([...bytes].map((byte) => Buffer.from([byte])))
    expect(single.events).toEqual(expected)
    // Three-way splits around the CRLF pairs and inside the four-byte emoji.
    for (let a = 0; a < 60; a++)
      for (let b = a; b < 60; b++) {
        const three = parse([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)])
        expect(three.events, `split at ${a} and ${b}`).toEqual(expected)
      }
  })
})

describe('NodeHttpClientTransport against the SDK server transport', () => {
  for (const json of [false, true])
    it(`${json ? 'JSON' : 'SSE'} responses: session, protocol version, progress, the GET stream and DELETE`, async () => {
      const server = await sdkServer({ json })
      const transport = new NodeHttpClientTransport(server.url, { headers: { 'X-Team': 'blue' } })
      const client = await connect(transport)
      const progress: number[] = []
      const result = await client.callTool({ name: 'echo', arguments: { text: 'héllo 😀' } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      })
      expect(result.content).toEqual([{ type: 'text', text: 'echo: héllo 😀' }])
      // The SDK server sends progress only on a stream; with JSON responses it is dropped.
      expect(progress).toEqual(json ? [] : [1])
      const sessionId = server.transport.sessionId
      expect(sessionId).toBeDefined()
      expect(transport.sessionId).toBe(sessionId)
      const [init, ...after] = server.requests
      expect(init.headers.accept).toBe('application/json, text/event-stream')
      expect(init.headers['content-type']).toBe('application/json')
      expect(init.headers['mcp-session-id']).toBeUndefined()
      expect(init.headers['x-team']).toBe('blue')
      for (const request of after) {
        expect(request.headers['mcp-session-id']).toBe(sessionId)
        expect(request.headers['mcp-protocol-version']).toBe(transport.protocolVersion)
        expect(request.headers['x-team']).toBe('blue')
      }
      // The standalone stream is opened after notifications/initialized and carries notifications.
      await waitUntil(() => server.requests.some((r) => r.method === 'GET'), 'the GET stream')
      if (!json) {
        const changed = new Promise<void>((resolve) =>
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
        )
        // The server writes to the GET stream only once its headers are out.
        await new Promise((resolve) => setTimeout(resolve, 50))
        server.mcp.sendToolListChanged()
        await changed
      }
      await transport.terminateSession()
      expect(server.requests.at(-1)?.method).toBe('DELETE')
      expect(transport.sessionId).toBeUndefined()
    })
})

/** A fake server whose answers each test writes, with a minimal OAuth authorization server beside it. */
async function fakeServer(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>,
  /**
   * When given, the endpoint checks each request's Authorization with it: true lets it through,
   * anything else is the refusal to answer (its status and WWW-Authenticate challenge).
   */
  gate?: (authorization: string | undefined, metadata: string) => true | { status: number; challenge: string },
) {
  let refused = 0
  const requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[] = []
  let tokens = 0
  let base = ''
  base = await listen(
    createServer(async (req, res) => {
      const body = await bodyOf(req)
      const path = req.url ?? '/'
      requests.push({ method: req.method ?? '', path, headers: req.headers, body })
      const json = (value: unknown) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value))
      if (path === '/.well-known/oauth-protected-resource/mcp')
        return json({ resource: `${base}/mcp`, authorization_servers: [base] })
      if (path === '/.well-known/oauth-authorization-server')
        return json({
          issuer: base,
          token_endpoint: `${base}/token`,
          authorization_endpoint: `${base}/authorize`,
          response_types_supported: ['code'],
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
        })
      if (path === '/token') return json({ access_token: `tok-${++tokens}`, token_type: 'Bearer', expires_in: 3600 })
      if (path !== '/mcp' && !path.startsWith('/mcp?')) return res.writeHead(404).end()
      const verdict = gate?.(req.headers.authorization, `${base}/.well-known/oauth-protected-resource/mcp`) ?? true
      if (verdict !== true) {
        refused++
        return void res.writeHead(verdict.status, { 'www-authenticate': verdict.challenge }).end()
      }
      await handle(req, res, body)
    }),
  )
  return {
    url: new URL(`${base}/mcp`),
    requests,
    posts: () => requests.filter((r) => r.method === 'POST' && r.path === '/mcp'),
    refused: () => refused,
  }
}

const INIT_RESULT = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: {} },
  serverInfo: { name: 'fake', version: '1.0.0' },
}

/** Answers initialize (JSON, with a session id), 202 to notifications, 405 to GET; the rest to `call`. */
function mcpLike(call: (message: { id: number; method: string }, res: ServerResponse) => void | Promise<void>) {
  return async (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.method === 'GET') return void res.writeHead(405).end()
    if (req.method === 'DELETE') return void res.writeHead(200).end()
    const message = JSON.parse(body) as { id?: number; method: string }
    if (message.id === undefined) return void res.writeHead(202).end()
    if (message.method === 'initialize')
      return void res
        .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INIT_RESULT }))
    await call(message as { id: number; method: string }, res)
  }
}

async function writeBytewise(res: ServerResponse, text: string): Promise<void> {
  for (const byte of Buffer.from(text)) {
    res.write(Buffer.from([byte]))
    await new Promise((resolve) => setImmediate(resolve))
  }
}

describe('NodeHttpClientTransport against a hand-written server', () => {
  it('issue 23, item 6: reads an SSE response written one byte at a time, with CRLF, comments and multi-byte UTF-8', async () => {
    const server = await fakeServer(
      mcpLike(async (message, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' })
        const result = { content: [{ type: 'text', text: 'ü€😀 done' }] }
        await writeBytewise(
          res,
          `: hello\r\nid: a1\r\ndata: \r\n\r\n` +
            `data: {"jsonrpc":"2.0","method":"notifications/progress",\r\ndata: "params":{"progressToken":${message.id},"progress":1,"message":"😀"}}\r\n\r\n` +
            `id: a2\revent: message\rdata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\r\r`,
        )
        res.end()
      }),
    )
    const client = await connect(new NodeHttpClientTransport(server.url))
    const messages: (string | undefined)[] = []
    const result = await client.callTool({ name: 'x', arguments: {} }, undefined, {
      onprogress: (p) => messages.push(p.message),
    })
    expect(result.content).toEqual([{ type: 'text', text: 'ü€😀 done' }])
    expect(messages).toEqual(['😀'])
  })

  it('issue 23, item 6: a stream dropped mid-way is resumed with Last-Event-ID after the server’s retry', async () => {
    const lastEventIds: (string | undefined)[] = []
    const server = await fakeServer(async (req, res, body) => {
      if (req.method === 'GET') {
        lastEventIds.push(req.headers['last-event-id'] as string | undefined)
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        return void res.end(`id: e2\ndata: {"jsonrpc":"2.0","id":7,"result":{"ok":true}}\n\n`)
      }
      const message = JSON.parse(body) as { id: number }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('id: e0\nretry: 20\ndata: \n\n')
      res.write(
        `id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${message.id},"progress":1}}\n\n`,
      )
      // Cut in the middle of the next event: it must not be delivered.
      res.write('id: e2\ndata: {"jsonrpc":"2.0","id":7,"result"')
      await new Promise((resolve) => setTimeout(resolve, 20))
      res.socket?.destroy()
    })
    const transport = new NodeHttpClientTransport(server.url, {
      reconnectionOptions: {
        initialReconnectionDelay: 10_000,
        maxReconnectionDelay: 10_000,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 2,
      },
    })
    cleanups.push(() => transport.close())
    const received: JSONRPCMessage[] = []
    const errors: string[] = []
    const tokens: string[] = []
    transport.onmessage = (message) => received.push(message)
    transport.onerror = (error) => errors.push(error.message)
    await transport.start()
    await transport.send(
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } },
      { onresumptiontoken: (token) => tokens.push(token) },
    )
    // The server's retry (20 ms) is used, not the 10 s backoff given.
    await waitUntil(() => received.some((m) => 'id' in m && m.id === 7), 'the resumed response')
    expect(lastEventIds).toEqual(['e1'])
    expect(received).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 7, progress: 1 } },
      { jsonrpc: '2.0', id: 7, result: { ok: true } },
    ])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(/^SSE stream disconnected: /)
    expect(tokens).toEqual(['e0', 'e1', 'e2'])
  })

  it("issue 23, item 6: the server's GET stream is opened after initialized and reopened with Last-Event-ID when it ends", async () => {
    const gets: (string | undefined)[] = []
    const server = await fakeServer(async (req, res, body) => {
      if (req.method === 'GET') {
        gets.push(req.headers['last-event-id'] as string | undefined)
        // The first stream carries one notification and ends; the reopened one is refused.
        if (gets.length > 1) return void res.writeHead(405).end()
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        return void res.end(
          'retry: 10\nid: g1\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
        )
      }
      await mcpLike(() => {})(req, res, body)
    })
    const transport = new NodeHttpClientTransport(server.url)
    const errors: string[] = []
    const client = await connect(transport)
    transport.onerror = (error) => errors.push(error.message)
    let changed = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++
    })
    await waitUntil(() => gets.length === 2, 'the GET stream reopened')
    expect(gets).toEqual([undefined, 'g1'])
    await waitUntil(() => changed === 1, 'the notification')
    expect(errors).toEqual([])
  })

  it('a throwing onresumptiontoken callback is reported and loses nothing of the stream', async () => {
    const server = await fakeServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      // One write: the priming event and the response arrive in the same chunk.
      res.end('id: p1\ndata: \n\nid: p2\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\n\n')
    })
    const transport = new NodeHttpClientTransport(server.url)
    cleanups.push(() => transport.close())
    const received: JSONRPCMessage[] = []
    const errors: string[] = []
    transport.onmessage = (message) => received.push(message)
    transport.onerror = (error) => errors.push(error.message)
    await transport.start()
    await transport.send(
      { jsonrpc: '2.0', id: 3, method: 'ping' },
      {
        onresumptiontoken: (token) => {
          throw new Error(`cannot keep ${token}`)
        },
      },
    )
    await waitUntil(() => received.length > 0, 'the response')
    expect(received).toEqual([{ jsonrpc: '2.0', id: 3, result: {} }])
    expect(errors).toEqual(['cannot keep p1', 'cannot keep p2'])
  })

  it('errors and redirects as the SDK transport does: 404, an unexpected content type, a redirect out of the origin; 405 on GET is silent', async () => {
    const modes = ['missing', 'html', 'moved', 'elsewhere'] as const
    let mode: (typeof modes)[number] = 'missing'
    const answer = mcpLike((message, res) => {
      if (mode === 'missing')
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Session not found"}')
      else if (mode === 'html') res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hi</p>')
      else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: [] } }))
    })
    const server = await fakeServer(async (req, res, body) => {
      // A POST keeps its method and body only through 307 and 308; the same origin is followed.
      if (req.method === 'POST' && req.url === '/mcp' && body.includes('tools/list')) {
        if (mode === 'moved') return void res.writeHead(307, { location: '/mcp?moved' }).end()
        if (mode === 'elsewhere')
          return void res.writeHead(307, { location: 'http://user:pw@localhost:9/mcp?key=secret' }).end('gone')
      }
      await answer(req, res, body)
    })
    const outcomes = async (transport: Transport) => {
      const errors: string[] = []
      transport.onerror = (error) => errors.push(error.message)
      await transport.start()
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
      const gets = () => server.requests.filter((r) => r.method === 'GET').length
      const before = gets()
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      await waitUntil(() => gets() > before, 'the GET')
      const failures: { code: unknown; message: string; sdkError: boolean }[] = []
      for (const each of modes) {
        mode = each
        const error = await transport.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' }).then(
          () => new Error('no error'),
          (e: Error) => e,
        )
        failures.push({
          code: (error as { code?: unknown }).code,
          message: error.message,
          // The SDK v1 transport's error class, or ours, which keeps its shape and message.
          sdkError: error instanceof StreamableHTTPError || error instanceof OurStreamableHTTPError,
        })
      }
      await transport.close()
      return { failures, errors }
    }
    const sdk = await outcomes(new StreamableHTTPClientTransport(server.url, { fetch: upstreamFetch }))
    server.requests.length = 0
    const ours = await outcomes(new NodeHttpClientTransport(server.url))
    expect(ours).toEqual(sdk)
    expect(ours.failures).toEqual([
      {
        code: 404,
        message: 'Streamable HTTP error: Error POSTing to endpoint: {"error":"Session not found"}',
        sdkError: true,
      },
      { code: -1, message: 'Streamable HTTP error: Unexpected content type: text/html', sdkError: true },
      { code: undefined, message: 'no error', sdkError: false },
      {
        code: 307,
        message:
          "Streamable HTTP error: Error POSTing to endpoint: Redirect to http://localhost:9/mcp not followed (redirectPolicy: 'same-origin')",
        sdkError: true,
      },
    ])
    expect(server.requests.filter((r) => r.path === '/mcp?moved')).toHaveLength(1)
    const get = server.requests.find((r) => r.method === 'GET')
    expect(get?.headers.accept).toBe('text/event-stream')
    expect(get?.headers['mcp-session-id']).toBe('sess-1')
  })

  it('a malformed body is a clear error for the call, not a crash or a hang', async () => {
    let mode: 'json' | 'sse' | 'good' = 'json'
    const server = await fakeServer(
      mcpLike((message, res) => {
        if (mode === 'good')
          return void res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: [] } }))
        if (mode === 'json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":')
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(`data: {"jsonrpc":"2.0","id":${message.id},"result":\n\n`)
      }),
    )
    const transport = new NodeHttpClientTransport(server.url)
    const errors: string[] = []
    // A request timeout far past the test's own: a hang fails the test.
    const client = await connect(transport, 600_000)
    transport.onerror = (error) => errors.push(error.message)
    await expect(client.listTools(undefined, { timeout: 600_000 })).rejects.toThrow(
      'Streamable HTTP error: the server\'s JSON response is not JSON ("{\\"jsonrpc\\":")',
    )
    mode = 'sse'
    await expect(client.listTools(undefined, { timeout: 600_000 })).rejects.toThrow(
      /event stream ended without a response it could read: it sent not JSON \("\{\\"jsonrpc\\":\\"2\.0\\",\\"id\\":\d+,\\"result\\":"\)/,
    )
    expect(errors.at(-1)).toMatch(/the server sent an event that is not JSON/)
    // The session still works.
    mode = 'good'
    expect((await client.listTools()).tools).toEqual([])
  })

  it('401: asks the authProvider for a token, retries once with it, and stops when the server still refuses', async () => {
    let accept = true
    const server = await fakeServer(
      mcpLike((message, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: [] } }))
      }),
      (authorization, metadata) =>
        (authorization?.startsWith('Bearer tok-') && accept) || {
          status: 401,
          challenge: `Bearer resource_metadata="${metadata}"`,
        },
    )
    const provider = createMcpOAuthProvider({ grant: 'client_credentials', clientId: 'gate', clientSecret: 'pw' })
    const client = await connect(new NodeHttpClientTransport(server.url, { authProvider: provider }))
    expect(server.refused()).toBe(1)
    expect((await client.listTools()).tools).toEqual([])
    expect(server.posts().at(-1)?.headers.authorization).toBe('Bearer tok-1')
    const tokenRequests = () => server.requests.filter((r) => r.path === '/token').length
    expect(tokenRequests()).toBe(1)
    accept = false
    await expect(client.listTools()).rejects.toThrow(
      'Streamable HTTP error: Server returned 401 after successful authentication',
    )
    // One refusal, one new token, one refusal with it: no loop.
    expect(server.refused()).toBe(3)
    expect(tokenRequests()).toBe(2)
    expect(server.posts().at(-1)?.headers.authorization).toBe('Bearer tok-2')
  })

  it('403 insufficient_scope: createMcpOAuthProvider asks for the challenge scopes with those asked before (SEP-2350)', async () => {
    // A token is good for the scopes its token request asked for; the server wants tools:write.
    const scopeOf = (token: string) => {
      const asked = server.requests.filter((r) => r.path === '/token')[Number(token.slice('tok-'.length)) - 1]
      return new URLSearchParams(asked?.body ?? '').get('scope')?.split(' ') ?? []
    }
    const server = await fakeServer(
      mcpLike((message, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: [] } }))
      }),
      (authorization, metadata) => {
        if (!authorization?.startsWith('Bearer tok-'))
          return { status: 401, challenge: `Bearer resource_metadata="${metadata}"` }
        if (scopeOf(authorization.slice('Bearer '.length)).includes('tools:write')) return true
        return {
          status: 403,
          challenge: `Bearer error="insufficient_scope", scope="tools:write", resource_metadata="${metadata}"`,
        }
      },
    )
    const provider = createMcpOAuthProvider({
      grant: 'client_credentials',
      clientId: 'gate',
      clientSecret: 'pw',
      scope: 'tools:read',
    })
    const client = await connect(new NodeHttpClientTransport(server.url, { authProvider: provider }))
    expect((await client.listTools()).tools).toEqual([])
    const asked = server.requests
      .filter((r) => r.path === '/token')
      .map((r) => new URLSearchParams(r.body).get('scope'))
    // The configured scope first; after the challenge, both.
    expect(asked).toEqual(['tools:read', 'tools:read tools:write'])
    expect(server.posts().at(-1)?.headers.authorization).toBe('Bearer tok-2')
    expect(provider.clientMetadata.scope).toBe('tools:read tools:write')
  })

  it('403 insufficient_scope: authorizes again for the scope the server names, once per challenge, as the SDK does', async () => {
    const server = await fakeServer(
      mcpLike((message, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: INIT_RESULT }))
      }),
      (authorization, metadata) =>
        authorization?.startsWith('Bearer tok-')
          ? {
              status: 403,
              challenge: `Bearer error="insufficient_scope", scope="tools:write", resource_metadata="${metadata}"`,
            }
          : { status: 401, challenge: `Bearer resource_metadata="${metadata}"` },
    )
    const run = async (transport: Transport) => {
      server.requests.length = 0
      const error = await connect(transport).then(
        () => new Error('connected'),
        (e: Error) => e,
      )
      return {
        error: error.message,
        requests: server.requests.map((r) => `${r.method} ${r.path} ${r.headers.authorization ?? ''}`),
      }
    }
    const provider = () => createMcpOAuthProvider({ grant: 'client_credentials', clientId: 'gate', clientSecret: 'pw' })
    // toolgate's provider type is its own (McpOAuthProvider); the SDK v1 transport takes it as its own shape.
    const sdkProvider = provider() as NonNullable<
      ConstructorParameters<typeof StreamableHTTPClientTransport>[1]
    >['authProvider']
    const sdk = await run(
      new StreamableHTTPClientTransport(server.url, { authProvider: sdkProvider, fetch: upstreamFetch }),
    )
    const ours = await run(new NodeHttpClientTransport(server.url, { authProvider: provider() }))
    expect(ours.error).toBe('Streamable HTTP error: Server returned 403 after trying upscoping')
    expect(ours.requests.map((r) => r.replace(/tok-\d+/, 'tok'))).toEqual(
      sdk.requests.map((r) => r.replace(/tok-\d+/, 'tok')),
    )
    // 401, a token, 403, the flow again, and the same 403: then it stops.
    expect(ours.requests.filter((r) => r.startsWith('POST /mcp '))).toHaveLength(3)
    expect(ours.requests.filter((r) => r.startsWith('POST /token '))).toHaveLength(2)
  })
})
