// Issue 23 (partial failure, item 5): an HTTP upstream that restarts forgets its sessions and
// answers 404 to the old session id. Streamable HTTP asks the client to start a new session then;
// the gateway does, and sends the refused call once more (the server never ran it), so a restart
// between two calls costs nothing. A server that keeps refusing gets one retry, not a loop.
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer } from '../../src/mcp/index.js'

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of req) text += chunk
  return text
}

/**
 * A hand-written MCP server over Streamable HTTP (JSON answers) with sessions: `forget()` is a
 * restart (every session id it gave becomes unknown, answered 404 as servers do), and with
 * `refuseAll` it answers 404 to every request of a session, even a new one.
 */
async function upstream(options: { refuseAll?: boolean } = {}) {
  const sessions = new Set<string>()
  const seen = { initialize: 0, calls: 0, reads: 0, refused: 0 }
  const server = createServer(async (req, res) => {
    if (req.method === 'DELETE') return res.writeHead(200).end()
    if (req.method !== 'POST') return res.writeHead(405).end()
    const message = JSON.parse(await bodyOf(req))
    const id = req.headers['mcp-session-id']
    if (message.method !== 'initialize' && (typeof id !== 'string' || !sessions.has(id) || options.refuseAll)) {
      seen.refused++
      return res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }))
    }
    if (!('id' in message)) return res.writeHead(202).end()
    let result: unknown = {}
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (message.method === 'initialize') {
      seen.initialize++
      const session = randomUUID()
      sessions.add(session)
      headers['mcp-session-id'] = session
      result = {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {}, resources: {} },
        serverInfo: { name: 'forgetful', version: '1.0.0' },
      }
    } else if (message.method === 'tools/list')
      result = { tools: [{ name: 'count', inputSchema: { type: 'object', properties: {} } }] }
    else if (message.method === 'resources/list') result = { resources: [{ uri: 'mem://note', name: 'note' }] }
    else if (message.method === 'resources/read') {
      seen.reads++
      result = { contents: [{ uri: 'mem://note', text: `read ${seen.reads}` }] }
    } else if (message.method === 'tools/call') {
      seen.calls++
      result = { content: [{ type: 'text', text: `call ${seen.calls}` }] }
    }
    res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
  return {
    url,
    seen,
    forget: () => sessions.clear(),
    refuseFromNowOn: () => Object.assign(options, { refuseAll: true }),
  }
}

async function connected(url: string) {
  const runtime = await createToolRuntime()
  const connection = await connectMcpServer(runtime.ctx, { url }, { prefix: 'up__' })
  cleanups.push(async () => {
    await connection.close()
    await runtime[Symbol.asyncDispose]()
  })
  let n = 0
  const call = () =>
    runtime.tools.execute({
      callId: `c-${++n}`,
      name: 'up__count',
      arguments: {},
      signal: new AbortController().signal,
    })
  return { call, connection }
}

describe('an HTTP upstream that forgets its session (issue 23, item 5)', () => {
  it('starts a new session and runs the refused call there, once', async () => {
    const up = await upstream()
    const { call } = await connected(up.url)
    expect(await call()).toMatchObject({ isError: false, content: [{ type: 'text', text: 'call 1' }] })
    up.forget()
    // The restart is invisible to the caller: the call is answered from the new session.
    expect(await call()).toMatchObject({ isError: false, content: [{ type: 'text', text: 'call 2' }] })
    expect(up.seen).toEqual({ initialize: 2, calls: 2, reads: 0, refused: 1 })
    // The new session serves the calls after it, with no further initialize.
    expect(await call()).toMatchObject({ isError: false, content: [{ type: 'text', text: 'call 3' }] })
    expect(up.seen.initialize).toBe(2)
  })

  it('gives up after one retry when the new session is refused too, naming the server and the refusal', async () => {
    const up = await upstream()
    const { call } = await connected(up.url)
    expect(await call()).toMatchObject({ isError: false })
    up.refuseFromNowOn()
    const failed = await call()
    expect(failed.isError).toBe(true)
    expect(failed.error?.message).toMatch(
      /^MCP server "http:\/\/127\.0\.0\.1:\d+\/mcp" did not start: .*Session not found/,
    )
    // The call refused on the old session, then the new session's initialized notification refused
    // too, so the retry ends there: never a loop, and the tool never ran a second time.
    expect(up.seen).toEqual({ initialize: 2, calls: 1, reads: 0, refused: 2 })
  })

  it('reads a resource on a new session after the server forgot the old one', async () => {
    const up = await upstream()
    const { connection } = await connected(up.url)
    expect((await connection.readResource('mem://note')).contents).toEqual([{ uri: 'mem://note', text: 'read 1' }])
    up.forget()
    expect((await connection.readResource('mem://note')).contents).toEqual([{ uri: 'mem://note', text: 'read 2' }])
    expect(up.seen).toEqual({ initialize: 2, calls: 0, reads: 2, refused: 1 })
  })
})
