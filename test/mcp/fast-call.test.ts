// The served fast path (issue 23 performance): a plain `tools/call` over toolgate's stdio transport
// is answered without the SDK's Protocol, and must answer exactly what the SDK's handler path
// answers — results, JSON-RPC errors, progress, cancellation, approval elicitations — while
// everything it does not take (malformed params, tasks, requests before initialize) stays the SDK's.
import { PassThrough } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ElicitRequestSchema, type JSONRPCMessage, McpError } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createToolRuntime, defineTool } from '../../src/index.js'
import { createMcpServer } from '../../src/mcp/index.js'
import { fastPathOf } from '../../src/mcp/server/fast-path.js'
import { LineStdioServerTransport } from '../../src/mcp/server/stdio-transport.js'

/** A client-side transport over the two pipes of a LineStdioServerTransport, keeping every line it read. */
class PipeClientTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  readonly lines: JSONRPCMessage[] = []
  private buffer = ''
  constructor(
    private readonly toServer: PassThrough,
    private readonly fromServer: PassThrough,
  ) {}
  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8')
      let newline = this.buffer.indexOf('\n')
      while (newline !== -1) {
        const line = this.buffer.slice(0, newline)
        this.buffer = this.buffer.slice(newline + 1)
        const message = JSON.parse(line) as JSONRPCMessage
        this.lines.push(message)
        this.onmessage?.(message)
        newline = this.buffer.indexOf('\n')
      }
    })
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(`${JSON.stringify(message)}\n`)
  }
  async close(): Promise<void> {
    this.toServer.end()
    this.onclose?.()
  }
}

interface Probe {
  /** Set to make the agent lookup of the next call fail with this error. */
  failScope?: Error
  /** The signals of the `wait` tool's calls, and how each ended. */
  waits: Array<{ signal: AbortSignal }>
  waiting?: () => void
}

async function gateway(fast: boolean) {
  const { ctx, tools } = await createToolRuntime()
  const probe: Probe = { waits: [] }
  const render = (_args: unknown, value: string) => [{ type: 'text' as const, text: value }]
  tools.register(
    defineTool({
      name: 'text',
      description: 'Text.',
      parameters: { x: { type: 'number' } },
      output: { schema: { type: 'string' }, render },
      execute: async (args) => `got ${JSON.stringify(args)}`,
    }),
  )
  tools.register(
    defineTool({
      name: 'structured',
      description: 'Structured.',
      parameters: {},
      output: {
        schema: { type: 'object', properties: { n: { type: 'number', required: true } }, additionalProperties: false },
        render: (_args, value) => [{ type: 'text', text: `n=${(value as { n: number }).n}` }],
      },
      execute: async () => ({ n: 7 }),
    }),
  )
  tools.register(
    defineTool({
      name: 'image',
      description: 'Image.',
      parameters: {},
      output: {
        schema: { type: 'string' },
        render: (_args, value) => [
          { type: 'image', mediaType: 'image/png', data: value as string },
          { type: 'text', text: 'and text' },
        ],
      },
      execute: async () => 'iVBORw0KGgo=',
    }),
  )
  tools.register(
    defineTool({
      name: 'fails',
      description: 'Throws.',
      parameters: {},
      output: { schema: { type: 'string' }, render },
      execute: async () => {
        throw new Error('it broke')
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'steps',
      description: 'Reports progress.',
      parameters: {},
      output: { schema: { type: 'string' }, render },
      execute: async (_args, exec) => {
        exec.progress({ fraction: 0.25, message: 'a quarter' })
        exec.progress({ message: 'more' })
        return 'stepped'
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'guarded',
      description: 'Needs approval.',
      parameters: {},
      needsApproval: true,
      output: { schema: { type: 'string' }, render },
      execute: async () => 'approved and done',
    }),
  )
  tools.register(
    defineTool({
      name: 'wait',
      description: 'Waits until cancelled.',
      parameters: {},
      output: { schema: { type: 'string' }, render },
      execute: (_args, exec) =>
        new Promise<string>((_resolve, reject) => {
          probe.waits.push({ signal: exec.signal })
          probe.waiting?.()
          exec.signal.addEventListener('abort', () => reject(exec.signal.reason), { once: true })
        }),
    }),
  )
  const server = createMcpServer(ctx, {
    name: 'gw',
    version: '1.0.0',
    agentFor: () => {
      const error = probe.failScope
      probe.failScope = undefined
      if (error) throw error
      return undefined
    },
  })
  const toServer = new PassThrough()
  const fromServer = new PassThrough()
  const transport = new LineStdioServerTransport({ stdin: toServer, stdout: fromServer })
  await server.connect(transport)
  let taken = 0
  const path = fastPathOf(server)
  if (fast && path)
    transport.fastPath = {
      take: (message, extra, reply) => {
        const took = path.take(message, extra, reply)
        if (took) taken++
        return took
      },
    }
  const wire = new PipeClientTransport(toServer, fromServer)
  return { server, wire, probe, taken: () => taken, hasFastPath: path !== undefined }
}

/** Send raw messages and collect the responses by id, on one session. */
async function exchange(wire: PipeClientTransport, requests: JSONRPCMessage[]): Promise<unknown[]> {
  const ids = requests.flatMap((r) => ('id' in r ? [r.id] : []))
  const seen = () => ids.every((id) => wire.lines.some((m) => 'id' in m && m.id === id && !('method' in m)))
  for (const request of requests) await wire.send(request)
  await expect.poll(seen, { timeout: 10_000 }).toBe(true)
  return ids.map((id) => wire.lines.find((m) => 'id' in m && m.id === id && !('method' in m)))
}

const INIT: JSONRPCMessage = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}
const call = (id: number, params: unknown): JSONRPCMessage =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', ...(params === undefined ? {} : { params }) }) as JSONRPCMessage

/** The per-session call ids in error details differ between sessions; nothing else may. */
const normalize = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/mcp-[0-9a-f]{8}-\d+/g, 'mcp-ID'))

