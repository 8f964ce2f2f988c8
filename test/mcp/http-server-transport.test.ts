// Issue 23 (Streamable HTTP performance, item 6 resumability): `serve --http`'s server transport
// for node:http. The real SDK client drives createMcpServer through it on 127.0.0.1 (a call, a
// list_changed on the GET stream, a resume after a dropped stream, DELETE), raw requests check
// what the client library does not send (a batch, a notification, every refusal), and the SDK's own
// StreamableHTTPServerTransport answers the same requests side by side as the reference.
import { randomUUID } from 'node:crypto'
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { type EventStore, StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { FetchLike, Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import { type JSONRPCMessage, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../src/index.js'
import { createToolRuntime } from '../../src/index.js'
import { createMcpServer, type McpServerHandle } from '../../src/mcp/index.js'
import { BoundedEventStore } from '../../src/mcp/server/event-store.js'
import { type FastPath, fastPathOf, setFastPath } from '../../src/mcp/server/fast-path.js'
import { NodeStreamableHttpServerTransport } from '../../src/mcp/server/http-server-transport.js'

type Kind = 'node' | 'sdk'

interface HarnessOptions {
  /** Parse the POST body before handing it over, as `serve --http` does (default true). */
  preparse?: boolean
  eventStore?: EventStore
  retryInterval?: number
  keepAliveMs?: number
  enableJsonResponse?: boolean
  tools?: ToolDefinition[]
  fastPath?: FastPath
}

interface Harness {
  url: string
  transport: NodeStreamableHttpServerTransport | StreamableHTTPServerTransport
  server: McpServerHandle
  register(tool: ToolDefinition): void
  errors: string[]
  closed: () => boolean
  close(): Promise<void>
}

const text = (name: string, body: (args: Record<string, unknown>) => Promise<string>): ToolDefinition => ({
  name,
  description: `${name} (test tool)`,
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
  execute: (args) => body(args as Record<string, unknown>),
})

const echo = text('echo', async (args) => String(args.text ?? ''))

const open: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => {})
})

