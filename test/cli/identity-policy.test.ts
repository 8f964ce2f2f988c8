// Identity-aware policy (issue 24 item 2): each authenticated identity sees and may call only what
// `policy.rules` grant it, a deny wins, an identity no rule names sees nothing, and a Code Mode
// program cannot reach a tool its caller may not call. Served by createMcpServer with the real SDK
// client; the AuthInfo arrives as the auth layer delivers it (extra.authInfo).
import { readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PolicyConfig } from '../../src/gateway/config.js'
import { type Gateway, openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { identityOf } from '../../src/mcp/protocol/identity.js'
import { createMcpServer } from '../../src/mcp/server/server.js'
import { tempDir } from './helpers.js'

const POLICY: PolicyConfig = {
  deny: ['edit_file'],
  rules: [
    { who: { group: ['admin'] }, allow: ['*'] },
    { who: { group: ['dev'] }, allow: ['read_file', 'glob', 'grep', 'list_dir', 'write_file'], deny: ['write_file'] },
    { who: { subject: ['ci'] }, allow: ['list_dir'], mode: 'native' },
    { who: { claim: { team: ['docs'] } }, allow: ['glob'] },
    { who: { subject: ['mallory'], group: ['dev'] }, deny: ['read_file'] },
  ],
}

function auth(subject: string, groups: string[] = [], claims: Record<string, unknown> = {}): AuthInfo {
  return { token: `token-of-${subject}`, clientId: subject, scopes: [], extra: { subject, groups, claims } }
}

/** A client whose every message carries `authInfo`, as the auth layer hands it to the server. */
async function connect(gateway: Gateway, authInfo: AuthInfo | undefined): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const send = clientSide.send.bind(clientSide)
  clientSide.send = (message: JSONRPCMessage, options) => send(message, { ...options, authInfo })
  const server = createMcpServer(gateway.agent.ctx, {
    agent: gateway.agent,
    agentFor: (info) => gateway.identities.agentFor(identityOf(info)),
    name: 'toolgate',
    version: '0.0.0',
  })
  await server.connect(serverSide)
  const client = new Client({ name: 'test', version: '0.0.0' })
  await client.connect(clientSide)
  return client
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name).sort()
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? []
  return content.map((block) => block.text ?? '').join('\n')
}

let dir: string
let cleanup: () => Promise<void>
let gateway: Gateway
const clients: Client[] = []

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  await writeFile(path.join(dir, 'a.txt'), 'alpha\n')
  const sink = { write: () => true } as unknown as NodeJS.WritableStream
  gateway = await openGateway(
    {
      root: dir,
      bash: false,
      mode: 'both',
      servers: {},
      policy: POLICY,
      verbose: false,
      access: { allowedHosts: [], allowedOrigins: [] },
    },
    createLog(sink, false),
  )
})

afterAll(async () => {
  for (const client of clients) await client.close()
  await gateway?.close()
  await cleanup?.()
})

async function as(authInfo: AuthInfo | undefined): Promise<Client> {
  const client = await connect(gateway, authInfo)
  clients.push(client)
  return client
}

describe('identity-aware policy (issue 24 item 2)', () => {
  it('lists for each identity only the tools its rules grant', async () => {
    expect(await names(await as(auth('alice', ['admin'])))).toEqual([
      'glob',
      'grep',
      'list_dir',
      'read_file',
      'run_code',
      'write_file',
    ])
    expect(await names(await as(auth('bob', ['dev'])))).toEqual(['glob', 'grep', 'list_dir', 'read_file', 'run_code'])
    // mode "native" for ci: no run_code.
    expect(await names(await as(auth('ci')))).toEqual(['list_dir'])
    expect(await names(await as(auth('dana', [], { team: 'docs' })))).toEqual(['glob', 'run_code'])
    expect(await names(await as(auth('erin', [], { team: ['ops', 'docs'] })))).toEqual(['glob', 'run_code'])
  })

  it('a deny wins over an allow, from the same rule, another rule or the top level', async () => {
    // bob's rule allows and denies write_file; mallory's second rule denies what the dev rule allows.
    const bob = await as(auth('bob', ['dev']))
    const refused = await bob.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'no' } })
    expect(refused.isError).toBe(true)
    // Hidden, so the call finds no such tool for bob (the guard would refuse it too).
    expect(textOf(refused)).toMatch(/"write_file"/)
    await expect(readFile(path.join(dir, 'b.txt'), 'utf8')).rejects.toThrow(/ENOENT/)
    const mallory = await as(auth('mallory', ['dev']))
    expect(await names(mallory)).toEqual(['glob', 'grep', 'list_dir', 'run_code'])
    const read = await mallory.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
    expect(read.isError).toBe(true)
    expect(textOf(read)).not.toContain('alpha')
    // The top-level deny holds for an identity whose rule allows "*".
    const alice = await as(auth('alice', ['admin']))
    const edit = await alice.callTool({
      name: 'edit_file',
      arguments: { path: 'a.txt', old_string: 'alpha', new_string: 'beta' },
    })
    expect(edit.isError).toBe(true)
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('alpha\n')
  })

  it('an authenticated identity no rule names sees nothing and can call nothing', async () => {
    const eve = await as(auth('eve', ['visitors']))
    expect(await names(eve)).toEqual([])
    const read = await eve.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
    expect(read.isError).toBe(true)
    expect(textOf(read)).not.toContain('alpha')
    const code = await eve.callTool({ name: 'run_code', arguments: { description: 'x', code: 'return 1' } })
    expect(code.isError).toBe(true)
  })

  it('without an identity (stdio, unauthenticated loopback) the top-level policy alone applies', async () => {
    const local = await as(undefined)
    expect(await names(local)).toEqual(['glob', 'grep', 'list_dir', 'read_file', 'run_code', 'write_file'])
  })

  it('run_code cannot reach a tool its caller may not call', async () => {
    const bob = await as(auth('bob', ['dev']))
    const run = await bob.callTool({
      name: 'run_code',
      arguments: {
        description: 'try a denied tool',
        code: `
          const read = await tools.read_file({ path: 'a.txt' })
          let write
          try { await tools.write_file({ path: 'sneaky.txt', content: 'x' }); write = 'wrote' }
          catch (error) { write = 'refused: ' + error.message }
          return { read: JSON.stringify(read), write }`,
      },
    })
    const text = textOf(run)
    expect(text).toContain('alpha')
    expect(text).toMatch(/refused: .*write_file/)
    await expect(readFile(path.join(dir, 'sneaky.txt'), 'utf8')).rejects.toThrow(/ENOENT/)
    // The program's SDK does not even declare it.
    const tool = (await bob.listTools()).tools.find((t) => t.name === 'run_code')
    expect(tool?.description).toContain('read_file')
    expect(tool?.description).not.toContain('write_file')
  })
})

