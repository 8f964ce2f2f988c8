// Issue 35, item 4: a prompt of a 2026-07-28-only upstream that asks for input, got by a 2025-11-25
// client. The upstream answers `prompts/get` with an input-required result; toolgate turns it into
// an elicitation to the client that asked (on that request's stream), sends the answer back on the
// upstream's retry, and the client gets the prompt. Through connectMcpServer (the connection's
// handlers, or the request's own `input`) and through the built `serve --http` with an SDK v1 client.
import { type ChildProcess, spawn } from 'node:child_process'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer } from '../../src/mcp/index.js'
import { BIN, tempDir, writeConfig } from '../cli/helpers.js'
import { type ModernUpstream, startModernUpstream } from '../fixtures/modern-only-upstream.js'

const PROMPT = 'test_input_required_result_prompt'
const CONTEXT = { action: 'accept', content: { context: 'the deploy runbook' } } as const
const BUILT = [{ role: 'user', content: { type: 'text', text: 'Use this context: the deploy runbook' } }]

let upstream: ModernUpstream
let temp: { dir: string; cleanup: () => Promise<void> }
let gateway: ChildProcess | undefined
let gatewayUrl: URL

beforeAll(async () => {
  upstream = await startModernUpstream()
  temp = await tempDir()
  const config = await writeConfig(temp.dir, { files: false, servers: { modern: { url: upstream.url } } })
  gateway = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  const port = await new Promise<number>((resolve, reject) => {
    gateway?.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const match = /serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)
      if (match) resolve(Number(match[1]))
    })
    gateway?.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  gatewayUrl = new URL(`http://127.0.0.1:${port}/mcp`)
}, 120_000)

afterAll(async () => {
  if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
    const exited = new Promise((resolve) => gateway?.once('exit', resolve))
    gateway.kill('SIGTERM')
    await exited
  }
  await upstream?.close()
  await temp?.cleanup()
})

describe('connectMcpServer: prompts/get of a 2026-07-28 prompt that asks for input', () => {
  it("answers through the connection's handlers, or the request's own input handlers", async () => {
    await using runtime = await createToolRuntime()
    const asked: string[] = []
    const connection = await connectMcpServer(
      runtime.ctx,
      { url: upstream.url },
      {
        name: 'modern',
        elicitation: (params) => {
          asked.push(`connection: ${params.message}`)
          return CONTEXT
        },
      },
    )
    try {
      expect((await connection.getPrompt(PROMPT)).messages).toEqual(BUILT)
      const own = await connection.getPrompt(PROMPT, undefined, {
        input: {
          elicitation: (params, context) => {
            asked.push(`request: ${params.message}`)
            expect(context.calls).toEqual([])
            return { action: 'accept', content: { context: 'mine' } }
          },
        },
      })
      expect(own.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Use this context: mine' } }])
      expect(asked).toEqual([
        'connection: What context should the prompt use?',
        'request: What context should the prompt use?',
      ])
      // Input handlers that cannot answer: the prompt fails saying what the server needed.
      await expect(connection.getPrompt(PROMPT, undefined, { input: {} })).rejects.toThrow(
        /needs elicitation input to finish the prompt "test_input_required_result_prompt"/,
      )
    } finally {
      await connection.close()
    }
  })
})

describe('toolgate serve: a 2025 client gets a 2026-only prompt that asks for input', { timeout: 60_000 }, () => {
  async function legacyClient(capabilities: Record<string, unknown>): Promise<Client> {
    const client = new Client({ name: 'legacy-client', version: '1.0.0' }, { capabilities })
    await client.connect(new StreamableHTTPClientTransport(gatewayUrl))
    return client
  }

  it('becomes an elicitation to that client, and its answer goes back upstream', async () => {
    const client = await legacyClient({ elicitation: { form: {} } })
    const elicited: string[] = []
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(String(request.params.message))
      return CONTEXT
    })
    try {
      const { prompts } = await client.listPrompts()
      const name = prompts.map((prompt) => prompt.name).find((served) => served.endsWith(PROMPT))
      expect(name).toBeDefined()
      const before = upstream.methods.filter((method) => method === 'prompts/get').length
      const got = await client.getPrompt({ name: name as string })
      expect(got.messages).toEqual(BUILT)
      expect(elicited).toEqual(['What context should the prompt use?'])
      // The first request and its one retry with the answer.
      expect(upstream.methods.filter((method) => method === 'prompts/get').length - before).toBe(2)
    } finally {
      await client.close()
    }
  })

  it('a client that declared no elicitation gets an error that says so, not a hang', async () => {
    const client = await legacyClient({})
    try {
      const { prompts } = await client.listPrompts()
      const name = prompts.map((prompt) => prompt.name).find((served) => served.endsWith(PROMPT)) as string
      await expect(client.getPrompt({ name })).rejects.toThrow(/did not declare the elicitation capability/)
    } finally {
      await client.close()
    }
  })
})
