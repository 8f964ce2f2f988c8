// The guide's policy examples through the gateway (issue 38, items 1-2, 4 and 5): the config's
// `policy` decides calls with `when` over arguments and the turn, a per-person quota holds across two
// gateways on one real PostgreSQL, and the journal records the deciding rule and the policy digest.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PolicyConfig } from '../../src/gateway/config.js'
import { type Gateway, openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { shareStore } from '../../src/gateway/serve-store.js'
import { identityOf } from '../../src/mcp/protocol/identity.js'
import { createMcpServer } from '../../src/mcp/server/server.js'
import { createPostgresStore } from '../../src/store/index.js'
import { tempDir } from '../cli/helpers.js'
import { GUIDE_POLICY } from '../policy/guide-examples.js'
import { type PgServer, startPgServer } from './pg-server.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/policy-upstream.mjs')
const sink = { write: () => true } as unknown as NodeJS.WritableStream
const log = createLog(sink, false)

let server: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
const closers: (() => Promise<unknown>)[] = []
beforeAll(async () => {
  server = await startPgServer()
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {})
  server?.destroy()
  await work?.cleanup()
})

function auth(subject: string): AuthInfo {
  return { token: `token-of-${subject}`, clientId: subject, scopes: [], extra: { subject, groups: [], claims: {} } }
}

async function open(policy: PolicyConfig, journal?: string): Promise<Gateway> {
  const gateway = await openGateway(
    {
      root: work.dir,
      bash: true,
      mode: 'both',
      servers: {
        pay: { command: process.execPath, args: [UPSTREAM, '--tools', 'transfer,fetch'], prefix: '' },
        github: { command: process.execPath, args: [UPSTREAM, '--tools', 'create_issue,search'] },
      },
      policy,
      verbose: false,
      access: { allowedHosts: [], allowedOrigins: [] },
      ...(journal ? { journal } : {}),
    },
    log,
  )
  closers.push(() => gateway.close())
  return gateway
}

async function connect(
  gateway: Gateway,
  authInfo: AuthInfo | undefined,
  wrap = (s: ReturnType<typeof createMcpServer>) => s,
) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const send = clientSide.send.bind(clientSide)
  clientSide.send = (message: JSONRPCMessage, options) => send(message, { ...options, authInfo })
  const mcp = wrap(
    createMcpServer(gateway.agent.ctx, {
      agent: gateway.agent,
      agentFor: (info) => gateway.identities.agentFor(identityOf(info)),
      name: 'toolgate',
      version: '0.0.0',
    }),
  )
  await mcp.connect(serverSide)
  const client = new Client({ name: 'test', version: '0.0.0' })
  await client.connect(clientSide)
  closers.push(() => client.close())
  return client
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? []
  return content.map((block) => block.text ?? '').join('\n')
}

