// Resources, prompts and completions through toolgate/mcp (issue 23, item 2): connectMcpServer
// exposes an upstream's lists, reads, subscriptions, prompts and completions, follows its
// list_changed, and createMcpServer serves a catalog to a real SDK client, declaring only what it
// is given.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import {
  connectMcpServer,
  createMcpServer,
  type McpListKind,
  McpRequestError,
  type McpResourceSubscriber,
  type McpServerCatalog,
} from '../../src/mcp/index.js'
import { createCatalogServer } from '../fixtures/catalog-mcp-server.mjs'

const CATALOG_UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/catalog-mcp-server.mjs')
const BOUND_MS = 30_000

const call = (name: string, args: Record<string, unknown> = {}) => ({
  callId: `c-${name}-${Math.random()}`,
  name,
  arguments: args,
  signal: new AbortController().signal,
})

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + BOUND_MS
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function linked(server: McpServer) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  return { transport: clientSide }
}

describe('connectMcpServer: resources, prompts, completions', () => {
  it('issue 23, item 2: lists, reads, templates, prompts with arguments and completions of the upstream', async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(runtime.ctx, await linked(createCatalogServer('a')), { prefix: 'a__' })
    expect(connection.features).toEqual({
      resources: true,
      subscribe: true,
      prompts: true,
      completions: true,
      protocolVersion: '2025-11-25',
    })
    expect(connection.resources.map((r) => r.uri)).toEqual(['note://a/readme', 'note://a/logo'])
    expect(connection.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['note://a/items/{id}'])
    // Prompts keep the server's own names: the prefix is for tools.
    expect(connection.prompts.map((p) => p.name)).toEqual(['greet', 'plain'])
    expect(connection.tools).toContain('a__touch')

    expect(await connection.readResource('note://a/readme')).toEqual({
      contents: [{ uri: 'note://a/readme', mimeType: 'text/plain', text: 'readme of a' }],
    })
    expect((await connection.readResource('note://a/logo')).contents[0]).toMatchObject({ blob: 'iVBORw0KGgo=' })
    expect((await connection.readResource('note://a/items/42')).contents[0]).toMatchObject({ text: 'item 42 of a' })
    expect(await connection.getPrompt('greet', { name: 'Ada' })).toMatchObject({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello Ada, from a' } }],
    })
    const prompt = await connection.complete({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'name', value: 'A' },
    })
    expect(prompt.completion.values).toEqual(['Ada', 'Alan'])
    const template = await connection.complete({
      ref: { type: 'ref/resource', uri: 'note://a/items/{id}' },
      argument: { name: 'id', value: 'ap' },
    })
    expect(template.completion.values).toEqual(['apple', 'apricot'])
  })

  it("issue 23, item 2: an upstream's error keeps its JSON-RPC code; an undeclared capability is -32601 without a request", async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(runtime.ctx, await linked(createCatalogServer('a')), { name: 'cat' })
    const missing = await connection.readResource('note://nowhere').catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(McpRequestError)
    // The SDK's McpServer answers an unknown resource with -32602 (invalid params) and a message
    // that already starts "MCP error -32602: "; code and message are kept as they were on the wire.
    expect(missing).toMatchObject({ code: 'MCP_REQUEST_FAILED', rpcCode: -32602 })
    expect((missing as McpRequestError).reason).toBe('MCP error -32602: Resource note://nowhere not found')
    expect((missing as Error).message).toMatch(/^MCP server "cat": resources\/read failed: /)
    await expect(connection.getPrompt('nope')).rejects.toMatchObject({ rpcCode: -32602 })

    const bare = new McpServer({ name: 'tools-only', version: '1.0.0' })
    bare.registerTool('noop', {}, async () => ({ content: [] }))
    const tools = await connectMcpServer(runtime.ctx, await linked(bare), { prefix: 'b__' })
    expect(tools.features).toEqual({
      resources: false,
      subscribe: false,
      prompts: false,
      completions: false,
      protocolVersion: '2025-11-25',
    })
    expect([tools.resources, tools.resourceTemplates, tools.prompts]).toEqual([[], [], []])
    await expect(tools.readResource('x://y')).rejects.toMatchObject({ rpcCode: -32601 })
    await expect(tools.getPrompt('p')).rejects.toMatchObject({ rpcCode: -32601 })
  })

  it('issue 23, item 2: subscribe → updated reaches onResourceUpdated; unsubscribe stops it', async () => {
    await using runtime = await createToolRuntime()
    const updated: [string, string][] = []
    const connection = await connectMcpServer(runtime.ctx, await linked(createCatalogServer('a')), {
      name: 'cat',
      onResourceUpdated: (uri, server) => updated.push([uri, server]),
    })
    await connection.subscribeResource('note://a/readme')
    const touched = await runtime.tools.execute(call('touch', { uri: 'note://a/readme' }))
    expect(touched.content).toEqual([{ type: 'text', text: 'sent' }])
    await until(() => updated.length === 1)
    expect(updated).toEqual([['note://a/readme', 'cat']])
    await connection.unsubscribeResource('note://a/readme')
    const after = await runtime.tools.execute(call('touch', { uri: 'note://a/readme' }))
    expect(after.content).toEqual([{ type: 'text', text: 'not subscribed' }])
  })

  it('issue 23, item 2: list_changed re-lists resources and prompts, then tells onListChanged', async () => {
    await using runtime = await createToolRuntime()
    const changes: McpListKind[] = []
    const connection = await connectMcpServer(runtime.ctx, await linked(createCatalogServer('a')), {
      onListChanged: (kind) => changes.push(kind),
    })
    // The first listing told it too: only what comes after the change counts.
    changes.length = 0
    await runtime.tools.execute(call('add', { kind: 'resource' }))
    await until(() => changes.includes('resources'))
    expect(connection.resources.map((r) => r.uri)).toContain('note://a/extra')
    changes.length = 0
    await runtime.tools.execute(call('add', { kind: 'prompt' }))
    await until(() => changes.includes('prompts'))
    expect(connection.prompts.map((p) => p.name)).toEqual(['greet', 'plain', 'extra'])
  })

  it('issue 23, item 2: subscriptions are sent again to the new session after the upstream restarts', async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(runtime.ctx, { command: process.execPath, args: [CATALOG_UPSTREAM, 'a'] })
    await connection.subscribeResource('note://a/readme')
    expect((await runtime.tools.execute(call('crash'))).isError).toBe(true)
    await until(() => !connection.connected)
    const listed = await runtime.tools.execute(call('subscriptions'))
    expect(listed.content).toEqual([{ type: 'text', text: '["note://a/readme"]' }])
    await connection.close()
  }, 60_000)
})

