// Identity-aware policy over prompts and resources (issue 24 item 2): a caller's `policy.rules`
// address them with the same `prompt:` and `resource:` globs as the top-level lists, on top of the
// top-level policy; a deny wins, an identity no rule names sees none of them, asks go to its client.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import { ElicitRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PolicyConfig } from '../../src/gateway/config.js'
import { type Gateway, openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { identityOf } from '../../src/mcp/protocol/identity.js'
import { createMcpServer } from '../../src/mcp/server/server.js'
import { tempDir } from './helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/catalog-mcp-server.mjs')

const POLICY: PolicyConfig = {
  // For everyone: the logo is never served.
  deny: ['resource:note://a/logo'],
  rules: [
    { who: { group: ['admin'] }, allow: ['*'] },
    // Developers: the readme and the greet prompt, asked before each read; never the items.
    {
      who: { group: ['dev'] },
      allow: ['resource:note://a/*', 'prompt:cat__greet'],
      deny: ['resource:note://a/items/*'],
      ask: ['resource:note://a/readme'],
    },
  ],
}

function auth(subject: string, groups: string[]): AuthInfo {
  return { token: `token-of-${subject}`, clientId: subject, scopes: [], extra: { subject, groups } }
}

let cleanup: () => Promise<void>
let gateway: Gateway
const clients: Client[] = []

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  const sink = { write: () => true } as unknown as NodeJS.WritableStream
  gateway = await openGateway(
    {
      root: temp.dir,
      bash: false,
      mode: 'native',
      servers: { cat: { command: process.execPath, args: [UPSTREAM, 'a'] } },
      policy: POLICY,
      verbose: false,
      access: { allowedHosts: [], allowedOrigins: [] },
    },
    createLog(sink, false),
  )
}, 60_000)

afterAll(async () => {
  for (const client of clients) await client.close()
  await gateway?.close()
  await cleanup?.()
})

/** A client whose every message carries `authInfo`; `approve` answers the elicitations it gets. */
async function as(authInfo: AuthInfo, approve?: boolean): Promise<{ client: Client; asked: string[] }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const send = clientSide.send.bind(clientSide)
  clientSide.send = (message: JSONRPCMessage, options) => send(message, { ...options, authInfo })
  const server = createMcpServer(gateway.agent.ctx, {
    agent: gateway.agent,
    agentFor: (info) => gateway.identities.agentFor(identityOf(info)),
    name: 'toolgate',
    version: '0.0.0',
    catalog: gateway.catalog(),
  })
  await server.connect(serverSide)
  const asked: string[] = []
  const client = new Client(
    { name: 'test', version: '0.0.0' },
    { capabilities: approve === undefined ? {} : { elicitation: {} } },
  )
  if (approve !== undefined)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message)
      return { action: 'accept', content: { approve } }
    })
  await client.connect(clientSide)
  clients.push(client)
  return { client, asked }
}

const uris = async (client: Client) => (await client.listResources()).resources.map((r) => r.uri).sort()
const templates = async (client: Client) =>
  (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort()
const prompts = async (client: Client) => (await client.listPrompts()).prompts.map((p) => p.name).sort()

describe('policy.rules over prompts and resources', () => {
  it('an admin sees everything the top-level policy serves', async () => {
    const { client } = await as(auth('alice', ['admin']))
    expect(await uris(client)).toEqual(['note://a/readme'])
    expect(await templates(client)).toEqual(['note://a/items/{id}'])
    expect(await prompts(client)).toEqual(['cat__greet', 'cat__plain'])
    const read = await client.readResource({ uri: 'note://a/items/7' })
    expect(read.contents).toEqual([{ uri: 'note://a/items/7', mimeType: 'text/plain', text: 'item 7 of a' }])
  })

  it("a developer sees only its rules' grants, a deny wins, and a read is asked first", async () => {
    const { client, asked } = await as(auth('bob', ['dev']), true)
    expect(await uris(client)).toEqual(['note://a/readme'])
    expect(await templates(client)).toEqual([])
    expect(await prompts(client)).toEqual(['cat__greet'])
    await expect(client.readResource({ uri: 'note://a/items/7' })).rejects.toThrow(/note:\/\/a\/items\/7/)
    await expect(client.getPrompt({ name: 'cat__plain' })).rejects.toThrow(/cat__plain/)
    const read = await client.readResource({ uri: 'note://a/readme' })
    expect(read.contents).toEqual([{ uri: 'note://a/readme', mimeType: 'text/plain', text: 'readme of a' }])
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatch(/note:\/\/a\/readme/)
    const declined = await as(auth('bea', ['dev']), false)
    await expect(declined.client.readResource({ uri: 'note://a/readme' })).rejects.toThrow(/not approved/)
  })

  it('an identity no rule names sees no prompt and no resource', async () => {
    const { client } = await as(auth('eve', ['guest']))
    expect(await uris(client)).toEqual([])
    expect(await prompts(client)).toEqual([])
    await expect(client.readResource({ uri: 'note://a/readme' })).rejects.toThrow(/-32002: the gateway policy/)
  })

  it('the top-level deny holds for an admin too', async () => {
    const { client } = await as(auth('alice', ['admin']))
    await expect(client.readResource({ uri: 'note://a/logo' })).rejects.toThrow(/denies/)
  })
})