/** One MCP session on 127.0.0.1: every request goes to one transport of `kind`, as a session of serve does. */
async function harness(kind: Kind, options: HarnessOptions = {}): Promise<Harness> {
  const runtime = await createToolRuntime()
  for (const tool of options.tools ?? [echo]) runtime.tools.register(tool)
  const server = createMcpServer(runtime.ctx, { name: 'toolgate-test', version: '1.0.0' })
  if (options.fastPath) setFastPath(server, options.fastPath)
  const settings = {
    sessionIdGenerator: () => randomUUID(),
    eventStore: options.eventStore,
    retryInterval: options.retryInterval,
    keepAliveMs: options.keepAliveMs,
    enableJsonResponse: options.enableJsonResponse,
  }
  const transport =
    kind === 'node' ? new NodeStreamableHttpServerTransport(settings) : new StreamableHTTPServerTransport(settings)
  const errors: string[] = []
  let closed = false
  transport.onclose = () => {
    closed = true
  }
  await server.connect(transport)
  // Set after connect: the server's Protocol installs its own onerror.
  const onerror = transport.onerror
  transport.onerror = (error) => {
    errors.push(error.message)
    onerror?.(error)
  }
  if (transport instanceof NodeStreamableHttpServerTransport) transport.fastPath = fastPathOf(server)
  const preparse = options.preparse ?? true
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      let body: unknown
      if (req.method === 'POST' && preparse) body = JSON.parse(await readAll(req))
      await transport.handleRequest(req, res, body)
    })().catch((error: unknown) => {
      errors.push(`harness: ${String(error)}`)
      if (!res.headersSent) res.writeHead(500).end()
      else res.end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`
  const close = async () => {
    await transport.close()
    http.closeAllConnections()
    await new Promise<void>((resolve) => http.close(() => resolve()))
    await runtime.dispose()
  }
  open.push(close)
  return {
    url,
    transport,
    server,
    register: (tool) => runtime.tools.register(tool),
    errors,
    closed: () => closed,
    close,
  }
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.once('error', reject)
  })
}

async function connect(url: string, fetchFn?: FetchLike): Promise<{ client: Client; transport: Transport }> {
  const client = new Client({ name: 'test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url), fetchFn ? { fetch: fetchFn } : {})
  await client.connect(transport)
  open.push(() => client.close())
  return { client, transport }
}

const resultText = (result: object): string =>
  ((result as { content?: Array<{ type: string; text?: string }> }).content ?? []).map((b) => b.text ?? '').join('\n')

/** The events of an SSE text: each one's fields, as a client's parser reads them. */
function events(sse: string): Array<{ id?: string; event?: string; retry?: string; data: string[]; comment: boolean }> {
  return sse
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const event = { data: [] as string[], comment: false } as {
        id?: string
        event?: string
        retry?: string
        data: string[]
        comment: boolean
      }
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) event.comment = true
        const colon = line.indexOf(': ')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 2)
        if (field === 'data') event.data.push(value)
        else if (field === 'id') event.id = value
        else if (field === 'event') event.event = value
        else if (field === 'retry') event.retry = value
      }
      return event
    })
}

const messagesOf = (sse: string): JSONRPCMessage[] =>
  events(sse)
    .filter((e) => e.data.length > 0 && e.data.join('') !== '')
    .map((e) => JSON.parse(e.data.join('\n')) as JSONRPCMessage)

const ACCEPT_BOTH = 'application/json, text/event-stream'

/** A raw initialize of a fresh session; returns the session id. */
async function initialize(url: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { accept: ACCEPT_BOTH, 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  })
  await response.text()
  const sessionId = response.headers.get('mcp-session-id')
  if (sessionId === null) throw new Error(`initialize answered ${response.status} without a session id`)
  const initialized = await post(url, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' })
  expect(initialized.status).toBe(202)
  return sessionId
}

interface Answer {
  status: number
  headers: Record<string, string | null>
  body: string
}

const SHOWN_HEADERS = ['content-type', 'cache-control', 'connection', 'x-accel-buffering', 'allow']

async function answer(response: Response): Promise<Answer> {
  const headers: Record<string, string | null> = {}
  for (const name of SHOWN_HEADERS) headers[name] = response.headers.get(name)
  headers['mcp-session-id'] = response.headers.get('mcp-session-id') === null ? null : '(set)'
  return { status: response.status, headers, body: await response.text() }
}

function post(url: string, sessionId: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      accept: ACCEPT_BOTH,
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-11-25',
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

const call = (id: number, text: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text } },
})

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 30_000
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('NodeStreamableHttpServerTransport with the SDK client', () => {
  it('issue 23, Performance: a tools/call and a tools/list over SSE, with authInfo-free extra and the session id', async () => {
    const h = await harness('node', { eventStore: new BoundedEventStore(), retryInterval: 1000 })
    const { client, transport } = await connect(h.url)
    expect(transport.sessionId).toBe(h.transport.sessionId)
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } })
    expect(resultText(result)).toBe('hello')
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['echo'])
  })

  it('issue 23, item 6: the GET stream carries list_changed', async () => {
    const h = await harness('node')
    const { client } = await connect(h.url)
    await client.listTools()
    let changed = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++
    })
    // The client opens its GET stream after initialize; wait until the transport has it.
    await waitFor(() => (h.transport as unknown as { standalone?: unknown }).standalone !== undefined, 'the GET stream')
    h.register(text('later', async () => 'later'))
    await waitFor(() => changed > 0, 'notifications/tools/list_changed')
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'later'])
  })

  it('issue 23, item 6: a stream dropped mid-call resumes with Last-Event-ID and misses nothing', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const gated: ToolDefinition = {
      ...text('gated', async () => 'unused'),
      execute: async (_args, exec) => {
        exec.progress({ message: 'one' })
        await gate
        exec.progress({ message: 'two' })
        exec.progress({ message: 'three' })
        return 'gated done'
      },
    }
    const h = await harness('node', { eventStore: new BoundedEventStore(), retryInterval: 50, tools: [gated] })
    const seen: Array<{ method: string; lastEventId: string | null; text: string; ended: boolean; cut: boolean }> = []
    let armed = true
    const fetchFn: FetchLike = async (url, init) => {
      const response = await fetch(url, init)
      if (!response.headers.get('content-type')?.includes('text/event-stream') || response.body === null)
        return response
      const record = {
        method: init?.method ?? 'GET',
        lastEventId: new Headers(init?.headers).get('last-event-id'),
        text: '',
        ended: false,
        cut: false,
      }
      seen.push(record)
      const isCall = typeof init?.body === 'string' && init.body.includes('"tools/call"')
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      const encoder = new TextEncoder()
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }))
          if (done || value === undefined) {
            record.ended = true
            return controller.close()
          }
          const all = record.text + decoder.decode(value, { stream: true })
          const at = all.indexOf('notifications/progress')
          const end = at < 0 ? -1 : all.indexOf('\n\n', at)
          if (armed && isCall && end >= 0) {
            // The client sees the stream up to the first progress event, then a dropped connection.
            armed = false
            const kept = all.slice(record.text.length, end + 2)
            record.text += kept
            record.cut = true
            controller.enqueue(encoder.encode(kept))
            await reader.cancel().catch(() => {})
            return controller.error(new TypeError('connection lost (cut by the test)'))
          }
          record.text = all
          controller.enqueue(value)
        },
        cancel: (reason) => reader.cancel(reason),
      })
      return new Response(body, { status: response.status, headers: response.headers })
    }
    const { client } = await connect(h.url, fetchFn)
    const progress: string[] = []
    const pending = client.callTool({ name: 'gated', arguments: {} }, undefined, {
      onprogress: (p) => void progress.push(String(p.message)),
      timeout: 60_000,
    })
    await waitFor(() => seen.some((r) => r.cut), 'the tools/call stream to be cut')
    release()
    const result = await pending
    expect(resultText(result)).toBe('gated done')
    expect(progress).toEqual(['one', 'two', 'three'])

    const cut = seen.find((r) => r.cut)
    const resume = seen.find((r) => r.lastEventId !== null)
    expect(cut?.method).toBe('POST')
    expect(resume?.method).toBe('GET')
    const before = events(cut?.text ?? '')
    // The priming event: an id, the retry interval, an empty data line.
    expect(before[0]).toMatchObject({ retry: '50', data: [''] })
    expect(resume?.lastEventId).toBe(before.at(-1)?.id)
    const after = events(resume?.text ?? '')
    const ids = [...before, ...after].map((e) => e.id as string)
    expect(new Set(ids).size).toBe(ids.length)
    const seqs = ids.map((id) => Number(id.slice(id.lastIndexOf('.') + 1)))
    expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i))
    expect(messagesOf(resume?.text ?? '').at(-1)).toMatchObject({ result: { content: [{ text: 'gated done' }] } })
    // Every request of the resumed stream is answered, so the resumed response ends too.
    await waitFor(() => resume?.ended === true, 'the resumed stream to end')
  })

  it('issue 23, item 6: DELETE ends the session: 200, the transport closes, and the session is gone', async () => {
    for (const kind of ['node', 'sdk'] as const) {
      const h = await harness(kind)
      const { client, transport } = await connect(h.url)
      const sessionId = transport.sessionId as string
      await (transport as StreamableHTTPClientTransport).terminateSession()
      await waitFor(() => h.closed(), `${kind}: the transport to close`)
      const after = await answer(await post(h.url, sessionId, call(5, 'x')))
      expect([kind, after.status, JSON.parse(after.body)]).toEqual([
        kind,
        404,
        { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null },
      ])
      await client.close()
    }
  })
})

describe('NodeStreamableHttpServerTransport on the wire, beside the SDK transport', () => {
  it('issue 23, Performance: a batch of two calls is one SSE stream with both answers, ended once both are answered', async () => {
    for (const kind of ['node', 'sdk'] as const) {
      const h = await harness(kind, { eventStore: new BoundedEventStore(), retryInterval: 300 })
      const sessionId = await initialize(h.url)
      const response = await post(h.url, sessionId, [
        call(1, 'one'),
        { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
        call(2, 'two'),
      ])
      const got = await answer(response)
      expect([kind, got.status, got.headers]).toEqual([
        kind,
        200,
        {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache, no-transform',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
          allow: null,
          'mcp-session-id': '(set)',
        },
      ])
      const all = events(got.body)
      expect(all[0]).toMatchObject({ retry: '300', data: [''] })
      expect(all.slice(1).every((e) => e.event === 'message' && e.data.length === 1 && e.id !== undefined)).toBe(true)
      const answers = messagesOf(got.body) as unknown as Array<{
        id: number
        result: { content: Array<{ text: string }> }
      }>
      expect(answers.map((a) => [a.id, a.result.content[0]?.text]).sort()).toEqual([
        [1, 'one'],
        [2, 'two'],
      ])
    }
  })

  it('issue 23, Performance: in JSON mode a batch is answered with one JSON body once both calls are, like the SDK’s', async () => {
    const got: Answer[] = []
    for (const kind of ['node', 'sdk'] as const) {
      const h = await harness(kind, { enableJsonResponse: true, eventStore: new BoundedEventStore() })
      const sessionId = await initialize(h.url)
      got.push(await answer(await post(h.url, sessionId, [call(1, 'one'), call(2, 'two')])))
      got.push(await answer(await post(h.url, sessionId, call(3, 'three'))))
    }
    expect(got[0]?.headers['content-type']).toBe('application/json')
    expect(JSON.parse(got[0]?.body ?? '')).toMatchObject([
      { id: 1, result: { content: [{ text: 'one' }] } },
      { id: 2, result: { content: [{ text: 'two' }] } },
    ])
    expect(JSON.parse(got[1]?.body ?? '')).toMatchObject({ id: 3, result: { content: [{ text: 'three' }] } })
    expect(got.slice(0, 2)).toEqual(got.slice(2))
  })

  it('issue 23, Performance: notifications (and responses) alone are answered 202 with no body', async () => {
    const got: Answer[] = []
    for (const kind of ['node', 'sdk'] as const) {
      const h = await harness(kind)
      const sessionId = await initialize(h.url)
      got.push(
        await answer(await post(h.url, sessionId, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' })),
      )
      got.push(
        await answer(
          await post(h.url, sessionId, [
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } },
            { jsonrpc: '2.0', id: 'unknown', result: {} },
          ]),
        ),
      )
    }
    expect(got[0]).toMatchObject({ status: 202, body: '' })
    expect(got.slice(0, 2)).toEqual(got.slice(2))
  })

  it('issue 23, Performance: every refusal has the SDK transport’s status, headers and JSON-RPC error', async () => {
    const runs: Record<Kind, Array<[string, Answer]>> = { node: [], sdk: [] }
    for (const kind of ['node', 'sdk'] as const) {
      const h = await harness(kind, { eventStore: new BoundedEventStore() })
      const seen = runs[kind]
      const note = async (what: string, response: Promise<Response>) =>
        void seen.push([what, await answer(await response)])
      await note('POST before initialize', post(h.url, undefined, call(1, 'x')))
      await note('GET before initialize', fetch(h.url, { headers: { accept: 'text/event-stream' } }))
      const sessionId = await initialize(h.url)
      await note('Accept without event-stream', post(h.url, sessionId, call(1, 'x'), { accept: 'application/json' }))
      await note('Accept without json', post(h.url, sessionId, call(1, 'x'), { accept: 'text/event-stream' }))
      await note('Content-Type text', post(h.url, sessionId, call(1, 'x'), { 'content-type': 'text/plain' }))
      await note(
        'Content-Type json with a charset',
        post(
          h.url,
          sessionId,
          { jsonrpc: '2.0', method: 'notifications/x' },
          {
            'content-type': 'application/json; charset=utf-8',
          },
        ),
      )
      await note('no session id', post(h.url, undefined, call(1, 'x')))
      await note('another session id', post(h.url, randomUUID(), call(1, 'x')))
      await note(
        'unknown protocol version',
        post(h.url, sessionId, call(1, 'x'), { 'mcp-protocol-version': '1999-01-01' }),
      )
      await note('not JSON-RPC', post(h.url, sessionId, { hello: 'world' }))
      await note('a batch with one bad message', post(h.url, sessionId, [call(1, 'x'), { jsonrpc: '1.0', id: 2 }]))
      await note(
        'a batch over 100',
        post(
          h.url,
          sessionId,
          Array.from({ length: 101 }, (_, i) => call(i, 'x')),
        ),
      )
      await note(
        'initialize again',
        post(h.url, sessionId, {
          jsonrpc: '2.0',
          id: 7,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      )
      await note(
        'GET without event-stream',
        fetch(h.url, { headers: { accept: 'application/json', 'mcp-session-id': sessionId } }),
      )
      await note(
        'GET with an unknown protocol version',
        fetch(h.url, {
          headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': 'x' },
        }),
      )
      await note('PUT', fetch(h.url, { method: 'PUT', headers: { 'mcp-session-id': sessionId } }))
      await note(
        'DELETE of another session',
        fetch(h.url, { method: 'DELETE', headers: { 'mcp-session-id': randomUUID() } }),
      )
      // A second GET stream while one is open.
      const first = await fetch(h.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      })
      expect(first.status).toBe(200)
      await note(
        'a second GET stream',
        fetch(h.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId } }),
      )
      await first.body?.cancel()
      await h.close()
    }
    expect(runs.node.map(([what]) => what)).toEqual(runs.sdk.map(([what]) => what))
    for (const [i, [what, node]] of runs.node.entries()) expect([what, node]).toEqual(runs.sdk[i])
    // Not a comparison of two wrong answers: the statuses are the ones the transport must give.
    expect(runs.node.map(([what, a]) => `${what}: ${a.status}`)).toEqual([
      'POST before initialize: 400',
      'GET before initialize: 400',
      'Accept without event-stream: 406',
      'Accept without json: 406',
      'Content-Type text: 415',
      'Content-Type json with a charset: 202',
      'no session id: 400',
      'another session id: 404',
      'unknown protocol version: 400',
      'not JSON-RPC: 400',
      'a batch with one bad message: 400',
      'a batch over 100: 400',
      'initialize again: 400',
      'GET without event-stream: 406',
      'GET with an unknown protocol version: 400',
      'PUT: 405',
      'DELETE of another session: 404',
      'a second GET stream: 409',
    ])
  })

  it('issue 23, Performance: a body that is not JSON, read by the transport itself, is a parse error like the SDK’s', async () => {
    const got: Answer[] = []
    for (const kind of ['node', 'sdk'] as const) {
      const h = await harness(kind, { preparse: false })
      const sessionId = await initialize(h.url)
      got.push(await answer(await post(h.url, sessionId, '{"jsonrpc": "2.0", ')))
      const call1 = await answer(await post(h.url, sessionId, call(3, 'read by the transport')))
      expect(messagesOf(call1.body)).toMatchObject([
        { id: 3, result: { content: [{ text: 'read by the transport' }] } },
      ])
    }
    expect(got[0]?.status).toBe(400)
    expect(JSON.parse(got[0]?.body ?? '')).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: Invalid JSON' },
      id: null,
    })
    expect(got[0]).toEqual(got[1])
  })
})

describe('NodeStreamableHttpServerTransport details', () => {
  it('issue 23, Performance: SSE framing keeps a message on one data line, whatever its text', async () => {
    const hostile = '\n\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\rid: 9\n\n'
    const h = await harness('node', { eventStore: new BoundedEventStore() })
    const sessionId = await initialize(h.url)
    const got = await answer(await post(h.url, sessionId, call(1, hostile)))
    const all = events(got.body)
    expect(all).toHaveLength(2) // the priming event and the answer, nothing injected
    expect(all[1]?.data).toHaveLength(1)
    expect(got.body.split('\n').filter((line) => line.startsWith('data: '))).toHaveLength(2)
    expect(messagesOf(got.body)).toMatchObject([{ id: 1, result: { content: [{ text: hostile }] } }])
  })

  it('issue 23, Performance: an event store issuing an id with a line break is refused, never written', async () => {
    const store = new BoundedEventStore()
    let poisoned = false
    const bad: EventStore = {
      storeEvent: async (streamId, message) => {
        const id = await store.storeEvent(streamId, message)
        return poisoned ? `${id}\ndata: injected` : id
      },
      replayEventsAfter: (id, send) => store.replayEventsAfter(id, send),
    }
    const h = await harness('node', { eventStore: bad })
    const sessionId = await initialize(h.url)
    poisoned = true
    const got = await answer(await post(h.url, sessionId, call(1, 'x')))
    // Answered as the SDK's transport answers a failure before its stream is handed out: a JSON error, no SSE.
    expect(got.status).toBe(400)
    expect(got.headers['content-type']).toBe('application/json')
    expect(got.body).not.toMatch(/^data: injected/m)
    expect(JSON.parse(got.body)).toMatchObject({ error: { code: -32700, message: 'Parse error' }, id: null })
    expect(h.errors.join('\n')).toMatch(/event id with a line break/)
    await expect(h.transport.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })).rejects.toThrow(
      /event id with a line break/,
    )
  })

  it('issue 23, Performance: open streams get a keep-alive comment from the session’s one timer', async () => {
    const h = await harness('node', { keepAliveMs: 20 })
    const sessionId = await initialize(h.url)
    const response = await fetch(h.url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    let received = ''
    while (!received.includes(': keepalive\n\n')) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`the stream ended before a keep-alive: ${received}`)
      received += decoder.decode(value, { stream: true })
    }
    expect(events(received).every((e) => e.comment && e.data.length === 0)).toBe(true)
    await reader.cancel()
  })

  it('issue 23, Performance: the fast path answers what it takes on the POST’s stream, through send, and the SDK never sees it', async () => {
    const taken: JSONRPCMessage[] = []
    const fastPath: FastPath = {
      take(message, _extra, reply) {
        if (!('method' in message) || message.method !== 'tools/call') return false
        if ((message.params as { name?: string }).name !== 'fast') return false
        taken.push(message)
        if ('id' in message)
          setTimeout(
            () =>
              void reply({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'fast!' }] } }),
            5,
          )
        return true
      },
    }
    const h = await harness('node', { eventStore: new BoundedEventStore(), fastPath })
    const sent: JSONRPCMessage[] = []
    const send = h.transport.send.bind(h.transport)
    // As serve's journal acknowledgement does: the fast answer must go through this wrapper.
    h.transport.send = async (message: JSONRPCMessage, options?: TransportSendOptions) => {
      sent.push(message)
      return send(message, options)
    }
    const { client } = await connect(h.url)
    const fast = await client.callTool({ name: 'fast', arguments: {} })
    expect(resultText(fast)).toBe('fast!')
    const slow = await client.callTool({ name: 'echo', arguments: { text: 'sdk way' } })
    expect(resultText(slow)).toBe('sdk way')
    expect(taken).toHaveLength(1)
    expect(sent.filter((m) => JSON.stringify(m).includes('fast!'))).toHaveLength(1)
    // A notification the fast path takes gets 202 and no reply.
    const sessionId = h.transport.sessionId as string
    const note = await post(h.url, sessionId, {
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'fast' },
    })
    expect(note.status).toBe(202)
    expect(taken).toHaveLength(2)
  })
})

describe('NodeStreamableHttpServerTransport: the priming event is written after the call is on its way', () => {
  /** A fast path whose `instant` tool sends a notification and its answer before take() even returns. */
  function instantFastPath(transport: () => NodeStreamableHttpServerTransport, closeFirst: boolean): FastPath {
    return {
      take(message, _extra, reply) {
        if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return false
        const id = message.id
        const t = transport()
        if (closeFirst) t.closeSSEStream(id)
        void t.send(
          { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
          { relatedRequestId: id },
        )
        void reply({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'now' }] } } as JSONRPCMessage)
        return true
      },
    }
  }

  it('issue 23, item 6: what is sent at once still comes after the priming event, each with an id, in order', async () => {
    let transport: NodeStreamableHttpServerTransport | undefined
    const h = await harness('node', {
      eventStore: new BoundedEventStore(),
      retryInterval: 250,
      fastPath: instantFastPath(() => transport as NodeStreamableHttpServerTransport, false),
    })
    transport = h.transport as NodeStreamableHttpServerTransport
    const sessionId = await initialize(h.url)
    const sse = await (await post(h.url, sessionId, call(1, 'x'))).text()
    expect(sse).toMatch(/^id: \S+\nretry: 250\ndata: \n\n/)
    const all = events(sse)
    expect(all).toHaveLength(3)
    expect(all.every((e) => e.id !== undefined && e.id !== '')).toBe(true)
    expect(messagesOf(sse).map((m) => ('method' in m ? m.method : 'response'))).toEqual([
      'notifications/progress',
      'response',
    ])
    expect(h.errors).toEqual([])
  })

  it('issue 23, item 6: a stream closed at once is primed first, and a resume from the priming event replays the rest', async () => {
    let transport: NodeStreamableHttpServerTransport | undefined
    const h = await harness('node', {
      eventStore: new BoundedEventStore(),
      retryInterval: 250,
      fastPath: instantFastPath(() => transport as NodeStreamableHttpServerTransport, true),
    })
    transport = h.transport as NodeStreamableHttpServerTransport
    const sessionId = await initialize(h.url)
    const cut = events(await (await post(h.url, sessionId, call(2, 'x'))).text())
    expect(cut).toHaveLength(1)
    expect(cut[0]).toMatchObject({ retry: '250', data: [''] })
    const resumed = await fetch(h.url, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': cut[0]?.id as string,
      },
    })
    expect(messagesOf(await resumed.text()).map((m) => ('method' in m ? m.method : 'response'))).toEqual([
      'notifications/progress',
      'response',
    ])
  })
})
