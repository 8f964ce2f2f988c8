// Upstreams of either era (issue 35, items 3 and 4): an upstream that speaks only MCP 2026-07-28
// answers 2025's initialize with -32022; toolgate then speaks 2026-07-28 to it (SDK v2 client) and
// serves its tools to 2025 clients, its input-required results turned into the matching requests
// to the client that made the call. A 2025 upstream is still spoken to in 2025-11-25.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer } from '../../src/mcp/index.js'
import { BIN, runCli, tempDir, textOf, writeConfig } from '../cli/helpers.js'
import { type ModernUpstream, startModernUpstream } from '../fixtures/modern-only-upstream.js'

const MODERN_STDIO = path.resolve(import.meta.dirname, '../fixtures/modern-only-stdio.ts')
const REPO = path.resolve(import.meta.dirname, '../..')
const LEGACY_UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const DIST_MCP = path.resolve(import.meta.dirname, '../../dist/mcp/index.js')

const call = (name: string, args: unknown = {}) => ({
  callId: `c-${name}`,
  name,
  arguments: args,
  signal: new AbortController().signal,
})

let upstream: ModernUpstream
let dir: string
let cleanup: () => Promise<void>
let config: string

beforeAll(async () => {
  upstream = await startModernUpstream()
  ;({ dir, cleanup } = await tempDir())
  config = await writeConfig(dir, { files: false, servers: { modern: { url: upstream.url } } })
})

afterAll(async () => {
  await upstream?.close()
  await cleanup?.()
})

describe('connectMcpServer to a 2026-07-28-only upstream', () => {
  it('speaks 2026-07-28 to it: lists and calls its tools, answers its input requests through the handlers', async () => {
    await using runtime = await createToolRuntime()
    const asked: string[] = []
    const connection = await connectMcpServer(
      runtime.ctx,
      { url: upstream.url },
      {
        prefix: 'm_',
        name: 'modern',
        elicitation: (params, context) => {
          asked.push(params.message)
          expect(context.calls).toHaveLength(1)
          return { action: 'accept', content: { name: 'Ada', color: 'blue' } }
        },
      },
    )
    expect(connection.features.protocolVersion).toBe('2026-07-28')
    expect(connection.tools).toContain('m_test_simple_text')
    expect(connection.prompts.map((prompt) => prompt.name)).toContain('test_input_required_result_prompt')
    const simple = await runtime.tools.execute(call('m_test_simple_text'))
    expect(simple).toMatchObject({ isError: false, value: { content: [{ type: 'text' }] } })
    // Two rounds, each with its own sealed requestState, which must come back unchanged.
    const rounds = await runtime.tools.execute(call('m_test_input_required_result_multi_round'))
    expect(rounds).toMatchObject({
      isError: false,
      value: { content: [{ type: 'text', text: "Ada's favorite color is blue" }] },
    })
    expect(asked).toEqual(['Step 1: What is your name?', 'Step 2: What is your favorite color?'])
    expect(upstream.methods).toContain('server/discover')
    await connection.close()
  })

  it('a call that needs input no handler answers fails with an error that says so', async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(runtime.ctx, { url: upstream.url }, { prefix: 'm_', name: 'modern' })
    // The server asks for a sample whatever the client declared.
    const result = await runtime.tools.execute(call('m_test_missing_capability'))
    expect(result.isError).toBe(true)
    expect(result.error?.message).toMatch(/MCP server "modern"/)
    await connection.close()
  })
})

describe('connectMcpServer to a 2026-07-28-only stdio upstream', () => {
  it('spawns it again in 2026-07-28 once it refused 2025-11-25, and calls through it', async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(
      runtime.ctx,
      { command: process.execPath, args: ['--import', 'tsx', MODERN_STDIO], cwd: REPO },
      {
        prefix: 's_',
        name: 'modern-stdio',
        elicitation: () => ({ action: 'accept', content: { name: 'Lin' } }),
      },
    )
    expect(connection.features.protocolVersion).toBe('2026-07-28')
    const hello = await runtime.tools.execute(call('s_test_input_required_result_elicitation'))
    expect(hello).toMatchObject({ isError: false, value: { content: [{ type: 'text', text: 'Hello, Lin!' }] } })
    await connection.close()
    // Two spawns of a TypeScript fixture through tsx: generous for a loaded machine.
  }, 120_000)
})

