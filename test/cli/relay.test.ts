// `toolgate serve` relays what its upstreams ask their client (issue 23 items 1 and 2), through
// the built CLI: sampling, elicitation and roots reach the client that made the call over stdio
// and Streamable HTTP (two sessions each get their own), a client without the capability makes
// the upstream get a clear error, and server-everything's task-only `simulate-research-query`
// works, with its clarifying elicitation relayed, plainly and as a task-augmented call.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveHttp, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const ASKER = path.resolve(import.meta.dirname, '../fixtures/capability-server.mjs')
const EVERYTHING = path.resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
)
const METHOD_NOT_FOUND = -32601
// The research tool takes four one-second stages.
const RESEARCH_MS = 60_000

let cleanup: () => Promise<void>
let config: string
const open: Connected[] = []
beforeAll(async () => {
  let dir: string
  ;({ dir, cleanup } = await tempDir())
  config = await writeConfig(dir, {
    root: '.',
    servers: {
      asker: { command: process.execPath, args: [ASKER] },
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    },
  })
})
afterAll(async () => {
  for (const connected of open) await connected.close().catch(() => {})
  await cleanup()
})

const ALL = { sampling: {}, elicitation: { form: {} }, roots: {} }

/** Answer each kind of request with something that names this client. */
function answer(client: Client, who: string): void {
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: `hi from ${who}` },
    model: who,
  }))
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const properties = (request.params as { requestedSchema?: { properties?: Record<string, unknown> } })
      .requestedSchema?.properties
    if (properties && 'interpretation' in properties)
      return { action: 'accept', content: { interpretation: 'historical' } }
    return { action: 'accept', content: { name: who } }
  })
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: `file:///${who}`, name: who }] }))
}

async function ask(client: Client, kind: 'sample' | 'elicit' | 'roots') {
  const result = await client.callTool({ name: 'asker__ask', arguments: { kind } })
  return JSON.parse(textOf(result)) as {
    capabilities: unknown
    result?: Record<string, unknown>
    error?: { code: number; message: string }
  }
}

describe('toolgate serve relays sampling, elicitation and roots (issue 23 item 1)', () => {
  it('over stdio: each request reaches the client and its answer the upstream', async () => {
    const s = await serveStdio(['--config', config], ALL)
    open.push(s)
    answer(s.client, 'stdio-client')
    expect((await ask(s.client, 'sample')).result).toMatchObject({ model: 'stdio-client' })
    expect((await ask(s.client, 'elicit')).result).toMatchObject({
      action: 'accept',
      content: { name: 'stdio-client' },
    })
    expect((await ask(s.client, 'roots')).result).toEqual({
      roots: [{ uri: 'file:///stdio-client', name: 'stdio-client' }],
    })
  })

  it('over stdio, a client without the capability: the upstream is not declared it, and its request is not found', async () => {
    const s = await serveStdio(['--config', config], {})
    open.push(s)
    const { capabilities, error } = await ask(s.client, 'sample')
    // The gateway declares upstream only what its one client declared (see client-capabilities.test.ts).
    expect(capabilities).toEqual({})
    expect(error?.code).toBe(METHOD_NOT_FOUND)
  })

  it('over Streamable HTTP, a client without the capability: the upstream gets a clear method-not-found', async () => {
    const h = await serveHttp(['--config', config], {})
    open.push(h)
    const { capabilities, error } = await ask(h.client, 'sample')
    // Upstream sessions are shared by clients that come and go: everything relayed is declared.
    expect(capabilities).toMatchObject({ sampling: {}, roots: { listChanged: true } })
    expect(error).toEqual({
      code: METHOD_NOT_FOUND,
      message: expect.stringContaining('the MCP client that made this call did not declare the sampling capability'),
    })
  })

  it('over Streamable HTTP: two sessions each get their own requests', async () => {
    const first = await serveHttp(['--config', config], ALL)
    open.push(first)
    answer(first.client, 'first')
    const second = new Client({ name: 'second', version: '1.0.0' }, { capabilities: ALL })
    answer(second, 'second')
    await second.connect(new StreamableHTTPClientTransport(new URL(first.url ?? '')))
    try {
      for (let round = 0; round < 2; round++) {
        expect((await ask(first.client, 'sample')).result).toMatchObject({ model: 'first' })
        expect((await ask(second, 'sample')).result).toMatchObject({ model: 'second' })
        expect((await ask(second, 'elicit')).result).toMatchObject({ content: { name: 'second' } })
        expect((await ask(first.client, 'roots')).result).toMatchObject({ roots: [{ name: 'first' }] })
      }
    } finally {
      await second.close()
    }
  })
})

// The two cases run at once, each with its own gateway: each waits out the research tool's stages.
describe.concurrent("server-everything's task-only simulate-research-query through toolgate serve (issue 23 item 2)", () => {
  it(
    'over stdio, a plain call: the gateway follows the task and relays its clarifying elicitation',
    async ({ expect }) => {
      const s = await serveStdio(['--config', config], ALL)
      open.push(s)
      answer(s.client, 'stdio-client')
      const result = await s.client.callTool(
        { name: 'everything__simulate-research-query', arguments: { topic: 'rome', ambiguous: true } },
        CallToolResultSchema,
        { timeout: RESEARCH_MS },
      )
      expect(result.isError).toBeFalsy()
      const report = textOf(result)
      expect(report).toMatch(/# Research Report: rome \(historical\)/)
      expect(report).toMatch(/Clarification\*\*: historical/)
    },
    RESEARCH_MS,
  )

  it(
    'over Streamable HTTP, a task-augmented call: the elicitation comes through tasks/result',
    async ({ expect }) => {
      const h = await serveHttp(['--config', config], ALL)
      open.push(h)
      answer(h.client, 'http-client')
      const kinds: string[] = []
      let final: unknown
      for await (const message of h.client.experimental.tasks.callToolStream(
        { name: 'everything__simulate-research-query', arguments: { topic: 'rome', ambiguous: true } },
        CallToolResultSchema,
        { task: {}, timeout: RESEARCH_MS },
      )) {
        kinds.push(message.type)
        if (message.type === 'result') final = message.result
        if (message.type === 'error') throw message.error
      }
      expect(kinds[0]).toBe('taskCreated')
      expect(textOf(final as object)).toMatch(/# Research Report: rome \(historical\)/)
    },
    RESEARCH_MS,
  )
})
