// Standing approvals kept in the store (issue 26): an "always" answered on one instance applies on
// every instance sharing the store, and after a restart; the file store keeps them in its standing
// file; a failing standing store never turns into an unasked call.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ApprovalAnswerSource,
  type ApprovalOutcome,
  type ApprovalRequest,
  CallbackApproval,
  createAgent,
  createToolRuntime,
  type StandingApprovalStore,
  type ToolExecutionResult,
} from '../../src/index.js'
import { createFileStore, createPostgresStore, type Store, standingApprovalsIn } from '../../src/store/index.js'
import { serveStdio, textOf, writeConfig } from '../cli/helpers.js'
import { readTool, writeTool } from '../fixtures/file-tools.js'
import { signal } from '../runtime/helpers.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
const dir = mkdtempSync(join(tmpdir(), 'toolgate-standing-'))
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => {
  server?.destroy()
  rmSync(dir, { recursive: true, force: true })
})

const code = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : 'OK')

/** One instance: its own runtime, asking `answer` for every call, with rules kept in `standing`. */
async function instance(standing: StandingApprovalStore | undefined, answer: (r: ApprovalRequest) => ApprovalOutcome) {
  const { ctx, tools } = await createToolRuntime()
  tools.register(writeTool(async (args) => `wrote ${args.path}`))
  tools.register(readTool(async (args) => `read ${args.path}`))
  const asked: string[] = []
  const sources: ApprovalAnswerSource[] = []
  await ctx.plugin(CallbackApproval, {
    decide(request) {
      asked.push(request.toolName)
      return answer(request)
    },
  })
  ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'needs a human' }))
  ctx.on('tools/approval-answered', (_request, _outcome, source) => void sources.push(source))
  const uninstall = standing === undefined ? () => {} : tools.host.installStandingStore(standing)
  const agent = createAgent(ctx, { id: 'dev' })
  const call = (callId: string, name = 'write') =>
    tools.execute({ callId, name, arguments: { path: `${callId}.txt`, text: 'x' }, agent, signal: signal() })
  return { tools, agent, asked, sources, call, uninstall }
}

describe('standing approvals in the store (issue 26)', { timeout: 180_000 }, () => {
  it('PostgreSQL: "always" on A applies on B without asking, survives a restart, and a revocation reaches every instance', async () => {
    const url = server.createDatabase('standing')
    const stores: Store[] = await Promise.all([1, 2].map(() => createPostgresStore({ connectionString: url })))
    const a = await instance(standingApprovalsIn(stores[0]), (r) =>
      r.toolName === 'write' ? { kind: 'allowed-always' } : { kind: 'denied-always', reason: 'never read here' },
    )
    const b = await instance(standingApprovalsIn(stores[1]), () => ({ kind: 'denied', reason: 'B asks, B denies' }))

    expect(code(await a.call('a1'))).toBe('OK')
    expect(a.asked).toEqual(['write'])
    // B (another runtime, another connection) runs it without asking: the rule is in the store.
    expect(code(await b.call('b1'))).toBe('OK')
    expect(b.asked).toEqual([])
    expect(b.sources).toEqual(['standing'])
    // A denied-always on A denies on B too, without asking.
    expect(code(await a.call('a2', 'read'))).toBe('TOOL_DENIED')
    const denied = await b.call('b2', 'read')
    expect(code(denied)).toBe('TOOL_DENIED')
    expect(denied.isError && denied.error.message).toMatch(/a standing rule denies every call of this tool/)
    expect(b.asked).toEqual([])
    // Nothing was kept in either runtime's memory: the store is the one place.
    expect(a.tools.standingApprovals(a.agent)).toEqual([])
    expect(await stores[1].standingApprovals('dev')).toEqual([
      { agentId: 'dev', toolName: 'write', kind: 'allowed-always' },
      { agentId: 'dev', toolName: 'read', kind: 'denied-always' },
    ])

    // A restart: a new process (new runtime, new connection) finds the rule.
    const restartedStore = await createPostgresStore({ connectionString: url })
    const c = await instance(standingApprovalsIn(restartedStore), () => ({ kind: 'denied' }))
    expect(code(await c.call('c1'))).toBe('OK')
    expect(c.asked).toEqual([])

    // Revoked in the store (say from another instance): every instance asks again.
    expect(await stores[0].revokeStandingApproval('write', 'dev')).toBe(true)
    expect(code(await b.call('b3'))).toBe('TOOL_DENIED')
    expect(code(await c.call('c2'))).toBe('TOOL_DENIED')
    expect(b.asked).toEqual(['write'])
    expect(c.asked).toEqual(['write'])
    for (const store of [...stores, restartedStore]) await store.close()
  })

  it('the file store keeps them in its standing file, shared by the processes of one machine', async () => {
    const journal = join(dir, 'standing.jsonl')
    const a = await instance(standingApprovalsIn(createFileStore({ journal })), () => ({ kind: 'allowed-always' }))
    const b = await instance(standingApprovalsIn(createFileStore({ journal })), () => ({ kind: 'denied' }))
    expect(code(await a.call('a1'))).toBe('OK')
    expect(code(await b.call('b1'))).toBe('OK')
    expect(b.asked).toEqual([])
    expect(JSON.parse(readFileSync(`${journal}.standing.json`, 'utf8'))).toEqual([
      { agentId: 'dev', toolName: 'write', kind: 'allowed-always' },
    ])
  })

  it('a store that fails to look up asks the service; one that fails to keep leaves the rule in memory', async () => {
    const broken: StandingApprovalStore = {
      find: async () => {
        throw new Error('database down')
      },
      keep: async () => {
        throw new Error('database down')
      },
    }
    let answer: ApprovalOutcome = { kind: 'denied', reason: 'asked while the store is down' }
    const a = await instance(broken, () => answer)
    expect(code(await a.call('a1'))).toBe('TOOL_DENIED')
    expect(a.asked).toEqual(['write'])
    answer = { kind: 'allowed-always' }
    expect(code(await a.call('a2'))).toBe('OK')
    // Not kept in the store: this runtime keeps it in memory and applies it.
    expect(a.tools.standingApprovals(a.agent)).toMatchObject([{ agentId: 'dev', toolName: 'write', callId: 'a2' }])
    expect(code(await a.call('a3'))).toBe('OK')
    expect(a.asked).toEqual(['write', 'write'])

    // A store answering something that is not a rule is no rule: the service is asked.
    const odd = await instance({ find: async () => ({ kind: 'allowed-once' }) as never, keep: async () => {} }, () => ({
      kind: 'denied',
    }))
    expect(code(await odd.call('o1'))).toBe('TOOL_DENIED')
    expect(odd.asked).toEqual(['write'])
    // One at a time, and the uninstaller frees the slot.
    expect(() => odd.tools.host.installStandingStore(broken)).toThrow(/already installed/)
    odd.uninstall()
    odd.tools.host.installStandingStore(broken)()
  })
})