describe('a 2025-11-25 upstream', () => {
  it('is still spoken to in 2025-11-25, and the 2026-07-28 session is never loaded for it', async () => {
    // In a process of its own, which records every module it loads.
    const script = `
      import { registerHooks } from 'node:module'
      const loaded = []
      registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context) } })
      const { createToolRuntime } = await import(${JSON.stringify(path.resolve(DIST_MCP, '../../index.js'))})
      const { connectMcpServer } = await import(${JSON.stringify(DIST_MCP)})
      const runtime = await createToolRuntime()
      const connection = await connectMcpServer(runtime.ctx, { command: process.execPath, args: [${JSON.stringify(LEGACY_UPSTREAM)}] })
      const out = { protocolVersion: connection.features.protocolVersion, tools: connection.tools.length,
        modern: loaded.filter((url) => /modern-session\\.js$/.test(url)).length }
      await connection.close()
      console.log(JSON.stringify(out))
      process.exit(0)
    `
    const output = await new Promise<string>((resolve, reject) => {
      // module.registerHooks (synchronous, in-thread) needs Node 22.15+; the machines run Node 20.
      const node22 = fileURLToPath(new URL('../../node_modules/node22/bin/node', import.meta.url))
      const child = spawn(node22, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString()
      })
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      child.once('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))))
    })
    const report = JSON.parse(output.trim().split('\n').pop() ?? '{}')
    expect(report.protocolVersion).toBe('2025-11-25')
    expect(report.tools).toBeGreaterThan(0)
    // The SDK v2 Client serves 2025-11-25 sessions too; only the 2026 session's module stays unloaded.
    expect(report.modern).toBe(0)
  })
})

describe('toolgate serve in front of a 2026-07-28-only upstream, for a 2025 client', () => {
  it('serve --check reports the upstream as MCP 2026-07-28', async () => {
    const check = await runCli(['serve', '--check', '--config', config])
    expect(check.stdout).toMatch(/^servers\.modern: connected, \d+ tools, MCP 2026-07-28\n/)
    expect(check.code).toBe(0)
  }, 60_000)

  it('lists and calls its tools; its input-required results become requests to the client; the results return', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      let err = ''
      const port = await new Promise<number>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          err += chunk.toString()
          const match = /serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)
          if (match) resolve(Number(match[1]))
        })
        child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
      })
      const url = new URL(`http://127.0.0.1:${port}/mcp`)
      const client = new Client(
        { name: 'legacy-client', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
      )
      const elicited: string[] = []
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        elicited.push(String(request.params.message))
        return { action: 'accept', content: { name: 'Grace', color: 'green', ok: true } }
      })
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: 'assistant',
        content: { type: 'text', text: 'Paris' },
        model: 'test-model',
      }))
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }))
      await client.connect(new StreamableHTTPClientTransport(url))
      try {
        const { tools } = await client.listTools()
        const names = tools.map((tool) => tool.name)
        expect(names).toContain('modern__test_simple_text')
        expect(names).toContain('modern__test_input_required_result_elicitation')

        const simple = await client.callTool({ name: 'modern__test_simple_text', arguments: {} })
        expect(simple.isError).toBeFalsy()
        // The upstream's progress notifications reach the client as the call's progress.
        const progress: unknown[] = []
        const progressed = await client.callTool(
          { name: 'modern__test_tool_with_progress', arguments: {} },
          undefined,
          { onprogress: (update) => progress.push(update) },
        )
        expect(textOf(progressed)).toBe('Progress tool completed')
        expect(progress.length).toBeGreaterThan(0)

        const hello = await client.callTool({ name: 'modern__test_input_required_result_elicitation', arguments: {} })
        expect(textOf(hello)).toBe('Hello, Grace!')
        expect(elicited).toEqual(['What is your name?'])

        const sampled = await client.callTool({ name: 'modern__test_input_required_result_sampling', arguments: {} })
        expect(textOf(sampled)).toBe('The model answered: Paris')
        const roots = await client.callTool({ name: 'modern__test_input_required_result_list_roots', arguments: {} })
        expect(textOf(roots)).toBe('Client roots: file:///work')

        // Sealed state, carried over two rounds.
        const rounds = await client.callTool({ name: 'modern__test_input_required_result_multi_round', arguments: {} })
        expect(textOf(rounds)).toBe("Grace's favorite color is green")
        const state = await client.callTool({ name: 'modern__test_input_required_result_request_state', arguments: {} })
        expect(textOf(state)).toBe('state-ok: confirmation accept')
      } finally {
        await client.close()
      }

      // A client that declared no elicitation gets an error result, not a hang.
      const bare = new Client({ name: 'bare-client', version: '1.0.0' }, { capabilities: {} })
      await bare.connect(new StreamableHTTPClientTransport(url))
      try {
        const refused = await bare.callTool({ name: 'modern__test_input_required_result_elicitation', arguments: {} })
        expect(refused.isError).toBe(true)
        expect(textOf(refused)).toMatch(/did not declare the elicitation capability/)
      } finally {
        await bare.close()
      }
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  }, 60_000)
})
