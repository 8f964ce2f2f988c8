// How connectMcpServer follows `notifications/*/list_changed` (issue 23, item 2 "list_changed for
// tools, resources and prompts (re-list, then notify the client)"): a burst of notifications (a server
// registering its tools one by one) is listed once or twice, not once per notification, and an older
// listing that is answered after a newer one never undoes it.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it, vi } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer } from '../../src/mcp/index.js'

/** A low-level server whose tool list the test sets, counting the listings it answers. */
function upstream() {
  const server = new Server(
    { name: 'burst', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, resources: { listChanged: true } } },
  )
  const state = {
    names: ['t0'],
    /** The output schema every listed tool declares, if any. */
    output: undefined as Record<string, unknown> | undefined,
    toolListings: 0,
    resourceListings: 0,
    /** When set, the answer to the next tools/list is held until this promise settles. */
    holdNext: undefined as Promise<void> | undefined,
  }
  const listed = (names: readonly string[]): ListToolsResult => ({
    tools: names.map((name) => ({
      name,
      inputSchema: { type: 'object' as const },
      ...(state.output ? { outputSchema: { type: 'object' as const, ...state.output } } : {}),
    })),
  })
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    state.toolListings++
    // The answer is what the list is now, sent when the hold ends: a stale answer arriving late.
    const answer = listed(state.names)
    const hold = state.holdNext
    state.holdNext = undefined
    if (hold !== undefined) await hold
    return answer
  })
  server.setRequestHandler(CallToolRequestSchema, async () => ({
    content: [{ type: 'text', text: 'called' }],
    structuredContent: { s: 'text' },
  }))
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    state.resourceListings++
    return { resources: [{ uri: `mem://r${state.resourceListings}`, name: 'r' }] }
  })
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }))
  const [client, serverSide] = InMemoryTransport.createLinkedPair()
  return { server, state, transport: client, connect: () => server.connect(serverSide) }
}

describe('list_changed bursts', () => {
  it('twenty tools/list_changed in a row are listed at most twice, and the registrations end as the last list', async () => {
    const { ctx, tools } = await createToolRuntime()
    const up = upstream()
    await up.connect()
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'm_' })
    expect(connection.tools).toEqual(['m_t0'])
    expect(up.state.toolListings).toBe(1)
    for (let i = 1; i <= 20; i++) {
      up.state.names = Array.from({ length: i + 1 }, (_, k) => `t${k}`)
      await up.server.sendToolListChanged()
    }
    await vi.waitFor(() => expect(tools.get('m_t20')).toBeDefined(), { timeout: 30_000 })
    // One more, made after the burst was followed: it starts after every notification was handled.
    await connection.refresh()
    expect(connection.tools).toEqual(Array.from({ length: 21 }, (_, k) => `m_t${k}`))
    // The first listing, at most two for the burst (one may already be on its way when more come),
    // and the explicit refresh.
    expect(up.state.toolListings).toBeLessThanOrEqual(4)
    // A tools/list_changed lists the tools alone; resources were listed once, at the start.
    expect(up.state.resourceListings).toBe(2)
    await connection.close()
  })

  it('a burst of resources/list_changed lists the resources at most twice more', async () => {
    const { ctx } = await createToolRuntime()
    const up = upstream()
    await up.connect()
    const changed: string[] = []
    const connection = await connectMcpServer(
      ctx,
      { transport: up.transport },
      { prefix: 'm_', onListChanged: (kind) => changed.push(kind) },
    )
    const before = up.state.resourceListings
    for (let i = 0; i < 20; i++) await up.server.sendResourceListChanged()
    await vi.waitFor(() => expect(changed).toContain('resources'), { timeout: 30_000 })
    await connection.refresh()
    // Each listing answers a new URI (r1, r2, …), so every listing is seen as a change.
    expect(up.state.resourceListings - before).toBeLessThanOrEqual(3)
    expect(up.state.toolListings).toBe(2)
    await connection.close()
  })

  it('an older listing answered after a newer one does not undo it', async () => {
    const { ctx, tools } = await createToolRuntime()
    const up = upstream()
    await up.connect()
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'm_' })
    // The listing that follows the next change is answered only after the one that follows the change
    // after it: its answer (["old"]) arrives last.
    let release!: () => void
    up.state.holdNext = new Promise<void>((resolve) => {
      release = resolve
    })
    up.state.names = ['old']
    await up.server.sendToolListChanged()
    await vi.waitFor(() => expect(up.state.toolListings).toBe(2), { timeout: 30_000 })
    up.state.names = ['new']
    await up.server.sendToolListChanged()
    await vi.waitFor(() => expect(tools.get('m_new')).toBeDefined(), { timeout: 30_000 })
    release()
    // The in-memory transport delivers in microtasks: after a few turns of the event loop the held
    // answer has been read and handled.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
    expect(connection.tools).toEqual(['m_new'])
    expect(tools.get('m_old')).toBeUndefined()
    await connection.refresh()
    expect(connection.tools).toEqual(['m_new'])
    expect(up.state.toolListings).toBe(4)
    await connection.close()
  })

  it('a call is checked against the output schema of the newest listing, even when an older answer arrives last', async () => {
    const { ctx, tools } = await createToolRuntime()
    const up = await (async () => {
      const made = upstream()
      made.state.names = ['x']
      await made.connect()
      return made
    })()
    const connection = await connectMcpServer(ctx, { transport: up.transport }, { prefix: 'm_' })
    let release!: () => void
    up.state.holdNext = new Promise<void>((resolve) => {
      release = resolve
    })
    // The older listing says x returns { n: number }; the newer one says it declares no output schema.
    up.state.output = { properties: { n: { type: 'number' } }, required: ['n'] }
    await up.server.sendToolListChanged()
    await vi.waitFor(() => expect(up.state.toolListings).toBe(2), { timeout: 30_000 })
    up.state.output = undefined
    await up.server.sendToolListChanged()
    await vi.waitFor(() => expect(up.state.toolListings).toBe(3), { timeout: 30_000 })
    release()
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
    const result = await tools.execute({
      callId: 'c1',
      name: 'm_x',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.error?.message).toBeUndefined()
    expect(result).toMatchObject({ isError: false, value: { structuredContent: { s: 'text' } } })
    await connection.close()
  })
})
