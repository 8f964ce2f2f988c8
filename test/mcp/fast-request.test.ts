// The upstream fast path (issue 23 performance): an imported tool's plain `tools/call` goes through
// the session's transport without the SDK's Protocol, and keeps what the SDK's callTool did — its
// own id space beside the SDK's requests, cancellation, the timeout reset by progress, the
// connection closing mid-call, JSON-RPC errors as McpErrors, the result's schema check and the
// tool's output schema. The upstream here is a raw JSON-RPC peer, so that it can misbehave.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer } from '../../src/mcp/index.js'

type Message = Record<string, unknown> & { id?: string | number; method?: string; params?: Record<string, unknown> }

const TOOLS = [
  { name: 'call', inputSchema: { type: 'object' } },
  {
    name: 'typed',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  },
]

/** A raw upstream: answers initialize and tools/list itself, and hands each tools/call to `onCall`. */
async function rawUpstream(
  onCall: (call: Message, send: (message: unknown) => void) => void,
  listing: () => unknown[] = () => TOOLS,
) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const received: Message[] = []
  const send = (message: unknown) => void serverSide.send(message as JSONRPCMessage)
  serverSide.onmessage = (raw) => {
    const message = raw as Message
    received.push(message)
    const { id, method } = message
    if (method === 'initialize')
      send({
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'raw', version: '1' },
        },
      })
    else if (method === 'tools/list') send({ jsonrpc: '2.0', id, result: { tools: listing() } })
    else if (method === 'tools/call') onCall(message, send)
  }
  await serverSide.start()
  return { transport: clientSide, serverSide, received }
}

const exec = (name: string, signal = new AbortController().signal) => ({
  callId: `c-${name}-${Math.random()}`,
  name,
  arguments: {},
  signal,
})

const answer = (call: Message, result: unknown) => ({ jsonrpc: '2.0', id: call.id, result })

