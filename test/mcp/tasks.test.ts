// Issue 23 item 2 (MCP tasks): a task-only upstream tool (`execution.taskSupport: 'required'`) is
// called through the gateway by a plain client, and a task-augmented `tools/call` from the client
// is answered with a task that runs on, asks its client through tasks/result, and can be cancelled.
// Real parts: SDK clients → createMcpServer → connectMcpServer → SDK McpServers with a task store.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer, createMcpRelay, createMcpServer, McpClientDirectory } from '../../src/mcp/index.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {})
})

/** An upstream with a task-only tool, a tool that asks its client, and one that waits to be cancelled. */
function upstreamServer() {
  const taskStore = new InMemoryTaskStore()
  const server = new McpServer(
    { name: 'tasker', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  )
  const state = { slowAborted: false, slowStarted: false, polls: [] as number[] }
  // Asks to be polled without pause (pollInterval 0), and finishes after its fourth poll.
  server.experimental.tasks.registerToolTask(
    'eager',
    { description: 'Task only, pollInterval 0.', inputSchema: {}, execution: { taskSupport: 'required' } },
    {
      createTask: async (_args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 0 })
        void (async () => {
          while (state.polls.length < 4) await new Promise((resolve) => setTimeout(resolve, 5))
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: 'done' }] })
        })()
        return { task }
      },
      getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId)) as never,
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  )
  server.experimental.tasks.registerToolTask(
    'research',
    { description: 'Task only.', inputSchema: { topic: z.string() }, execution: { taskSupport: 'required' } },
    {
      createTask: async ({ topic }, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 50 })
        void (async () => {
          await extra.taskStore.updateTaskStatus(task.taskId, 'working', 'Gathering sources...')
          await new Promise((resolve) => setTimeout(resolve, 100))
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', {
            content: [{ type: 'text', text: `report on ${topic}` }],
          })
        })()
        return { task }
      },
      getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId)) as never,
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  )
  server.registerTool('name', { description: 'Asks the client for a name.' }, async () => {
    const answer = await server.server.elicitInput({
      message: 'Name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    })
    return { content: [{ type: 'text', text: `hello ${String(answer.content?.name)}` }] }
  })
  server.registerTool('slow', { description: 'Waits until cancelled.' }, async (extra) => {
    state.slowStarted = true
    await new Promise<void>((resolve) => {
      extra.signal.addEventListener('abort', () => {
        state.slowAborted = true
        resolve()
      })
    })
    return { content: [{ type: 'text', text: 'stopped' }] }
  })
  return { server, state, taskStore }
}

async function gateway() {
  const runtime = await createToolRuntime()
  const directory = new McpClientDirectory()
  const relay = createMcpRelay(directory)
  const upstream = upstreamServer()
  const [near, far] = InMemoryTransport.createLinkedPair()
  await upstream.server.connect(far)
  // Every tasks/get the upstream receives, with when it came.
  const deliver = far.onmessage
  far.onmessage = (message, extra) => {
    if ('method' in message && message.method === 'tasks/get') upstream.state.polls.push(performance.now())
    deliver?.(message, extra)
  }
  const connection = await connectMcpServer(runtime.ctx, { transport: near }, { name: 'tasker', ...relay.handlers })
  cleanups.push(
    () => connection.close(),
    async () => {
      await upstream.server.close()
      upstream.taskStore.cleanup()
    },
  )
  const session = async (capabilities: Record<string, unknown> = {}) => {
    const client = new Client({ name: 'downstream', version: '1.0.0' }, { capabilities })
    if (capabilities.elicitation)
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }))
    const server = createMcpServer(runtime.ctx, { name: 'gateway', version: '1.0.0', clients: directory })
    const [c, s] = InMemoryTransport.createLinkedPair()
    await server.connect(s)
    await client.connect(c)
    cleanups.push(() => client.close())
    return client
  }
  return { session, upstream }
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0].text