describe('the guide examples through the gateway (issue 38)', { timeout: 120_000 }, () => {
  it('decides write_file, transfer, bash after fetch and the repo pattern; the journal names the rule', async () => {
    const journal = path.join(work.dir, 'audit.jsonl')
    const gateway = await open(GUIDE_POLICY as unknown as PolicyConfig, journal)
    const client = await connect(gateway, undefined)

    const workflow = await client.callTool({ name: 'write_file', arguments: { path: '.github/ci.yml', content: 'x' } })
    expect(workflow.isError).toBe(true)
    expect(textOf(workflow)).toContain('files under .github/ are not written by agents')
    expect(
      (await client.callTool({ name: 'write_file', arguments: { path: 'ok.txt', content: 'x' } })).isError,
    ).toBeFalsy()

    expect(textOf(await client.callTool({ name: 'transfer', arguments: { amount: 50 } }))).toContain('transfer ran')
    // Over 100 the call is asked; this client cannot answer an elicitation, so it does not run.
    const big = await client.callTool({ name: 'transfer', arguments: { amount: 500 } })
    expect(big.isError).toBe(true)
    expect(textOf(big)).not.toContain('transfer ran')
    // it was asked (the approval service answered), not denied by a rule
    expect(textOf(big)).toContain('the approval service denied the call')

    const program = await client.callTool({
      name: 'run_code',
      arguments: {
        code: 'await tools.fetch({ url: "https://example.test" }); try { await tools.bash({ command: "echo hi" }); return "ran" } catch (e) { return e.message }',
        description: 'fetch then bash',
      },
    })
    expect(textOf(program)).toContain('no-bash-after-fetch')
    expect(textOf(await client.callTool({ name: 'bash', arguments: { command: 'echo alone' } }))).toContain('alone')

    const evil = await client.callTool({ name: 'github__create_issue', arguments: { repo: 'evil/web', title: 't' } })
    expect(evil.isError).toBe(true)
    expect(textOf(evil)).toContain('acme-repos-only')
    expect(
      textOf(await client.callTool({ name: 'github__create_issue', arguments: { repo: 'acme/web', title: 't' } })),
    ).toContain('create_issue ran')

    const records = (await readFile(journal, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((record) => record.type === 'result')
    const denied = records.find((record) => record.toolName === 'write_file' && record.result.isError)
    expect(denied.policy).toEqual({
      decision: 'deny',
      rule: 'no-workflow-writes',
      digest: gateway.policy.policy.digest,
    })
    expect(gateway.policy.policy.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
    const allowed = records.find((record) => record.toolName === 'write_file' && !record.result.isError)
    expect(allowed.policy).toEqual({ decision: 'allow', digest: gateway.policy.policy.digest })
  })

  it('tools/list hides what a caller may never call, as the library does; a `when` rule keeps its tool listed', async () => {
    const gateway = await open({
      deny: ['search'],
      rules: [
        { who: { subject: ['alice'] }, allow: ['*'], deny: ['github__*'] },
        { id: 'no-transfer', deny: ['transfer'] },
        { id: 'cond', deny: ['fetch'], when: "args.url.startsWith('http:')" },
      ],
    } as PolicyConfig)
    const listed = async (client: Client) =>
      (await client.listTools()).tools
        .map((tool) => tool.name)
        .filter((name) => ['transfer', 'fetch', 'github__create_issue', 'github__search', 'bash'].includes(name))
        .sort()
    const anonymous = await connect(gateway, undefined)
    expect(await listed(anonymous)).toEqual(['bash', 'fetch', 'github__create_issue', 'github__search'])
    const alice = await connect(gateway, auth('alice'))
    expect(await listed(alice)).toEqual(['bash', 'fetch'])
    expect(await listed(await connect(gateway, auth('bob')))).toEqual([])
    const transfer = await anonymous.callTool({ name: 'transfer', arguments: { amount: 1 } })
    expect(transfer.isError).toBe(true)
    expect(textOf(transfer)).not.toContain('transfer ran')
    expect(textOf(await alice.callTool({ name: 'fetch', arguments: { url: 'http://x' } }))).toContain('cond')
  })

  it('a per-person hourly quota is shared by two gateways on one PostgreSQL', async () => {
    const url = server.createDatabase('policy_quota')
    const policy = {
      rules: [{ id: 'issue-quota', tools: ['github__create_issue'], quota: { calls: 2, per: 'hour', by: 'subject' } }],
    } as PolicyConfig
    const clients: Client[] = []
    for (let i = 0; i < 2; i++) {
      const gateway = await open(policy)
      const shared = await shareStore(gateway, await createPostgresStore({ connectionString: url }), log)
      closers.push(() => shared.close())
      clients.push(await connect(gateway, auth('alice'), (s) => shared.acknowledging(s)))
      clients.push(await connect(gateway, auth('bob'), (s) => shared.acknowledging(s)))
    }
    const [alice1, bob1, alice2] = clients
    const create = (client: Client) =>
      client.callTool({ name: 'github__create_issue', arguments: { repo: 'acme/web', title: 't' } })
    const first = await create(alice1)
    expect(textOf(first)).toContain('create_issue ran')
    expect((await create(alice2)).isError).toBeFalsy()
    const over = await create(alice1)
    expect(over.isError).toBe(true)
    expect(textOf(over)).toMatch(
      /quota of issue-quota \(2 calls per hour\) is used up; the next call is allowed in \d+ s/,
    )
    expect(textOf(await create(alice2))).toContain('used up')
    // bob counts on his own
    expect((await create(bob1)).isError).toBeFalsy()
  })
})
