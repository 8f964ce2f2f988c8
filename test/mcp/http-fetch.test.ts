// Issue 23 (performance of the Streamable HTTP path): the fetch the gateway's client transport uses
// to reach an HTTP upstream goes over node:http with kept-alive connections instead of the
// platform's fetch. It must answer the SDK exactly as fetch would for the requests it takes (a
// JSON POST, the SSE GET, the DELETE, all with `redirect: 'manual'`), stream bodies as they
// arrive, honour abort signals, fail like fetch does, and leave everything else to fetch.
import { getEventListeners } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { upstreamFetch } from '../../src/mcp/client/http-fetch.js'
import { BoundedEventStore } from '../../src/mcp/server/event-store.js'

interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
  remotePort: number | undefined
}

describe('upstreamFetch', () => {
  let server: Server
  let base: string
  const seen: Seen[] = []
  /** Responses the test holds open, to write to them later. */
  const held = new Map<string, ServerResponse>()

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          remotePort: req.socket.remotePort,
        })
        const path = req.url ?? '/'
        if (path === '/json') {
          res.setHeader('set-cookie', ['a=1', 'b=2'])
          res.writeHead(200, 'Fine', { 'content-type': 'application/json', 'mcp-session-id': 's-1' })
          return res.end('{"jsonrpc":"2.0","id":1,"result":{}}')
        }
        if (path === '/accepted') return res.writeHead(202).end()
        if (path === '/empty') return res.writeHead(204).end()
        if (path === '/moved') return res.writeHead(302, { location: '/json' }).end()
        if (path === '/missing') return res.writeHead(404, { 'content-type': 'text/plain' }).end('no such session')
        if (path.startsWith('/sse')) {
          res.writeHead(200, { 'content-type': 'text/event-stream' })
          res.write('id: 1\ndata: \n\n')
          held.set(path, res)
          return
        }
        if (path === '/stall') {
          held.set(path, res)
          return
        }
        res.writeHead(500).end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  const last = () => seen.at(-1) as Seen

  it('POSTs the JSON text with its headers and answers status, headers and body as fetch does', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"note":"ü"}}'
    const response = await upstreamFetch(`${base}/json`, {
      method: 'POST',
      headers: new Headers({ 'content-type': 'application/json', 'mcp-session-id': 'abc', accept: 'application/json' }),
      body,
      redirect: 'manual',
    })
    expect(last()).toMatchObject({ method: 'POST', url: '/json', body })
    expect(last().headers).toMatchObject({
      'content-type': 'application/json',
      'mcp-session-id': 'abc',
      'content-length': String(Buffer.byteLength(body)),
    })
    expect(response.status).toBe(200)
    expect(response.ok).toBe(true)
    expect(response.statusText).toBe('Fine')
    expect(response.headers.get('mcp-session-id')).toBe('s-1')
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2')
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} })
  })

  it('answers 202 with an empty body, 204 with none, and an error status with its text', async () => {
    const accepted = await upstreamFetch(`${base}/accepted`, { method: 'POST', body: '{}', redirect: 'manual' })
    expect(accepted.status).toBe(202)
    expect(await accepted.text()).toBe('')
    const empty = await upstreamFetch(`${base}/empty`, { method: 'DELETE', redirect: 'manual' })
    expect(empty.status).toBe(204)
    expect(empty.body).toBeNull()
    expect(last().method).toBe('DELETE')
    const missing = await upstreamFetch(`${base}/missing`, { method: 'POST', body: '{}', redirect: 'manual' })
    expect(missing.status).toBe(404)
    expect(missing.ok).toBe(false)
    expect(await missing.text()).toBe('no such session')
  })

  it('hands a redirect back unfollowed, as fetch does with redirect: manual', async () => {
    const response = await upstreamFetch(`${base}/moved`, { method: 'GET', redirect: 'manual' })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe('/json')
    expect(last().url).toBe('/moved')
  })

  it('streams an SSE body as it arrives, and ends it when the server does', async () => {
    const response = await upstreamFetch(`${base}/sse-stream`, { method: 'GET', redirect: 'manual' })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    // The first event is read while the response is still open.
    expect(decoder.decode((await reader.read()).value)).toBe('id: 1\ndata: \n\n')
    held.get('/sse-stream')?.end('id: 2\ndata: {"x":1}\n\n')
    let rest = ''
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value)
    expect(rest).toBe('id: 2\ndata: {"x":1}\n\n')
  })

  it('keeps a body open past the idle timeout of kept-alive connections (a quiet SSE stream is not cut)', async () => {
    const response = await upstreamFetch(`${base}/sse-quiet`, { method: 'GET', redirect: 'manual' })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    // Idle connections are closed after 4 s; one whose response is still being read is not.
    setTimeout(() => held.get('/sse-quiet')?.end('id: 2\ndata: {}\n\n'), 5000)
    const next = await reader.read()
    expect(new TextDecoder().decode(next.value)).toBe('id: 2\ndata: {}\n\n')
    expect((await reader.read()).done).toBe(true)
  }, 30_000)

  it('fails the body read when the connection is lost mid-body', async () => {
    const response = await upstreamFetch(`${base}/sse-cut`, { method: 'GET', redirect: 'manual' })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    held.get('/sse-cut')?.socket?.destroy()
    await expect(reader.read()).rejects.toThrow(/terminated/)
  })

  it('rejects with the reason of an abort before the request, while waiting for headers, and fails the body after', async () => {
    const before = new AbortController()
    before.abort(new Error('stopped early'))
    await expect(
      upstreamFetch(`${base}/json`, { method: 'GET', redirect: 'manual', signal: before.signal }),
    ).rejects.toThrow('stopped early')

    const waiting = new AbortController()
    const stalled = upstreamFetch(`${base}/stall`, { method: 'GET', redirect: 'manual', signal: waiting.signal })
    await waitUntil(() => held.has('/stall'))
    waiting.abort()
    await expect(stalled).rejects.toMatchObject({ name: 'AbortError' })

    const reading = new AbortController()
    const response = await upstreamFetch(`${base}/sse-abort`, {
      method: 'GET',
      redirect: 'manual',
      signal: reading.signal,
    })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    reading.abort(new Error('closing the transport'))
    await expect(reader.read()).rejects.toThrow('closing the transport')
  })

  it('keeps one abort listener on a shared signal however many requests use it, and none once they are done', async () => {
    const shared = new AbortController()
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        upstreamFetch(`${base}/json`, { method: 'POST', body: '{}', redirect: 'manual', signal: shared.signal }),
      ),
    )
    expect(getEventListeners(shared.signal, 'abort').length).toBe(1)
    for (const response of responses) await response.text()
    // A later abort reaches nothing that has finished.
    shared.abort()
    expect(responses.every((r) => r.status === 200)).toBe(true)
  })

  it('reuses a kept-alive connection for sequential requests', async () => {
    const ports: Array<number | undefined> = []
    for (let i = 0; i < 3; i++) {
      await (await upstreamFetch(`${base}/json`, { method: 'POST', body: '{}', redirect: 'manual' })).text()
      ports.push(last().remotePort)
    }
    expect(new Set(ports).size).toBe(1)
  })

  it('fails like fetch when nothing listens: a TypeError "fetch failed" with the cause', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const failure = await upstreamFetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      body: '{}',
      redirect: 'manual',
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(TypeError)
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } })
  })

  it("leaves to the platform's fetch what it does not take: redirects to follow and other bodies", async () => {
    const followed = await upstreamFetch(`${base}/moved`, { method: 'GET' })
    expect(followed.status).toBe(200)
    expect(followed.url).toBe(`${base}/json`)
    await followed.text()
    const form = await upstreamFetch(`${base}/json`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
      redirect: 'manual',
    })
    await form.text()
    expect(last().body).toBe('grant_type=client_credentials')
    expect(last().headers['content-type']).toMatch(/application\/x-www-form-urlencoded/)
  })
})

