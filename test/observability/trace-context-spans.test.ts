// Issue 35, item 2 (trace context): a request's `_meta.traceparent` (and `tracestate`) is the
// remote parent of toolgate's OpenTelemetry span for the call, on every face that serves calls:
// MCP 2025-11-25 (the session server) and 2026-07-28 over Streamable HTTP and over stdio, on the
// fast paths (which answer a plain call without the SDK's request handling) as on the SDK's. A
// malformed traceparent is ignored (W3C Trace Context): the span starts a trace of its own.
import { randomUUID } from 'node:crypto'
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime, defineTool } from '../../src/index.js'
import { type FastPath, fastPathOf } from '../../src/mcp/server/fast-path.js'
import { NodeStreamableHttpServerTransport } from '../../src/mcp/server/http-server-transport.js'
import { fastRequest } from '../../src/mcp/server/modern-fast-path.js'
import { createMcpServer } from '../../src/mcp/server/server.js'
import { createModernHttpLeg } from '../../src/mcp/server/server-modern.js'
import { serveModernStdio } from '../../src/mcp/server/server-modern-stdio.js'
import { LineStdioServerTransport } from '../../src/mcp/server/stdio-transport.js'
import { OtelTracing } from '../../src/observability/otel-tracing.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE}-${PARENT}-01`
const TRACESTATE = 'vendor=abc,other=1'
const MODERN = '2026-07-28'

const closers: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

async function runtime() {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const rt = await createToolRuntime()
  await rt.ctx.plugin(OtelTracing, { tracerProvider: provider })
  rt.tools.register(
    defineTool({
      name: 'ping_tool',
      description: 'Answers pong.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
      execute: async () => 'pong',
    }),
  )
  closers.push(() => rt.dispose())
  const spans = () => exporter.getFinishedSpans().filter((span) => span.name === 'execute_tool ping_tool')
  return { rt, spans }
}

/** The span carries the caller's trace: its trace id, the caller's span as remote parent, the tracestate. */
function expectJoined(span: ReadableSpan | undefined, tracestate = true): void {
  expect(span?.spanContext().traceId).toBe(TRACE)
  expect(span?.parentSpanContext?.spanId).toBe(PARENT)
  expect(span?.parentSpanContext?.isRemote).toBe(true)
  if (tracestate) expect(span?.spanContext().traceState?.serialize()).toBe(TRACESTATE)
}

/** A malformed traceparent is no context: the span is a root of a trace of its own. */
function expectFresh(span: ReadableSpan | undefined): void {
  expect(span).toBeDefined()
  expect(span?.parentSpanContext).toBeUndefined()
  expect(span?.spanContext().traceId).not.toBe(TRACE)
}

const BAD = `00-${TRACE}-${PARENT}-01-extra` // version 00 has exactly four fields

describe('OtelTracing with the caller-carried trace context', () => {
  it('ToolExecuteOptions.traceContext parents the span; a malformed one is INVALID_INPUT', async () => {
    const { rt, spans } = await runtime()
    const signal = new AbortController().signal
    const input = { callId: 'c1', name: 'ping_tool', arguments: {}, signal }
    await rt.tools.execute(input, { traceContext: { traceparent: TRACEPARENT, tracestate: TRACESTATE } })
    expectJoined(spans()[0])
    const bad = await rt.tools.execute({ ...input, callId: 'c2' }, { traceContext: { traceparent: BAD } })
    expect(bad).toMatchObject({ isError: true, error: { info: { code: 'INVALID_INPUT' } } })
    expect(bad.isError && bad.error.message).toContain('options.traceContext')
  })
})

