// Issue 35, item 7: an upstream tool's listing (title, annotations, icons, execution, _meta, output
// schema) rides its definition's `meta`, frozen, never in the model's projection, and a gateway
// lists it again unchanged.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer, createMcpServer } from '../../src/mcp/index.js'
import { isDeepFrozen } from '../runtime/helpers.js'

const LISTED: Tool = {
  name: 'lookup',
  title: 'Look up a word',
  description: 'Looks a word up.',
  inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
  outputSchema: { type: 'object', properties: { meaning: { type: 'string' } } },
  annotations: { readOnlyHint: true, openWorldHint: false, title: 'Lookup' },
  icons: [{ src: 'https://example.test/book.png', mimeType: 'image/png' }],
  execution: { taskSupport: 'forbidden' },
  _meta: { 'example.test/shelf': 3 },
}

function upstream(): Server {
  const server = new Server({ name: 'dictionary', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [structuredClone(LISTED)] }))
  server.setRequestHandler(CallToolRequestSchema, async () => ({
    content: [{ type: 'text', text: 'a word' }],
    structuredContent: { meaning: 'a word' },
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

describe("an upstream tool's meta (issue 35, item 7)", () => {
  it('rides the registered definition, frozen, and stays out of the model projection', async () => {
    const { ctx, tools } = await createToolRuntime()
    const [up, upServer] = InMemoryTransport.createLinkedPair()
    await upstream().connect(upServer)
    const connection = await connectMcpServer(ctx, { transport: up }, { prefix: 'dict_' })
    const definition = tools.get('dict_lookup')!
    expect(definition.meta).toEqual({
      title: LISTED.title,
      annotations: LISTED.annotations,
      icons: LISTED.icons,
      execution: LISTED.execution,
      _meta: LISTED._meta,
      imported: { outputSchema: LISTED.outputSchema },
    })
    expect(isDeepFrozen(definition.meta)).toBe(true)
    expect(() => {
      ;(definition.meta!.annotations as { readOnlyHint?: boolean }).readOnlyHint = false
    }).toThrow(TypeError)
    expect(tools.get('dict_lookup')!.meta!.annotations!.readOnlyHint).toBe(true)
    expect(JSON.stringify(tools.schemas())).not.toMatch(/Look up a word|readOnlyHint|example\.test|taskSupport/)
    await connection.close()
  })

  it('a gateway lists it again as the upstream did, and relays the structured result', async () => {
    const direct = await clientOf(upstream())
    const { ctx } = await createToolRuntime()
    const [up, upServer] = InMemoryTransport.createLinkedPair()
    await upstream().connect(upServer)
    const connection = await connectMcpServer(ctx, { transport: up })
    const gateway = await clientOf(createMcpServer(ctx, { name: 'gw', version: '1.0.0' }))
    const want = (await direct.listTools()).tools
    const got = (await gateway.listTools()).tools
    expect(got).toStrictEqual(want)
    expect(got[0]).toMatchObject({ title: LISTED.title, icons: LISTED.icons, _meta: LISTED._meta })
    const call = await gateway.callTool({ name: 'lookup', arguments: { word: 'x' } })
    expect(call.structuredContent).toEqual({ meaning: 'a word' })
    await direct.close()
    await gateway.close()
    await connection.close()
  })
})