describe("upstreamFetch under the SDK's Streamable HTTP client transport", () => {
  it('streams progress before the result on a POST, and server notifications on the GET stream', async () => {
    let release: () => void = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    const mcp = new McpServer({ name: 'sse-upstream', version: '1.0.0' })
    mcp.registerTool('slow', { description: 'Report progress, then wait for the test.' }, async (extra) => {
      const token = extra._meta?.progressToken
      if (token !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1 },
        })
      await released
      return { content: [{ type: 'text', text: 'done' }] }
    })
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      eventStore: new BoundedEventStore(),
    })
    await mcp.connect(transport)
    const http = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        void transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text))
      })
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const client = new Client({ name: 'test', version: '1.0.0' })
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    )
    try {
      const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`)
      await client.connect(new StreamableHTTPClientTransport(url, { fetch: upstreamFetch }))
      const progress: number[] = []
      let sawProgress: () => void = () => {}
      const progressed = new Promise<void>((resolve) => {
        sawProgress = resolve
      })
      const call = client.callTool({ name: 'slow', arguments: {} }, undefined, {
        onprogress: (p) => {
          progress.push(p.progress)
          sawProgress()
        },
      })
      // The progress event reaches the client while the call is still held open by the tool.
      await progressed
      release()
      const result = await call
      expect(progress).toEqual([1])
      expect(result.content).toEqual([{ type: 'text', text: 'done' }])
      // A notification with no request to answer travels on the GET stream the client opened.
      await waitUntil(() => transport.sessionId !== undefined)
      mcp.sendToolListChanged()
      await changed
    } finally {
      await client.close()
      await mcp.close()
      http.closeAllConnections()
      await new Promise((resolve) => http.close(resolve))
    }
  })
})

async function waitUntil(check: () => boolean): Promise<void> {
  const until = Date.now() + 30_000
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