describe('a request _meta.traceparent is the remote parent of the call span', { timeout: 60_000 }, () => {
  it('over MCP 2025-11-25 (the session server)', async () => {
    const { rt, spans } = await runtime()
    const server = createMcpServer(rt.ctx, { name: 'gw', version: '1.0.0' })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    const client = new LegacyClient({ name: 'legacy', version: '1.0.0' })
    await client.connect(clientSide)
    closers.push(() => client.close())
    await client.callTool({
      name: 'ping_tool',
      arguments: {},
      _meta: { traceparent: TRACEPARENT, tracestate: TRACESTATE },
    })
    await client.callTool({ name: 'ping_tool', arguments: {}, _meta: { traceparent: BAD, tracestate: TRACESTATE } })
    const [joined, fresh] = spans()
    expectJoined(joined)
    expectFresh(fresh)
  })

  it('over MCP 2026-07-28 on Streamable HTTP', async () => {
    const { rt, spans } = await runtime()
    const leg = createModernHttpLeg(rt.ctx, {
      agentFor: () => undefined,
      name: 'gw',
      version: '1.0.0',
      maxMessageBytes: 1 << 20,
    })
    const http: HttpServer = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        void leg.handle(req, res, text === '' ? undefined : JSON.parse(text))
      })
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    closers.push(() => new Promise<void>((resolve) => http.close(() => resolve())))
    closers.push(() => leg.close())
    const { port } = http.address() as AddressInfo
    const client = new Client({ name: 'modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)))
    closers.push(() => client.close())
    await client.callTool({
      name: 'ping_tool',
      arguments: {},
      _meta: { traceparent: TRACEPARENT, tracestate: TRACESTATE },
    })
    await client.callTool({ name: 'ping_tool', arguments: {}, _meta: { traceparent: BAD } })
    const [joined, fresh] = spans()
    expectJoined(joined)
    expectFresh(fresh)
  })

  it('over MCP 2026-07-28 on stdio', async () => {
    const { rt, spans } = await runtime()
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const connection = serveModernStdio(
      rt.ctx,
      { agentFor: () => undefined, name: 'gw', version: '1.0.0' },
      new LineStdioServerTransport({ stdin, stdout }),
    )
    closers.push(() => connection.close())
    const answers = new Map<unknown, (line: unknown) => void>()
    let buffered = ''
    stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
        const reply = JSON.parse(buffered.slice(0, at)) as { id?: unknown }
        buffered = buffered.slice(at + 1)
        answers.get(reply.id)?.(reply)
      }
    })
    const call = (id: number, meta: Record<string, unknown>) => {
      const answered = new Promise((resolve) => answers.set(id, resolve))
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
      }
      const params = { name: 'ping_tool', arguments: {}, _meta: { ...envelope, ...meta } }
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params })}\n`)
      return answered
    }
    expect(await call(1, { traceparent: TRACEPARENT, tracestate: TRACESTATE })).toMatchObject({ id: 1, result: {} })
    expect(await call(2, { traceparent: BAD })).toMatchObject({ id: 2, result: {} })
    const [joined, fresh] = spans()
    expectJoined(joined)
    expectFresh(fresh)
  })
})

/** Body text of a request. */
function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.once('error', reject)
  })
}

/** An HTTP server on 127.0.0.1 handing each request (its body parsed, as serve does) to `handle`. */
async function listen(
  handle: (req: IncomingMessage, res: import('node:http').ServerResponse, body: unknown) => Promise<void>,
) {
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const text = await readAll(req)
      await handle(req, res, text === '' ? undefined : JSON.parse(text))
    })()
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`
}

/** `path` counting the calls it takes (so a test knows the fast path answered them). */
function counted(path: FastPath | undefined, taken: { calls: number }): FastPath | undefined {
  if (path === undefined) return undefined
  return {
    take: (message, extra, reply) => {
      const took = path.take(message, extra, reply)
      if (took && (message as { method?: unknown }).method === 'tools/call') taken.calls++
      return took
    },
  }
}

const SENT = { traceparent: TRACEPARENT, tracestate: TRACESTATE }

