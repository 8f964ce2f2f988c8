// Who answers an `ask` of a call made over MCP (issue 23 keeps the per-call lookup cheap): the
// host's approval service whenever the context has one at the time of the call, else the client
// (which here cannot be asked). The service is looked up on every call, so one plugged in or
// removed after the server was created counts from the next call on.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import { CallbackApproval, createToolRuntime, defineTool } from '../../src/index.js'
import { createMcpServer } from '../../src/mcp/index.js'

describe('approval of calls made over MCP', () => {
  it('issue 23, Performance: a host approval service plugged in (or removed) after the server was made decides the next call', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(
      defineTool({
        name: 'guarded',
        description: 'Needs approval.',
        parameters: {},
        needsApproval: true,
        output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
        execute: async () => 'done',
      }),
    )
    const server = createMcpServer(ctx, { name: 't', version: '1.0.0' })
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(b)
    const client = new Client({ name: 'c', version: '1.0.0' })
    await client.connect(a)
    const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
      (result.content as Array<{ type: string; text?: string }>).map((block) => block.text ?? '').join('\n')

    const before = await client.callTool({ name: 'guarded', arguments: {} })
    expect(before.isError).toBe(true)
    expect(text(before)).toMatch(/did not declare the elicitation capability/)

    const fork = ctx.plugin(CallbackApproval, { decide: () => ({ kind: 'allowed-once' }) })
    await fork
    const approved = await client.callTool({ name: 'guarded', arguments: {} })
    expect(approved.isError).toBeFalsy()
    expect(text(approved)).toBe('done')

    await fork.dispose()
    const after = await client.callTool({ name: 'guarded', arguments: {} })
    expect(after.isError).toBe(true)
    expect(text(after)).toMatch(/did not declare the elicitation capability/)
    await client.close()
  })
})