describe('identity-aware policy over Streamable HTTP (issue 24 item 2)', () => {
  let http: HttpServer
  let url: string
  // A test-only stand-in for the auth layer: the bearer token names the AuthInfo set as req.auth.
  const tokens = new Map<string, AuthInfo>([
    ['t-alice', auth('alice', ['admin'])],
    ['t-ci', auth('ci', ['ci'])],
  ])

  beforeAll(async () => {
    const sessions = new Map<string, StreamableHTTPServerTransport>()
    http = createServer(async (req: IncomingMessage & { auth?: AuthInfo }, res) => {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
      req.auth = bearer === undefined ? undefined : tokens.get(bearer)
      const id = req.headers['mcp-session-id']
      let transport = typeof id === 'string' ? sessions.get(id) : undefined
      if (!transport) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (sid) => void sessions.set(sid, created),
        })
        const server = createMcpServer(gateway.agent.ctx, {
          agent: gateway.agent,
          agentFor: (info) => gateway.identities.agentFor(identityOf(info)),
          name: 'toolgate',
          version: '0.0.0',
        })
        await server.connect(created)
        transport = created
      }
      await transport.handleRequest(req, res)
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`
  })

  afterAll(async () => {
    http.closeAllConnections()
    await new Promise((resolve) => http.close(resolve))
  })

  it('an identity sees only its tools', async () => {
    for (const [token, expected] of [
      ['t-alice', ['glob', 'grep', 'list_dir', 'read_file', 'run_code', 'write_file']],
      ['t-ci', ['list_dir']],
    ] as const) {
      const client = new Client({ name: 'test', version: '0.0.0' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      )
      clients.push(client)
      expect(await names(client)).toEqual(expected)
      if (token === 't-ci') {
        const refused = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
        expect(refused.isError).toBe(true)
        expect(textOf(refused)).not.toContain('alpha')
      }
    }
  })
})

describe('per-identity deadlines and the team example (issue 24 item 2)', () => {
  it('admins get bash under their own deadline; developers do not see it', async () => {
    const { dir: root, cleanup: done } = await tempDir()
    const sink = { write: () => true } as unknown as NodeJS.WritableStream
    const team = await openGateway(
      {
        root,
        bash: true,
        mode: 'native',
        servers: {},
        policy: {
          timeoutMs: { bash: 60_000 },
          rules: [
            { who: { group: ['admins'] }, allow: ['*'], timeoutMs: { bash: 300 } },
            { who: { group: ['developers'] }, allow: ['read_file', 'glob', 'grep', 'list_dir'] },
          ],
        },
        verbose: false,
        access: { allowedHosts: [], allowedOrigins: [] },
      },
      createLog(sink, false),
    )
    const opened: Client[] = []
    try {
      const admin = await connect(team, auth('root', ['admins']))
      const dev = await connect(team, auth('dev1', ['developers']))
      opened.push(admin, dev)
      expect(await names(admin)).toContain('bash')
      expect(await names(dev)).toEqual(['glob', 'grep', 'list_dir', 'read_file'])
      const slow = await admin.callTool({ name: 'bash', arguments: { command: 'sleep 20' } })
      expect(slow.isError).toBe(true)
      expect((slow._meta?.['toolgate/error'] as { info?: { code?: string; timeoutMs?: number } })?.info).toMatchObject({
        code: 'TOOL_TIMEOUT',
        timeoutMs: 300,
      })
      const refused = await dev.callTool({ name: 'bash', arguments: { command: 'echo hi' } })
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).not.toMatch(/^hi$/m)
    } finally {
      for (const client of opened) await client.close()
      await team.close()
      await done()
    }
  })
})