describe('the upstream fast path for tools/call', () => {
  it('issue 23, Performance: calls carry string ids beside the SDK numeric ones, and results come back as before', async () => {
    const { ctx, tools } = await createToolRuntime()
    let reply: ((result: unknown) => void) | undefined
    const up = await rawUpstream((call, send) => {
      reply = (result) => send(answer(call, result))
    })
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'u_', name: 'up' })
    const running = tools.execute(exec('u_call'))
    await expect.poll(() => reply !== undefined, { timeout: 10_000 }).toBe(true)
    // An SDK request (a re-listing) while the call runs: both id spaces at once.
    await connection.refresh()
    reply?.({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      ],
      _meta: { note: 'kept' },
    })
    const result = await running
    expect(result).toMatchObject({
      isError: false,
      value: {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
        ],
        _meta: { note: 'kept' },
      },
    })
    const calls = up.received.filter((m) => m.method === 'tools/call')
    const lists = up.received.filter((m) => m.method === 'tools/list')
    expect(calls).toHaveLength(1)
    expect(typeof calls[0].id).toBe('string')
    expect(calls[0].params).toEqual({ name: 'call', arguments: {}, _meta: { progressToken: calls[0].id } })
    expect(lists.length).toBeGreaterThanOrEqual(2)
    for (const list of lists) expect(typeof list.id).toBe('number')
    await connection.close()
  })

  it('issue 23, Performance: a JSON-RPC error, a malformed result and a broken output-schema promise are clear errors', async () => {
    const { ctx, tools } = await createToolRuntime()
    const replies: unknown[] = [
      { error: { code: -32602, message: 'bad arguments', data: { at: 'x' } } },
      { result: { content: 'not a list' } },
      { result: { content: [] } },
      { result: { content: [], structuredContent: { n: 'seven' } } },
      { result: { content: [{ type: 'text', text: '7' }], structuredContent: { n: 7 } } },
    ]
    const up = await rawUpstream((call, send) => send({ jsonrpc: '2.0', id: call.id, ...(replies.shift() as object) }))
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'u_', name: 'up' })
    const error = await tools.execute(exec('u_call'))
    expect(error.isError).toBe(true)
    expect(error.error?.message).toBe('MCP server "up": MCP error -32602: bad arguments')
    const malformed = await tools.execute(exec('u_call'))
    expect(malformed.isError).toBe(true)
    expect(malformed.error?.message).toMatch(/^MCP server "up": .*content/s)
    const missing = await tools.execute(exec('u_typed'))
    expect(missing.error?.message).toMatch(/has an output schema but did not return structured content/)
    const mismatch = await tools.execute(exec('u_typed'))
    expect(mismatch.error?.message).toMatch(/does not match the tool's output schema/)
    const typed = await tools.execute(exec('u_typed'))
    expect(typed).toMatchObject({ isError: false, value: { structuredContent: { n: 7 } } })
    await connection.close()
  })

  it('issue 23, Performance: cancelling the call tells the upstream (with the request id) and frees the call', async () => {
    const { ctx, tools } = await createToolRuntime()
    const up = await rawUpstream(() => {})
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'u_', name: 'up' })
    const controller = new AbortController()
    const running = tools.execute(exec('u_call', controller.signal))
    await expect.poll(() => up.received.some((m) => m.method === 'tools/call'), { timeout: 10_000 }).toBe(true)
    controller.abort('stop it')
    const result = await running
    expect(result.isError).toBe(true)
    const call = up.received.find((m) => m.method === 'tools/call')
    await expect
      .poll(() => up.received.find((m) => m.method === 'notifications/cancelled')?.params, { timeout: 10_000 })
      .toEqual({ requestId: call?.id, reason: 'stop it' })
    // The session is free for the next call.
    await connection.close()
  })

  it('issue 23, Performance: an abort right after the answer arrived sends no cancellation for the answered request', async () => {
    const { ctx, tools } = await createToolRuntime()
    const controller = new AbortController()
    // The answer is handled synchronously, and the caller aborts in the same turn, before the
    // call's own bookkeeping (its abort listener) is undone.
    const up = await rawUpstream((call, send) => {
      send(answer(call, { content: [{ type: 'text', text: 'done' }] }))
      controller.abort('too late')
    })
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'u_', name: 'up' })
    await tools.execute(exec('u_call', controller.signal))
    // A later call goes through the session as usual, so anything the first one sent came before it.
    const next = await tools.execute(exec('u_call'))
    expect(next.isError).toBe(false)
    await new Promise((resolve) => setImmediate(resolve))
    expect(up.received.filter((m) => m.method === 'notifications/cancelled')).toEqual([])
    await connection.close()
  })

  it('issue 23, Performance: progress is relayed and restarts the request timeout; silence ends the call with a timeout', async () => {
    const { ctx, tools } = await createToolRuntime()
    const up = await rawUpstream((call, send) => {
      if ((call.params?.arguments as { quiet?: boolean } | undefined)?.quiet) return
      const token = (call.params?._meta as { progressToken: string } | undefined)?.progressToken
      let step = 0
      const tick = setInterval(() => {
        step++
        if (step <= 6)
          send({
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: 6 },
          })
        else {
          clearInterval(tick)
          send(answer(call, { content: [{ type: 'text', text: 'slow but alive' }] }))
        }
      }, 300)
    })
    const connection = await connectMcpServer(
      ctx,
      { transport: up.transport },
      { prefix: 'u_', name: 'up', requestTimeoutMs: 1500 },
    )
    const fractions: number[] = []
    ctx.on('tools/progress', (_exec, progress) => {
      if (progress.fraction !== undefined) fractions.push(progress.fraction)
    })
    // 2.1 s of work in all, more than the 1.5 s timeout: only the progress keeps it alive.
    const slow = await tools.execute(exec('u_call'))
    expect(slow).toMatchObject({ isError: false, value: { content: [{ type: 'text', text: 'slow but alive' }] } })
    expect(fractions.at(-1)).toBe(1)
    expect(fractions.length).toBe(6)

    const quiet = await tools.execute({ ...exec('u_call'), arguments: { quiet: true } })
    expect(quiet.isError).toBe(true)
    expect(quiet.error?.message).toMatch(/Request timed out/)
    const cancelled = up.received.find((m) => m.method === 'notifications/cancelled')
    expect(cancelled?.params?.reason).toMatch(/Request timed out/)
    await connection.close()
  })

  it('issue 23, Performance: the upstream closing during the call fails it as a closed connection', async () => {
    const { ctx, tools } = await createToolRuntime()
    const up = await rawUpstream(() => {})
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'u_', name: 'up' })
    const running = tools.execute(exec('u_call'))
    await expect.poll(() => up.received.some((m) => m.method === 'tools/call'), { timeout: 10_000 }).toBe(true)
    await up.serverSide.close()
    const result = await running
    expect(result.isError).toBe(true)
    expect(result.error?.message).toBe(
      'MCP server "up" closed the connection during the call (it reconnects on the next call)',
    )
    await connection.close()
  })

  it('issue 23, Performance: the checks follow the applied listing, taken through public API only (issue 35, item 1)', async () => {
    const { ctx, tools } = await createToolRuntime()
    let listed: unknown[] = TOOLS
    const up = await rawUpstream(
      (call, send) => send(answer(call, { content: [{ type: 'text', text: 'x' }], structuredContent: { n: 'x' } })),
      () => listed,
    )
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'u_', name: 'up' })
    const strict = await tools.execute(exec('u_typed'))
    expect(strict.error?.message).toMatch(/does not match the tool's output schema/)
    // The upstream drops the output schema: the re-listing is what the next call is checked against.
    listed = [{ name: 'typed', inputSchema: { type: 'object' } }]
    await connection.refresh()
    const loose = await tools.execute(exec('u_typed'))
    expect(loose).toMatchObject({ isError: false, value: { structuredContent: { n: 'x' } } })
    await connection.close()
  })
})