/** A catalog over fixed data, recording what the server asks of it. */
function fixedCatalog(log: string[]) {
  let listener: ((kind: McpListKind) => void) | undefined
  const subscribers = new Map<string, McpResourceSubscriber>()
  const catalog: McpServerCatalog = {
    resources: {
      list: async () => [{ uri: 'mem://one', name: 'one' }],
      templates: async () => [{ uriTemplate: 'mem://t/{x}', name: 't' }],
      read: async (uri) => {
        if (uri !== 'mem://one') throw new McpRequestError('not here', -32002, `Resource ${uri} not found`)
        return { contents: [{ uri, text: 'one' }] }
      },
      subscribe: async (uri, subscriber) => {
        log.push(`subscribe ${uri}`)
        subscribers.set(uri, subscriber)
      },
      unsubscribe: async (uri, subscriber) => {
        log.push(`unsubscribe ${uri} ${subscribers.get(uri) === subscriber}`)
        subscribers.delete(uri)
      },
    },
    prompts: {
      list: async () => [{ name: 'p', arguments: [{ name: 'who', required: true }] }],
      get: async (name, args) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `${name} ${args.who}` } }],
      }),
    },
    complete: async (params) => ({ completion: { values: [`${params.argument.value}!`] } }),
    watch: (l) => {
      listener = l
      return () => {
        listener = undefined
        log.push('unwatch')
      }
    },
  }
  return {
    catalog,
    update: (uri: string) => subscribers.get(uri)?.(uri),
    change: (kind: McpListKind) => listener?.(kind),
  }
}