describe('every path joins the same parent: the fast paths as the SDK paths (issue 35, item 2)', {
  timeout: 60_000,
}, () => {
  for (const fast of [true, false]) {
    const path = fast ? 'the fast path' : "the SDK's path"

    it(`MCP 2025-11-25 over Streamable HTTP, ${path}`, async () => {
      const { rt, spans } = await runtime()
      const server = createMcpServer(rt.ctx, { name: 'gw', version: '1.0.0' })
      const transport = new NodeStreamableHttpServerTransport({ sessionIdGenerator: () => randomUUID() })
      await server.connect(transport)
      const taken = { calls: 0 }
      if (fast) transport.fastPath = counted(fastPathOf(server), taken)
      const url = await listen((req, res, body) => transport.handleRequest(req, res, body))
      closers.push(() => transport.close())
      const client = new LegacyClient({ name: 'legacy', version: '1.0.0' })
      await client.connect(new LegacyHttpTransport(new URL(url)))
      closers.push(() => client.close())
      await client.callTool({ name: 'ping_tool', arguments: {}, _meta: SENT })
      await client.callTool({ name: 'ping_tool', arguments: {}, _meta: { traceparent: BAD, tracestate: TRACESTATE } })
      expect(taken.calls).toBe(fast ? 2 : 0)
      const [joined, fresh] = spans()
      expectJoined(joined)
      expect(joined?.parentSpanContext?.traceFlags).toBe(1)
      expectFresh(fresh)
    })

    it(`MCP 2025-11-25 over stdio, ${path}`, async () => {
      const { rt, spans } = await runtime()
      const server = createMcpServer(rt.ctx, { name: 'gw', version: '1.0.0' })
      const stdin = new PassThrough()
      const stdout = new PassThrough()
      const transport = new LineStdioServerTransport({ stdin, stdout })
      await server.connect(transport)
      closers.push(() => server.close())
      const taken = { calls: 0 }
      if (fast) transport.fastPath = counted(fastPathOf(server), taken)
      const answers = new Map<unknown, (line: unknown) => void>()
      let buffered = ''
      stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString()
        for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
          const reply = JSON.parse(buffered.slice(0, at)) as { id?: unknown }
          buffered = buffered.slice(at + 1)
          answers.get(reply.id)?.(reply)
        }
      })
      const send = (message: Record<string, unknown>) => {
        const answered = new Promise((resolve) => answers.set(message.id, resolve))
        stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
        return answered
      }
      const clientInfo = { name: 'raw', version: '1.0.0' }
      await send({
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo },
      })
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
      const call = (id: number, meta: Record<string, unknown>) =>
        send({ id, method: 'tools/call', params: { name: 'ping_tool', arguments: {}, _meta: meta } })
      expect(await call(1, SENT)).toMatchObject({ id: 1, result: { content: [{ text: 'pong' }] } })
      expect(await call(2, { traceparent: BAD })).toMatchObject({ id: 2, result: { content: [{ text: 'pong' }] } })
      expect(taken.calls).toBe(fast ? 2 : 0)
      const [joined, fresh] = spans()
      expectJoined(joined)
      expectFresh(fresh)
    })

    it(`MCP 2026-07-28 over Streamable HTTP, ${path}`, async () => {
      const { rt, spans } = await runtime()
      const leg = createModernHttpLeg(rt.ctx, {
        agentFor: () => undefined,
        name: 'gw',
        version: '1.0.0',
        maxMessageBytes: 1 << 20,
        fastPath: fast,
      })
      closers.push(() => leg.close())
      // Whether the fast path would take each call (it takes what it finds fit, when on).
      const fit: boolean[] = []
      const url = await listen(async (req, res, body) => {
        if ((body as { method?: unknown } | undefined)?.method === 'tools/call')
          fit.push(fastRequest(req, body) !== undefined)
        await leg.handle(req, res, body)
      })
      const client = new Client({ name: 'modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      closers.push(() => client.close())
      await client.callTool({ name: 'ping_tool', arguments: {}, _meta: SENT })
      await client.callTool({ name: 'ping_tool', arguments: {}, _meta: { traceparent: BAD } })
      expect(fit).toEqual([true, true])
      const [joined, fresh] = spans()
      expectJoined(joined)
      expect(joined?.parentSpanContext?.traceFlags).toBe(1)
      expectFresh(fresh)
    })
  }
})