describe('MCP tasks through the gateway (issue 23 item 2)', () => {
  it('an upstream task asking pollInterval 0 is polled no more often than every 100 ms (issue 36)', async () => {
    const { session, upstream } = await gateway()
    const client = await session()
    const result = await client.callTool({ name: 'eager', arguments: {} })
    expect(text(result)).toBe('done')
    const { polls } = upstream.state
    expect(polls.length).toBeGreaterThanOrEqual(4)
    // A lower bound only (timers may fire a little early, never much): the floor holds between polls.
    for (let i = 1; i < polls.length; i++) expect(polls[i] - polls[i - 1]).toBeGreaterThanOrEqual(95)
  })

  it('a task-only upstream tool works for a client that calls it plainly', async () => {
    const { session } = await gateway()
    const client = await session()
    const { tools } = await client.listTools()
    // The gateway follows the upstream task itself, so a plain call is fine: announced as optional.
    expect(tools.find((tool) => tool.name === 'research')?.execution).toEqual({ taskSupport: 'optional' })
    const progress: string[] = []
    const result = await client.callTool({ name: 'research', arguments: { topic: 'otters' } }, CallToolResultSchema, {
      onprogress: (p) => {
        if (p.message) progress.push(p.message)
      },
    })
    expect(result.isError).toBeFalsy()
    expect(text(result)).toBe('report on otters')
    expect(progress).toContain('Gathering sources...')
  })

  it('a task-augmented call from the client: a task, then its result; the tasks capability is declared', async () => {
    const { session } = await gateway()
    const client = await session({ elicitation: { form: {} } })
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } })
    const kinds: string[] = []
    let final: unknown
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'research', arguments: { topic: 'owls' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      kinds.push(message.type)
      if (message.type === 'result') final = message.result
      if (message.type === 'error') throw message.error
    }
    expect(kinds[0]).toBe('taskCreated')
    expect(kinds.at(-1)).toBe('result')
    expect(text(final ?? {})).toBe('report on owls')
    expect((await client.experimental.tasks.listTasks()).tasks.map((task) => task.status)).toEqual(['completed'])
  })

  it("the session's own task store (issue 35, item 1): unknown and finished tasks are refused with -32602", async () => {
    const { session } = await gateway()
    const client = await session()
    await expect(client.experimental.tasks.getTask('no-such-task')).rejects.toMatchObject({ code: -32602 })
    await expect(client.experimental.tasks.cancelTask('no-such-task')).rejects.toMatchObject({ code: -32602 })
    let taskId = ''
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'research', arguments: { topic: 'bats' } },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId
      if (message.type === 'error') throw message.error
    }
    const task = await client.experimental.tasks.getTask(taskId)
    expect(task).toMatchObject({ taskId, status: 'completed', ttl: null })
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 })
    // The result is kept for another tasks/result, tied to its task.
    const again = await client.request(
      { method: 'tasks/result', params: { taskId } },
      z.object({ content: z.array(z.unknown()), _meta: z.record(z.string(), z.unknown()) }).passthrough() as never,
    )
    expect(text(again as never)).toBe('report on bats')
    expect((again as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/related-task']).toEqual({
      taskId,
    })
  })

  it("a task's request to its client (an upstream's elicitation) is delivered through tasks/result", async () => {
    const { session } = await gateway()
    const client = await session({ elicitation: { form: {} } })
    let final: unknown
    for await (const message of client.experimental.tasks.callToolStream({ name: 'name', arguments: {} }, undefined, {
      task: {},
    })) {
      if (message.type === 'result') final = message.result
      if (message.type === 'error') throw message.error
    }
    expect(text(final ?? {})).toBe('hello Ada')
  })

  it('tasks/cancel aborts the running call, and the upstream call with it', async () => {
    const { session, upstream } = await gateway()
    const client = await session()
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow', arguments: {}, task: {} } },
      // The answer to a task-augmented call is the task.
      z.object({ task: z.object({ taskId: z.string(), status: z.string() }) }).passthrough() as never,
    )
    const { taskId } = (created as unknown as { task: { taskId: string } }).task
    // Cancelled once the upstream has the call (a cancel before that never reaches the upstream).
    await expect.poll(() => upstream.state.slowStarted, { timeout: 10_000 }).toBe(true)
    await client.experimental.tasks.cancelTask(taskId)
    await expect.poll(() => upstream.state.slowAborted, { timeout: 10_000 }).toBe(true)
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled')
  })
})
