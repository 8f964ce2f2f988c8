// MCP logging through toolgate (issue 23, item 2): an imported server's `notifications/message` reach
// `onLog` with the server's name, `setLogLevel` sends `logging/setLevel` (again after a reconnect, and
// not at all to a server without the logging capability), and a served scope relays log messages at
// or above the level its client set, passing that level to `logging.setLevel`.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { EmptyResultSchema as EmptyResult, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer, createMcpServer, type McpLogLevel, type McpLogMessage } from '../../src/mcp/index.js'
import { createLoggingServer } from '../fixtures/logging-mcp-server.mjs'

const LOGGING_UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/logging-mcp-server.mjs')
const BOUND_MS = 30_000

const call = (name: string) => ({ callId: `c-${name}`, name, arguments: {}, signal: new AbortController().signal })

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + BOUND_MS
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function linkedLoggingServer() {
  const server = createLoggingServer()
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  return { transport: clientSide }
}

describe('connectMcpServer: logging', () => {
  it('issue 23, item 2: every log message reaches onLog with the server name; without a level set all of them', async () => {
    await using runtime = await createToolRuntime()
    const got: [McpLogMessage, string][] = []
    await connectMcpServer(runtime.ctx, await linkedLoggingServer(), {
      name: 'chatty',
      onLog: (message, server) => got.push([message, server]),
    })
    const result = await runtime.tools.execute(call('chatter'))
    expect(result.isError).toBe(false)
    await until(() => got.length >= 4)
    expect(got).toEqual([
      [{ level: 'debug', data: 'a debug detail' }, 'chatty'],
      [{ level: 'info', data: { step: 1 } }, 'chatty'],
      [{ level: 'warning', logger: 'core', data: 'running low' }, 'chatty'],
      [{ level: 'error', data: 'it broke' }, 'chatty'],
    ])
  })

  it('issue 23, item 2: setLogLevel sends logging/setLevel, so the server sends only messages at or above it', async () => {
    await using runtime = await createToolRuntime()
    const got: McpLogLevel[] = []
    const connection = await connectMcpServer(runtime.ctx, await linkedLoggingServer(), {
      onLog: (message) => got.push(message.level),
    })
    await connection.setLogLevel('warning')
    await runtime.tools.execute(call('chatter'))
    await until(() => got.includes('error'))
    expect(got).toEqual(['warning', 'error'])
    await expect(connection.setLogLevel('loud' as McpLogLevel)).rejects.toThrow(/setLogLevel\(level\)/)
  })

  it('issue 23, item 2: the level is sent again to the new session after a reconnect', async () => {
    await using runtime = await createToolRuntime()
    const got: McpLogLevel[] = []
    const connection = await connectMcpServer(
      runtime.ctx,
      { command: process.execPath, args: [LOGGING_UPSTREAM] },
      { name: 'chatty', onLog: (message) => got.push(message.level) },
    )
    await connection.setLogLevel('error')
    expect((await runtime.tools.execute(call('crash'))).isError).toBe(true)
    await until(() => !connection.connected)
    const result = await runtime.tools.execute(call('chatter'))
    expect(result.isError).toBe(false)
    await until(() => got.includes('error'))
    expect(got).toEqual(['error'])
    await connection.close()
  }, 60_000)

  it('an onLog callback that throws becomes an McpConnectionWarning; the call is unaffected', async () => {
    await using runtime = await createToolRuntime()
    const warnings: string[] = []
    const onWarning = (warning: Error) => {
      if (warning.name === 'McpConnectionWarning') warnings.push(warning.message)
    }
    process.on('warning', onWarning)
    try {
      const connection = await connectMcpServer(runtime.ctx, await linkedLoggingServer(), {
        name: 'chatty',
        onLog: () => {
          throw new Error('listener broke')
        },
      })
      await connection.setLogLevel('error')
      expect((await runtime.tools.execute(call('chatter'))).isError).toBe(false)
      await until(() => warnings.length >= 1)
      expect(warnings).toEqual(['MCP server "chatty": the onLog callback threw: listener broke'])
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('issue 23, item 2: a server without the logging capability is not sent logging/setLevel', async () => {
    await using runtime = await createToolRuntime()
    const server = new McpServer({ name: 'quiet', version: '1.0.0' })
    server.registerTool('noop', { description: 'Nothing.' }, async () => ({ content: [] }))
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    const connection = await connectMcpServer(runtime.ctx, { transport: clientSide })
    // Sent, it would be answered "method not found" and reject.
    await expect(connection.setLogLevel('info')).resolves.toBeUndefined()
  })
})

describe('createMcpServer: logging', () => {
  it('issue 23, item 2: declares logging, relays messages at or above the client level, passes the level on', async () => {
    await using runtime = await createToolRuntime()
    let send: ((message: McpLogMessage) => void) | undefined
    const levels: McpLogLevel[] = []
    let unsubscribed = false
    const server = createMcpServer(runtime.ctx, {
      name: 'served',
      version: '1.0.0',
      logging: {
        subscribe: (listener) => {
          send = listener
          return () => {
            unsubscribed = true
          }
        },
        setLevel: (level) => {
          levels.push(level)
        },
      },
    })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    const client = new Client({ name: 'test', version: '1.0.0' })
    const got: unknown[] = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
      got.push(params)
    })
    await client.connect(clientSide)
    expect(client.getServerCapabilities()?.logging).toEqual({})
    await client.setLoggingLevel('notice')
    expect(levels).toEqual(['notice'])
    send?.({ level: 'info', logger: 'up', data: 'dropped' })
    send?.({ level: 'notice', logger: 'up', data: 'kept' })
    send?.({ level: 'alert', data: { n: 2 } })
    await until(() => got.length >= 2)
    await client.ping()
    expect(got).toEqual([
      { level: 'notice', logger: 'up', data: 'kept' },
      { level: 'alert', data: { n: 2 } },
    ])
    await client.close()
    await until(() => unsubscribed)
  })

  it('issue 23, item 2: without the option there is no logging capability and setLevel is not a method', async () => {
    await using runtime = await createToolRuntime()
    const server = createMcpServer(runtime.ctx, { name: 'served', version: '1.0.0' })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(clientSide)
    expect(client.getServerCapabilities()?.logging).toBeUndefined()
    await expect(
      client.request({ method: 'logging/setLevel', params: { level: 'info' } }, EmptyResult),
    ).rejects.toThrow(/Method not found/)
    await client.close()
  })

  it('a bad logging option fails with a path-qualified error', async () => {
    await using runtime = await createToolRuntime()
    expect(() => createMcpServer(runtime.ctx, { name: 's', version: '1', logging: {} as never })).toThrow(
      /options\)\.logging\.subscribe/,
    )
  })
})