describe('the served fast path for tools/call', () => {
  it('issue 23, Performance: answers plain calls exactly as the SDK path does, and leaves malformed ones to the SDK', async () => {
    const requests: JSONRPCMessage[] = [
      call(1, { name: 'text', arguments: { x: 1 } }),
      call(2, { name: 'text' }),
      call(3, { name: 'structured', arguments: {} }),
      call(4, { name: 'image', arguments: {} }),
      call(5, { name: 'fails', arguments: {} }),
      call(6, { name: 'no-such-tool', arguments: {} }),
      call(7, { name: 'text', arguments: { x: 'not a number' } }),
      call(8, { name: 'text', arguments: {}, _meta: { progressToken: 'p' } }),
      // Left to the SDK: its schema refuses these.
      call(20, { name: 5 }),
      call(21, { name: 'text', arguments: [1] }),
      call(22, { name: 'text', _meta: { progressToken: true } }),
      call(23, undefined),
      call(24, { name: 'text', arguments: null }),
    ]
    const answers: unknown[][] = []
    const taken: number[] = []
    for (const fast of [false, true]) {
      const { server, wire, taken: count, hasFastPath } = await gateway(fast)
      expect(hasFastPath).toBe(true)
      await wire.start()
      await exchange(wire, [INIT])
      await wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      answers.push(normalize(await exchange(wire, requests)))
      taken.push(count())
      await server.close()
    }
    const [sdk, fast] = answers
    expect(fast).toEqual(sdk)
    expect(taken).toEqual([0, 8])
    // The reference answers are what they should be.
    expect(sdk[0]).toMatchObject({ result: { content: [{ type: 'text', text: 'got {"x":1}' }] } })
    expect(sdk[2]).toMatchObject({ result: { structuredContent: { n: 7 } } })
    expect(sdk[3]).toMatchObject({ result: { content: [{ type: 'image', mimeType: 'image/png' }, { type: 'text' }] } })
    expect(sdk[4]).toMatchObject({ result: { isError: true } })
    // The SDK refuses them, each with its own error.
    for (const i of [8, 9, 10, 11, 12]) expect(sdk[i]).toMatchObject({ error: { code: expect.any(Number) } })
  })

  it('issue 23, Performance: a failure of the call itself is the same JSON-RPC error (an McpError keeps its code and data)', async () => {
    const answers: unknown[][] = []
    for (const fast of [false, true]) {
      const { server, wire, probe, taken } = await gateway(fast)
      await wire.start()
      await exchange(wire, [INIT])
      probe.failScope = new McpError(-32042 + 1, 'no scope for you', { why: 'test' })
      const first = await exchange(wire, [call(1, { name: 'text' })])
      probe.failScope = new Error('plain failure')
      const second = await exchange(wire, [call(2, { name: 'text' })])
      answers.push([...first, ...second])
      expect(taken()).toBe(fast ? 2 : 0)
      await server.close()
    }
    expect(answers[1]).toEqual(answers[0])
    expect(answers[0]).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32041, message: 'MCP error -32041: no scope for you', data: { why: 'test' } },
      },
      { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'plain failure' } },
    ])
  })

  it('issue 23, Performance: a call before initialize is left to the SDK', async () => {
    const { server, wire, taken } = await gateway(true)
    await wire.start()
    const [answer] = await exchange(wire, [call(1, { name: 'text' })])
    expect(answer).toMatchObject({ result: { content: [{ type: 'text', text: 'got {}' }] } })
    expect(taken()).toBe(0)
    await exchange(wire, [INIT])
    await exchange(wire, [call(2, { name: 'text' })])
    expect(taken()).toBe(1)
    await server.close()
  })

  it('issue 23, Performance: progress reaches the client as on the SDK path', async () => {
    const seen: unknown[][] = []
    for (const fast of [false, true]) {
      const { server, wire, taken } = await gateway(fast)
      const client = new Client({ name: 'c', version: '1' })
      await client.connect(wire)
      const progress: unknown[] = []
      const result = await client.callTool({ name: 'steps', arguments: {} }, undefined, {
        onprogress: (p) => progress.push(p),
      })
      expect(result.content).toEqual([{ type: 'text', text: 'stepped' }])
      expect(taken()).toBe(fast ? 1 : 0)
      seen.push(progress)
      await client.close()
      await server.close()
    }
    expect(seen[1]).toEqual(seen[0])
    expect(seen[0]).toEqual([
      { progress: 25, total: 100, message: 'a quarter' },
      { progress: 26, message: 'more' },
    ])
  })

  it('issue 23, Performance: a client cancellation aborts the call, which then answers nothing; the session goes on', async () => {
    const { server, wire, probe, taken } = await gateway(true)
    const client = new Client({ name: 'c', version: '1' })
    await client.connect(wire)
    const started = new Promise<void>((resolve) => {
      probe.waiting = resolve
    })
    const controller = new AbortController()
    const pending = client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal })
    await started
    controller.abort('user gave up')
    await expect(pending).rejects.toThrow(/user gave up/)
    await expect.poll(() => probe.waits[0].signal.aborted, { timeout: 10_000 }).toBe(true)
    expect(probe.waits[0].signal.reason).toBe('user gave up')
    const next = await client.callTool({ name: 'text', arguments: {} })
    expect(next.content).toEqual([{ type: 'text', text: 'got {}' }])
    expect(taken()).toBe(2)
    // No response ever went out for the cancelled request.
    const request = wire.lines.filter((m) => 'id' in m && !('method' in m))
    expect(request.map((m) => ('id' in m ? m.id : undefined))).not.toContain(1)
    await client.close()
    await server.close()
  })

  it('issue 23, Performance: the session closing aborts a running fast-path call', async () => {
    const { server, wire, probe } = await gateway(true)
    const client = new Client({ name: 'c', version: '1' })
    await client.connect(wire)
    const started = new Promise<void>((resolve) => {
      probe.waiting = resolve
    })
    const pending = client.callTool({ name: 'wait', arguments: {} }).catch((error: Error) => error)
    await started
    await server.close()
    await expect.poll(() => probe.waits[0].signal.aborted, { timeout: 10_000 }).toBe(true)
    await client.close()
    expect(await pending).toBeInstanceOf(Error)
  })

  it('issue 23, Performance: an approval is asked of the client as an elicitation during a fast-path call', async () => {
    const { server, wire, taken } = await gateway(true)
    const client = new Client({ name: 'c', version: '1' }, { capabilities: { elicitation: {} } })
    const asked: string[] = []
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(String(request.params.message))
      return { action: 'accept', content: { approve: true } }
    })
    await client.connect(wire)
    const result = await client.callTool({ name: 'guarded', arguments: {} })
    expect(result.content).toEqual([{ type: 'text', text: 'approved and done' }])
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatch(/Allow the call to guarded\?/)
    expect(taken()).toBe(1)
    await client.close()
    await server.close()
  })
})
