// Issue 23 item 3: content crosses the gateway lossless. An upstream returns every MCP content kind
// with annotations and _meta; toolgate imports it (connectMcpServer) and serves it again
// (createMcpServer); the client must receive exactly what a direct client receives.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { ContentBlock } from '../../src/index.js'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer, createMcpServer } from '../../src/mcp/index.js'
import { fromMcpContent, toMcpContent } from '../../src/mcp/protocol/content.js'
import { everyContentResult } from '../fixtures/every-content.mjs'

function upstream() {
  const server = new McpServer({ name: 'kinds', version: '1.0.0' })
  server.registerTool('kinds', { description: 'Every kind.' }, async () => structuredClone(everyContentResult))
  server.registerTool(
    'typed',
    { description: 'Structured.', outputSchema: { total: z.number(), tags: z.array(z.string()) } },
    async () => ({
      content: [{ type: 'text', text: '3 tags' }],
      structuredContent: { total: 3, tags: ['a', 'b', 'c'] },
    }),
  )
  server.registerTool('broken', { description: 'Fails with more than text.' }, async () => ({
    isError: true,
    content: [
      { type: 'text', text: 'it broke', annotations: { audience: ['assistant'] } },
      { type: 'text', text: 'see the log' },
      { type: 'resource', resource: { uri: 'file:///log', mimeType: 'text/plain', text: 'trace…' }, _meta: { l: 1 } },
      { type: 'image', data: 'AA==', mimeType: 'image/png' },
    ],
  }))
  return server
}

async function clientOf(server: { connect(t: InMemoryTransport): Promise<void> }): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair()
  await server.connect(b)
  const client = new Client({ name: 'c', version: '1.0.0' })
  await client.connect(a)
  return client
}

describe('content through the gateway (issue 23, item 3)', () => {
  it('every MCP content kind, annotations, _meta and structuredContent reach the client unchanged', async () => {
    const direct = await clientOf(upstream())
    const { ctx } = await createToolRuntime()
    const [up, upServer] = InMemoryTransport.createLinkedPair()
    await upstream().connect(upServer)
    await connectMcpServer(ctx, { transport: up })
    const gateway = await clientOf(createMcpServer(ctx, { name: 'gw', version: '1.0.0' }))

    for (const name of ['kinds', 'typed']) {
      const want = await direct.callTool({ name, arguments: {} })
      const got = await gateway.callTool({ name, arguments: {} })
      expect(got).toStrictEqual(want)
      expect(JSON.stringify(got)).toBe(JSON.stringify(want))
    }
    // And what the direct client saw is what the upstream sent: the fixture is all valid MCP.
    const sent = await direct.callTool({ name: 'kinds', arguments: {} })
    expect(sent).toEqual(everyContentResult)
    const typed = await gateway.callTool({ name: 'typed', arguments: {} })
    expect(typed.structuredContent).toEqual({ total: 3, tags: ['a', 'b', 'c'] })
    await direct.close()
    await gateway.close()
  })

  it('a failed upstream call keeps its blocks: the client gets the same content, flagged isError', async () => {
    const direct = await clientOf(upstream())
    const { ctx, tools } = await createToolRuntime()
    const [up, upServer] = InMemoryTransport.createLinkedPair()
    await upstream().connect(upServer)
    await connectMcpServer(ctx, { transport: up })
    const gateway = await clientOf(createMcpServer(ctx, { name: 'gw', version: '1.0.0' }))
    const want = await direct.callTool({ name: 'broken', arguments: {} })
    const got = await gateway.callTool({ name: 'broken', arguments: {} })
    expect(got.isError).toBe(true)
    expect(got.content).toStrictEqual(want.content)
    // Inside toolgate it is an McpToolError whose message is the text, and whose content is the server's.
    const result = await tools.execute({
      callId: 'b',
      name: 'broken',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.isError && result.error).toMatchObject({
      message: 'it broke\nsee the log',
      info: { code: 'MCP_TOOL_ERROR' },
    })
    expect(result.content.map((b) => b.type)).toEqual(['text', 'text', 'resource', 'image'])
    await direct.close()
    await gateway.close()
  })

  it('inside toolgate the blocks are toolgate content: mediaType, resource-link, nothing dropped', async () => {
    const { ctx, tools } = await createToolRuntime()
    const [up, upServer] = InMemoryTransport.createLinkedPair()
    await upstream().connect(upServer)
    await connectMcpServer(ctx, { transport: up })
    const result = await tools.execute({
      callId: 'k',
      name: 'kinds',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.isError).toBe(false)
    const content = result.content
    expect(content.map((b) => b.type)).toEqual([
      'text',
      'text',
      'image',
      'audio',
      'resource-link',
      'resource-link',
      'resource',
      'resource',
      'resource',
    ])
    expect(content[3]).toEqual({
      type: 'audio',
      mediaType: 'audio/wav',
      data: (everyContentResult.content[3] as { data: string }).data,
      annotations: { priority: 0 },
      _meta: { seconds: 0 },
    })
    expect(content[4]).toMatchObject({
      type: 'resource-link',
      mediaType: 'application/pdf',
      icons: [{ src: 'https://example.com/pdf.png', mediaType: 'image/png', sizes: ['48x48'], theme: 'light' }],
    })
    expect(content[7]).toMatchObject({
      type: 'resource',
      resource: { uri: 'file:///x.bin', mediaType: 'application/octet-stream', blob: 'AAECAwQFBgc=' },
    })
  })

  it('fromMcpContent and toMcpContent are inverse for every kind', () => {
    for (const block of everyContentResult.content) {
      const mine = fromMcpContent(block)
      expect(toMcpContent(mine)).toStrictEqual(block)
      expect(fromMcpContent(toMcpContent(mine))).toStrictEqual(mine)
    }
    const own: ContentBlock = {
      type: 'resource',
      resource: { uri: 'u', blob: 'AA==', _meta: { a: 1 } },
      annotations: { audience: ['assistant'] },
    }
    expect(toMcpContent(own)).toStrictEqual({
      type: 'resource',
      resource: { uri: 'u', blob: 'AA==', _meta: { a: 1 } },
      annotations: { audience: ['assistant'] },
    })
  })

  it('a block of a kind MCP does not define becomes its JSON as text, not nothing', () => {
    expect(fromMcpContent({ type: 'hologram', depth: 3 })).toEqual({
      type: 'text',
      text: '{"type":"hologram","depth":3}',
    })
    expect(fromMcpContent({ type: 'image', data: 'AA==' })).toEqual({
      type: 'text',
      text: '{"type":"image","data":"AA=="}',
    })
  })
})
