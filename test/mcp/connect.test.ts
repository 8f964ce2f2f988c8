// connectMcpServer in process, over the SDK's in-memory transport: registrations, scheduling hints,
// remote errors, and lifetime (close and ctx disposal remove the tools).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, createToolRuntime, defineTool } from '../../src/index.js'
import { connectMcpServer, createMcpServer } from '../../src/mcp/index.js'

function upstream() {
  const server = new McpServer({ name: 'mem', version: '1.0.0' })
  server.registerTool(
    'look',
    { description: 'Read-only.', inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } },
    async ({ q }) => ({ content: [{ type: 'text', text: `saw ${q}` }] }),
  )
  server.registerTool('touch', { description: 'Writes.' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }))
  server.registerTool('boom', { description: 'Fails.' }, async () => ({
    content: [{ type: 'text', text: 'remote failure' }],
    isError: true,
  }))
  const [client, serverSide] = InMemoryTransport.createLinkedPair()
  return { server, transport: client, connect: () => server.connect(serverSide) }
}

const call = (name: string, args: unknown = {}) => ({
  callId: `c-${name}`,
  name,
  arguments: args,
  signal: new AbortController().signal,
})

describe('connectMcpServer', () => {
  it('registers prefixed tools; readOnlyHint makes a tool parallel; remote errors are error results', async () => {
    const { ctx, tools } = await createToolRuntime()
    const up = upstream()
    await up.connect()
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'm_' })
    expect(connection.tools).toEqual(['m_look', 'm_touch', 'm_boom'])
    expect(tools.executionMode(call('m_look', { q: 'x' }))).toEqual({ kind: 'parallel' })
    expect(tools.executionMode(call('m_touch'))).toEqual({ kind: 'exclusive' })
    const look = await tools.execute(call('m_look', { q: 'x' }))
    expect(look).toMatchObject({ isError: false, value: { content: [{ type: 'text', text: 'saw x' }] } })
    const boom = await tools.execute(call('m_boom'))
    expect(boom.isError).toBe(true)
    expect(boom.error?.message).toBe('remote failure')
    await connection.close()
    expect(tools.get('m_look')).toBeUndefined()
    expect((await tools.execute(call('m_look', { q: 'x' }))).isError).toBe(true)
  })

  it("hands back one frozen list of tool names until the server's tools change (the gateway reads it per call)", async () => {
    const { ctx } = await createToolRuntime()
    const up = upstream()
    await up.connect()
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'm_' })
    const before = connection.tools
    expect(connection.tools).toBe(before)
    expect(Object.isFrozen(before)).toBe(true)
    const added = up.server.registerTool('poke', { description: 'New.' }, async () => ({ content: [] }))
    await expect.poll(() => connection.tools, { timeout: 10_000 }).toContain('m_poke')
    expect(before).toEqual(['m_look', 'm_touch', 'm_boom'])
    const after = connection.tools
    expect(after).toEqual(['m_look', 'm_touch', 'm_boom', 'm_poke'])
    expect(connection.tools).toBe(after)
    added.remove()
    await expect.poll(() => connection.tools, { timeout: 10_000 }).not.toContain('m_poke')
    expect(connection.tools).toEqual(['m_look', 'm_touch', 'm_boom'])
    await connection.close()
    expect(connection.tools).toEqual([])
  })

  it('disposing the context closes the connection and unregisters; an agent scope keeps tools to itself', async () => {
    const { ctx, tools } = await createToolRuntime()
    const agent = createAgent(ctx, { id: 'a' })
    const up = upstream()
    await up.connect()
    let closed = false
    up.server.server.onclose = () => {
      closed = true
    }
    await connectMcpServer(agent.ctx, { transport: up.transport }, { agent })
    expect(tools.get('look', agent)).toBeDefined()
    expect(tools.get('look')).toBeUndefined()
    await agent.dispose()
    // A disposed agent answers no questions about its tools (issue 17 lifecycle).
    expect(() => tools.get('look', agent)).toThrow(/agent "a" was disposed/)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(closed).toBe(true)
  })

  it('a bad server spec fails with a path-qualified error', async () => {
    const { ctx } = await createToolRuntime()
    await expect(connectMcpServer(ctx, { command: '' })).rejects.toThrow(/server\.command/)
    await expect(connectMcpServer(ctx, { url: 'not a url' })).rejects.toThrow(/server\.url/)
  })
})

describe('createMcpServer in process', () => {
  it('follows tools/change with list_changed and serves structured content', async () => {
    const { ctx, tools } = await createToolRuntime()
    const server = createMcpServer(ctx, { name: 't', version: '1.0.0' })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(b)
    const client = new Client({ name: 'c', version: '1.0.0' })
    let changes = 0
    const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js')
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++
    })
    await client.connect(a)
    expect((await client.listTools()).tools).toEqual([])
    tools.register(
      defineTool({
        name: 'add',
        description: 'Add.',
        parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
        output: {
          schema: {
            type: 'object',
            properties: { sum: { type: 'integer', required: true } },
            additionalProperties: false,
          },
          render: (_args, v) => [{ type: 'text', text: String(v.sum) }],
        },
        execute: async ({ a, b }) => ({ sum: a + b }),
      }),
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(changes).toBe(1)
    const listed = (await client.listTools()).tools
    expect(listed.map((t) => t.name)).toEqual(['add'])
    expect(listed[0].outputSchema).toMatchObject({ type: 'object' })
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })
    expect(result.structuredContent).toEqual({ sum: 5 })
    const bad = await client.callTool({ name: 'add', arguments: { a: 'x' } })
    expect(bad.isError).toBe(true)
    await client.close()
  })
})
