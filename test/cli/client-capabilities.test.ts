// Issue 23 item 1: over stdio `toolgate serve` has one client for its whole life and declares to
// its upstreams exactly the client capabilities that client declared (of sampling, elicitation and
// roots), so an upstream offers that client what it would offer it directly: a client declaring
// nothing sees server-everything's tools as it does directly (none of the tools that need a
// capability), a capable client sees those tools and gets the upstream's requests.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Connected, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const ASKER = path.resolve(import.meta.dirname, '../fixtures/capability-server.mjs')
const EVERYTHING = path.resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
)
/** The server-everything tools it registers only for a client with roots, elicitation or sampling. */
const CAPABLE_ONLY = [
  'get-roots-list',
  'trigger-elicitation-request',
  'trigger-url-elicitation',
  'trigger-sampling-request',
]
/** A loaded machine may take its time: each wait is for an event, bounded by this. */
const BOUND_MS = 60_000

let dir: string
let cleanup: () => Promise<void>
let config: string
const open: Connected[] = []
beforeAll(async () => {
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

async function serve(capabilities: Record<string, unknown>): Promise<Connected> {
  const s = await serveStdio(['--config', config], capabilities)
  open.push(s)
  return s
}

/** The client capabilities the asker upstream was declared, as it reports them. */
async function upstreamSaw(client: Client): Promise<unknown> {
  const result = await client.callTool({ name: 'asker__ask', arguments: { kind: 'roots' } })
  return (JSON.parse(textOf(result)) as { capabilities: unknown }).capabilities
}

/** server-everything's tools as the gateway serves them, without the prefix. */
async function everythingTools(client: Client): Promise<string[]> {
  const { tools } = await client.listTools()
  return tools
    .map((tool) => tool.name)
    .filter((name) => name.startsWith('everything__'))
    .map((name) => name.slice('everything__'.length))
    .sort()
}

describe('toolgate serve over stdio declares upstream exactly what its client declared (issue 23 item 1)', () => {
  it('a client declaring nothing: the upstream is declared nothing and serves the tools it serves directly', {
    timeout: 2 * BOUND_MS,
  }, async () => {
    const direct = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: {} })
    await direct.connect(
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
    )
    let directNames: string[]
    try {
      directNames = (await direct.listTools()).tools.map((tool) => tool.name).sort()
    } finally {
      await direct.close()
    }
    expect(directNames).toContain('echo')
    for (const name of CAPABLE_ONLY) expect(directNames).not.toContain(name)

    const s = await serve({})
    expect(await upstreamSaw(s.client)).toEqual({})
    expect(await everythingTools(s.client)).toEqual(directNames)
  })

  it('a client declaring roots, sampling and both elicitation modes: exactly those upstream, their tools served, a roots/list relayed', {
    timeout: 2 * BOUND_MS,
  }, async () => {
    const capabilities = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } }
    const s = await serve(capabilities)
    s.client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///mine', name: 'mine' }] }))
    expect(await upstreamSaw(s.client)).toEqual(capabilities)
    // server-everything registers them once initialized and says so; the gateway lists again.
    await vi.waitFor(
      async () => {
        const names = await everythingTools(s.client)
        for (const name of CAPABLE_ONLY) expect(names).toContain(name)
      },
      { timeout: BOUND_MS, interval: 50 },
    )
    const roots = await s.client.callTool({ name: 'everything__get-roots-list', arguments: {} })
    expect(textOf(roots)).toContain('file:///mine')
  })

  it('a bare elicitation is form mode only; sampling tools are passed on; roots are declared with listChanged', {
    timeout: BOUND_MS,
  }, async () => {
    const s = await serve({ elicitation: {}, sampling: { tools: {} }, roots: {} })
    // The gateway itself says when the roots become available (its client's session opens).
    expect(await upstreamSaw(s.client)).toEqual({
      elicitation: { form: {} },
      sampling: { tools: {} },
      roots: { listChanged: true },
    })
  })
})
