// connectMcpServer's naming and reconnecting (issue 23, item 5): messages name the server by
// `name` (or a default without arguments), never by its command line, arguments or environment;
// with `reconnect` a server that is down resolves as `down`, is retried with bounded backoff, and
// its tools are registered once it answers; a skipped tool goes to `onToolSkipped` when given.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { reconnectDelay } from '../../src/mcp/client/client.js'
import { connectMcpServer, type McpConnectionState, McpToolError } from '../../src/mcp/index.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const GHOST = '/nonexistent/secret-dir/mcp-server'
const SECRET = 'sk-secret-argument'
const BOUND_MS = 90_000

const warnings: string[] = []
const onWarning = (warning: Error) => {
  if (warning.name === 'McpConnectionWarning') warnings.push(warning.message)
}
process.on('warning', onWarning)
afterEach(() => {
  warnings.length = 0
})

describe('naming the server in messages', () => {
  it('issue 23, item 5: a failed start names the server by `name`, or by the command file name, and shows no arguments', async () => {
    await using runtime = await createToolRuntime()
    const spec = { command: GHOST, args: ['--key', SECRET], env: { TOKEN: 'hunter2-environment' } }
    const named = await connectMcpServer(runtime.ctx, spec, { name: 'ghost' }).catch((error: unknown) => error)
    expect(named).toBeInstanceOf(McpToolError)
    expect((named as Error).message).toBe('MCP server "ghost" did not start: its command could not be run (ENOENT)')
    const unnamed = await connectMcpServer(runtime.ctx, spec).catch((error: unknown) => error)
    expect((unnamed as Error).message).toBe(
      'MCP server "mcp-server" did not start: its command could not be run (ENOENT)',
    )
    const dead = await connectMcpServer(runtime.ctx, {
      command: process.execPath,
      args: [UPSTREAM, '--down-while', UPSTREAM, SECRET],
    }).catch((error: unknown) => error)
    expect((dead as Error).message).toMatch(/^MCP server "node" did not start: /)
    for (const error of [named, unnamed, dead])
      for (const secret of [GHOST, 'secret-dir', SECRET, 'hunter2', UPSTREAM])
        expect((error as Error).message).not.toContain(secret)
  })

  it('issue 23, item 5: a URL server is named without its credentials or query', async () => {
    await using runtime = await createToolRuntime()
    const error = await connectMcpServer(runtime.ctx, {
      url: 'http://user:pa55word@127.0.0.1:9/mcp?token=s3cr3t-query',
      headers: { authorization: 'Bearer header-secret' },
    }).catch((e: unknown) => e)
    expect((error as Error).message).toMatch(/^MCP server "http:\/\/127\.0\.0\.1:9\/mcp" did not start: /)
    for (const secret of ['pa55word', 's3cr3t-query', 'header-secret'])
      expect((error as Error).message).not.toContain(secret)
  })
})

describe('reconnect', () => {
  it('issue 23, item 5: the delay doubles from the initial one up to the maximum, jittered between half and all of it', () => {
    const options = { initialDelayMs: 1000, maxDelayMs: 60_000 }
    for (let attempt = 0; attempt < 100; attempt++) {
      const full = Math.min(60_000, 1000 * 2 ** attempt)
      const delay = reconnectDelay(attempt, options)
      expect(delay).toBeGreaterThanOrEqual(full / 2)
      expect(delay).toBeLessThanOrEqual(full)
    }
  })

  it('issue 23, item 5: a server that is down resolves as down, and its tools are registered once it comes up', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-reconnect-'))
    try {
      const flag = path.join(dir, 'down')
      await writeFile(flag, '')
      await using runtime = await createToolRuntime()
      const states: McpConnectionState[] = []
      let up!: () => void
      const cameUp = new Promise<void>((resolve) => {
        up = resolve
      })
      const connection = await connectMcpServer(
        runtime.ctx,
        { command: process.execPath, args: [UPSTREAM, '--down-while', flag] },
        {
          name: 'flaky',
          prefix: 'f__',
          reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
          onStateChange: (state) => {
            states.push(state)
            if (state.status === 'connected') up()
          },
        },
      )
      expect(connection.state).toMatchObject({
        status: 'down',
        error: expect.stringMatching(/^MCP server "flaky" did not start/),
      })
      expect(connection.tools).toEqual([])
      expect(runtime.tools.get('f__echo')).toBeUndefined()
      await rm(flag)
      await Promise.race([
        cameUp,
        new Promise((_, reject) => setTimeout(() => reject(new Error('never came up')), BOUND_MS)),
      ])
      expect(connection.state).toEqual({ status: 'connected' })
      expect(connection.tools).toContain('f__echo')
      const echo = await runtime.tools.execute({
        callId: 'c1',
        name: 'f__echo',
        arguments: { text: 'back' },
        signal: new AbortController().signal,
      })
      expect(echo).toMatchObject({ isError: false, content: [{ type: 'text', text: 'echo: back' }] })
      expect(states[0]?.status).toBe('down')
      for (const state of states.slice(0, -1)) {
        expect(state.status).toBe('down')
        expect((state as { retryInMs: number }).retryInMs).toBeLessThanOrEqual(200)
      }
      // onStateChange was given, so the outage is not also a process warning.
      expect(warnings).toEqual([])
      await connection.close()
      expect(connection.state).toEqual({ status: 'closed' })
      expect(runtime.tools.get('f__echo')).toBeUndefined()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('issue 23, item 5: without onStateChange an outage is an McpConnectionWarning; a bad reconnect option is a ConfigError', async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(runtime.ctx, { command: GHOST, args: [SECRET] }, { reconnect: true })
    try {
      expect(connection.state.status).toBe('down')
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).toEqual([
        expect.stringMatching(
          /^MCP server "mcp-server" did not start: .*\(its tools are unregistered; retrying in 1 s\)$/,
        ),
      ])
      expect(warnings[0]).not.toContain(SECRET)
    } finally {
      await connection.close()
    }
    await expect(
      connectMcpServer(runtime.ctx, { command: GHOST }, { reconnect: { initialDelayMs: 100, maxDelayMs: 10 } }),
    ).rejects.toThrow(/\.reconnect\.maxDelayMs: expected at least initialDelayMs/)
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const [transport] = InMemoryTransport.createLinkedPair()
    await expect(connectMcpServer(runtime.ctx, { transport }, { reconnect: true })).rejects.toThrow(
      /\.reconnect: a given transport cannot be reopened/,
    )
  })

  it('issue 23, item 4: onToolSkipped receives a tool whose name is taken, instead of a warning', async () => {
    await using runtime = await createToolRuntime()
    runtime.tools.register({
      name: 'up__echo',
      description: 'Mine.',
      parameters: { type: 'object' },
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      execute: async () => 'mine',
    })
    const skipped: unknown[] = []
    const connection = await connectMcpServer(
      runtime.ctx,
      { command: process.execPath, args: [UPSTREAM] },
      { prefix: 'up__', onToolSkipped: (skip) => skipped.push(skip) },
    )
    try {
      expect(connection.tools).not.toContain('up__echo')
      expect(connection.tools).toContain('up__pid')
      expect(skipped).toEqual([
        { tool: 'echo', name: 'up__echo', reason: expect.stringMatching(/"up__echo" is already registered/) },
      ])
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).toEqual([])
    } finally {
      await connection.close()
    }
  })
})
