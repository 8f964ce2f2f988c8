// Issue 35, item 2 (trace context): a request's `_meta.traceparent` (and `tracestate`) is the
// remote parent of toolgate's OpenTelemetry span for the call, on every face that serves calls:
// MCP 2025-11-25 (the session server) and 2026-07-28 over Streamable HTTP and over stdio. A
// malformed traceparent is ignored (W3C Trace Context): the span starts a trace of its own.
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime, defineTool } from '../../src/index.js'
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
