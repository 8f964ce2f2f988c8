// The identity scopes are bounded (issue 36, leftovers: a flood of distinct subjects from the trusted
// issuer must not grow the gateway's memory without end). Past the bound
// the least recently served idle scope is dropped; a scope with a call in flight never is; a dropped
// scope is made again with the same id, and its caller's "always" answers still hold.
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import type { ApprovalOutcome } from '../../src/contract/execution.js'
import { identityScopes } from '../../src/gateway/identity-scopes.js'
import { memoryStandingApprovals } from '../../src/gateway/memory-standing.js'
import { createAgent, createToolRuntime } from '../../src/index.js'
import type { Identity } from '../../src/mcp/protocol/identity.js'
import { rawTool, signal } from '../runtime/helpers.js'
import { serveStdio, tempDir, writeConfig } from './helpers.js'

const who = (subject: string): Identity => ({ subject, groups: ['team'], scopes: [], claims: {} })

async function setup(max: number) {
  const { ctx, tools } = await createToolRuntime()
  const base = createAgent(ctx, { id: 'toolgate' })
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  tools.register(rawTool('slow', async () => held.then(() => 'slow done')))
  tools.register(rawTool('write', async () => 'written'))
  let asked = 0
  ctx.provide('approval')
  ctx.set('approval', {
    request: async (): Promise<ApprovalOutcome> => {
      asked++
      return { kind: 'allowed-always' }
    },
  })
  tools.host.installStandingStore(memoryStandingApprovals())
  const policy = { rules: [{ who: { group: ['team'] }, allow: ['*'], ask: ['write'] }] }
  const scopes = identityScopes(base, policy, () => ['slow', 'write'], max)
  const call = (identity: Identity, name: string, callId = `${identity.subject}-${name}`) =>
    tools.execute({ callId, name, arguments: {}, agent: scopes.agentFor(identity), signal: signal() })
  return { tools, scopes, call, release, asked: () => asked }
}

describe('identity scopes are bounded (issue 36)', { timeout: 120_000 }, () => {
  it('a flood of distinct subjects keeps at most the bound, and a dropped scope is disposed', async () => {
    const { tools, scopes } = await setup(50)
    const first = scopes.agentFor(who('flood-0'))
    for (let i = 0; i < 2_000; i++) scopes.agentFor(who(`flood-${i}`))
    expect(scopes.size()).toBe(50)
    // The first one was dropped: its scope is gone, and asking again makes a new one with the same id.
    expect(() => tools.schemas(first)).toThrow()
    const again = scopes.agentFor(who('flood-0'))
    expect(again).not.toBe(first)
    expect(again.id).toBe(first.id)
    expect(tools.schemas(again).map((s) => s.name)).toEqual(expect.arrayContaining(['slow', 'write']))
    expect(scopes.size()).toBe(50)
  })

  it('a recently served scope stays; a scope with a call in flight is never dropped', async () => {
    const { scopes, call, release } = await setup(3)
    const alice = who('alice')
    const aliceAgent = scopes.agentFor(alice)
    const running = call(alice, 'slow')
    // Many callers come and go while alice's call runs: hers is kept, past the bound if need be.
    for (let i = 0; i < 100; i++) scopes.agentFor(who(`caller-${i}`))
    expect(scopes.agentFor(alice)).toBe(aliceAgent)
    // Served most recently now, alice survives two more callers even idle; the others rotate out.
    release()
    const result = await running
    expect(result.isError).toBe(false)
    scopes.agentFor(who('bob'))
    scopes.agentFor(who('carol'))
    expect(scopes.agentFor(alice)).toBe(aliceAgent)
    expect(scopes.size()).toBe(3)
    // Once idle and least recent, alice's scope goes like any other.
    for (let i = 0; i < 3; i++) scopes.agentFor(who(`later-${i}`))
    expect(scopes.agentFor(alice)).not.toBe(aliceAgent)
  })

  it("a dropped scope made again keeps its caller's standing approval", async () => {
    const { scopes, call, asked } = await setup(2)
    const alice = who('alice')
    const first = await call(alice, 'write', 'w1')
    expect(first.isError).toBe(false)
    expect(asked()).toBe(1)
    const aliceAgent = scopes.agentFor(alice)
    for (let i = 0; i < 5; i++) scopes.agentFor(who(`caller-${i}`))
    expect(scopes.agentFor(alice)).not.toBe(aliceAgent)
    // The new scope has alice's id: her "always" answers it without asking.
    const second = await call(alice, 'write', 'w2')
    expect(second.isError).toBe(false)
    expect(asked()).toBe(1)
    // Another caller is still asked.
    expect((await call(who('bob'), 'write', 'w3')).isError).toBe(false)
    expect(asked()).toBe(2)
  })
})

describe('serve keeps "always" answers outside the scopes (issue 36)', { timeout: 120_000 }, () => {
  it('over stdio without a store, an "always" answer still answers the next call', async () => {
    const { dir, cleanup } = await tempDir()
    const config = await writeConfig(dir, { root: '.', policy: { ask: ['write_file'] } })
    const s = await serveStdio(['--config', config], { elicitation: {} })
    try {
      let asked = 0
      s.client.setRequestHandler(ElicitRequestSchema, async () => {
        asked++
        return { action: 'accept', content: { approve: true, always: true } }
      })
      for (const name of ['one.txt', 'two.txt']) {
        const result = await s.client.callTool({ name: 'write_file', arguments: { path: name, content: 'x' } })
        expect(result.isError).toBeFalsy()
      }
      expect(asked).toBe(1)
    } finally {
      await s.close()
      await cleanup()
    }
  })
})