describe('gateways on one database: "always" over elicitation (issue 26)', { timeout: 180_000 }, () => {
  it('granted on A, B calls the tool without asking; a gateway started later too', async () => {
    const url = server.createDatabase('standing_gateways')
    const root = mkdtempSync(join(dir, 'root-'))
    const config = await writeConfig(dir, { root, policy: { ask: ['write_file'] } }, 'ask.json')
    const args = ['--config', config, '--store', url]
    const elicited: Record<string, unknown[]> = { a: [], b: [], c: [] }
    const open = async (name: 'a' | 'b' | 'c', always: boolean) => {
      const gateway = await serveStdio(args, { elicitation: {} })
      gateway.client.setRequestHandler(ElicitRequestSchema, async (request) => {
        elicited[name].push(request.params)
        return always ? { action: 'accept', content: { approve: true, always: true } } : { action: 'decline' }
      })
      return gateway
    }
    const a = await open('a', true)
    const b = await open('b', false)
    try {
      const first = await a.client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'A' } })
      expect(first.isError).not.toBe(true)
      expect(elicited.a).toHaveLength(1)
      expect(JSON.stringify(elicited.a[0])).toContain('Also allow every later call of write_file')
      const second = await b.client.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'B' } })
      expect(textOf(second)).not.toMatch(/denied|declined/)
      expect(second.isError).not.toBe(true)
      expect(elicited.b).toHaveLength(0)
      expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('B')
    } finally {
      await a.close()
      await b.close()
    }
    const c = await open('c', false)
    try {
      const third = await c.client.callTool({ name: 'write_file', arguments: { path: 'c.txt', content: 'C' } })
      expect(third.isError).not.toBe(true)
      expect(elicited.c).toHaveLength(0)
    } finally {
      await c.close()
    }
    // The journal in the store says the later calls were answered by the standing rule.
    const store = await createPostgresStore({ connectionString: url, migrate: false })
    const answered: unknown[] = []
    for await (const { record } of store.read())
      if (record.type === 'approval-answered') answered.push([record.outcome.kind, record.standing])
    await store.close()
    expect(answered).toEqual([
      ['allowed-always', false],
      ['allowed-always', true],
      ['allowed-always', true],
    ])
  })
})