describe('createMcpServer: catalog', () => {
  async function serve(options: { catalog?: McpServerCatalog }) {
    const runtime = await createToolRuntime()
    const server = createMcpServer(runtime.ctx, { name: 'gw', version: '1.0.0', ...options })
    const client = new Client({ name: 'c', version: '1.0.0' })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    await client.connect(clientSide)
    return { client, server, runtime }
  }

  it('issue 23, item 2: without a catalog no resources, prompts or completions are declared (method not found)', async () => {
    const { client, runtime } = await serve({})
    const capabilities = client.getServerCapabilities()
    expect([capabilities?.resources, capabilities?.prompts, capabilities?.completions]).toEqual([
      undefined,
      undefined,
      undefined,
    ])
    await expect(
      client.request({ method: 'resources/list' }, ResourceUpdatedNotificationSchema.passthrough()),
    ).rejects.toMatchObject({ code: -32601 })
    await client.close()
    await runtime.dispose()
  })

  it('issue 23, item 2: serves lists, reads, prompts, completions, subscriptions and list_changed from the catalog', async () => {
    const log: string[] = []
    const fixed = fixedCatalog(log)
    const { client, server, runtime } = await serve({ catalog: fixed.catalog })
    expect(client.getServerCapabilities()).toMatchObject({
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
    })
    expect((await client.listResources()).resources).toEqual([{ uri: 'mem://one', name: 'one' }])
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: 'mem://t/{x}', name: 't' },
    ])
    expect(await client.readResource({ uri: 'mem://one' })).toEqual({ contents: [{ uri: 'mem://one', text: 'one' }] })
    // The source's JSON-RPC error reaches the client as it is.
    await expect(client.readResource({ uri: 'mem://two' })).rejects.toMatchObject({
      code: -32002,
      message: 'MCP error -32002: Resource mem://two not found',
    })
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['p'])
    expect(await client.getPrompt({ name: 'p', arguments: { who: 'me' } })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'p me' } }],
    })
    const completed = await client.complete({
      ref: { type: 'ref/prompt', name: 'p' },
      argument: { name: 'who', value: 'm' },
    })
    expect(completed.completion.values).toEqual(['m!'])

    const updates: string[] = []
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => void updates.push(params.uri))
    const lists: string[] = []
    client.fallbackNotificationHandler = async (n) => void lists.push(n.method)
    await client.subscribeResource({ uri: 'mem://one' })
    fixed.update('mem://one')
    await until(() => updates.length === 1)
    expect(updates).toEqual(['mem://one'])
    fixed.change('resources')
    fixed.change('resources')
    fixed.change('prompts')
    await until(() => lists.length === 2)
    expect(lists.sort()).toEqual(['notifications/prompts/list_changed', 'notifications/resources/list_changed'])
    await client.unsubscribeResource({ uri: 'mem://one' })
    expect(log).toEqual(['subscribe mem://one', 'unsubscribe mem://one true'])
    // A client that goes away releases its subscriptions and stops watching.
    await client.subscribeResource({ uri: 'mem://one' })
    await server.close()
    await until(() => log.includes('unwatch'))
    expect(log.slice(2)).toEqual(['subscribe mem://one', 'unwatch', 'unsubscribe mem://one true'])
    await runtime.dispose()
  })

  it('issue 23, item 2: declares exactly the parts given: prompts alone; resources without subscribe or watch', async () => {
    const prompts = await serve({ catalog: { prompts: { list: async () => [], get: async () => ({ messages: [] }) } } })
    expect(prompts.client.getServerCapabilities()).toMatchObject({ prompts: { listChanged: false } })
    expect(prompts.client.getServerCapabilities()?.resources).toBeUndefined()
    expect(prompts.client.getServerCapabilities()?.completions).toBeUndefined()
    await expect(
      prompts.client.complete({ ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } }),
    ).rejects.toMatchObject({ code: -32601 })
    await prompts.client.close()
    await prompts.runtime.dispose()

    const resources = await serve({
      catalog: { resources: { list: async () => [], read: async (uri) => ({ contents: [{ uri, text: '' }] }) } },
    })
    expect(resources.client.getServerCapabilities()?.resources).toEqual({ subscribe: false, listChanged: false })
    expect(resources.client.getServerCapabilities()?.prompts).toBeUndefined()
    expect((await resources.client.listResourceTemplates()).resourceTemplates).toEqual([])
    await expect(resources.client.subscribeResource({ uri: 'x://y' })).rejects.toMatchObject({ code: -32601 })
    await resources.client.close()
    await resources.runtime.dispose()
  })

  it('rejects a malformed catalog with a path-qualified error', async () => {
    await using runtime = await createToolRuntime()
    expect(() =>
      createMcpServer(runtime.ctx, {
        name: 'gw',
        version: '1',
        catalog: { resources: { list: async () => [] } } as unknown as McpServerCatalog,
      }),
    ).toThrow('createMcpServer(ctx, options).catalog.resources.read: expected a function')
  })
})
