// Issue #14: serializable approval requests, richer outcomes and standing rules.
import type { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import {
  type ApprovalContext,
  type ApprovalOutcome,
  type ApprovalRequest,
  CallbackApproval,
  createAgent,
  createToolRuntime,
  type ToolExecutionResult,
} from '../../src/index.js'
import { readTool, writeTool } from '../fixtures/file-tools.js'
import { signal } from '../runtime/helpers.js'

const code = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : 'OK')
const text = (result: ToolExecutionResult) => result.content.map((b) => (b.type === 'text' ? b.text : '')).join('')

async function setup(answer: (request: ApprovalRequest, context: ApprovalContext) => ApprovalOutcome) {
  const { ctx, tools } = await createToolRuntime()
  const ran: Array<{ path: string; text: string }> = []
  tools.register(
    writeTool(async (args) => {
      ran.push(args)
      return `wrote ${args.path}`
    }),
  )
  tools.register(readTool(async (args) => `read ${args.path}`))
  const asked: ApprovalRequest[] = []
  await ctx.plugin(CallbackApproval, {
    decide(request, context) {
      asked.push(request)
      return answer(request, context)
    },
  })
  ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'needs a human' }))
  const call = (ctxOrAgent: { id: string; ctx: Context } | undefined, callId: string, name = 'write', args?: object) =>
    tools.execute({
      callId,
      name,
      arguments: args ?? { path: `${callId}.txt`, text: 'hi' },
      agent: ctxOrAgent,
      signal: signal(),
    })
  return { ctx, tools, ran, asked, call }
}

describe('serializable ApprovalRequest (issue #14)', () => {
  it('is exactly the documented JSON; the signal travels beside it, never inside', async () => {
    let seen: { request: ApprovalRequest; context: ApprovalContext } | undefined
    const env = await setup((request, context) => {
      seen = { request, context }
      return { kind: 'allowed-once' }
    })
    const agent = createAgent(env.ctx, { id: 'agent-9' })
    expect(code(await env.call(agent, 'c1'))).toBe('OK')
    const request = seen?.request as ApprovalRequest
    expect(JSON.parse(JSON.stringify(request))).toEqual({
      callId: 'c1',
      rootCallId: 'c1',
      parentCallId: null,
      agentId: 'agent-9',
      toolName: 'write',
      arguments: { path: 'c1.txt', text: 'hi' },
      reason: 'needs a human',
    })
    expect(structuredClone(request)).toEqual(JSON.parse(JSON.stringify(request)))
    expect(seen?.context.signal).toBeInstanceOf(AbortSignal)
    expect(Reflect.ownKeys(request).sort()).toEqual(
      ['agentId', 'arguments', 'callId', 'parentCallId', 'reason', 'rootCallId', 'toolName'].sort(),
    )
    expect(seen?.context.agent).toBe(agent)
    expect(Object.isFrozen(request)).toBe(true)
  })

  it('an ask for a call without an agent goes to the approval service like any other', async () => {
    const env = await setup(() => ({ kind: 'allowed-once' }))
    const result = await env.call(undefined, 'solo')
    expect(code(result)).toBe('OK')
    expect(env.asked).toEqual([expect.objectContaining({ callId: 'solo', agentId: null })])
  })
})

describe('richer approval outcomes (issue #14)', () => {
  it('denied with a reason: the model sees the reason in the error result, the body never runs', async () => {
    const env = await setup(() => ({ kind: 'denied', reason: 'the file belongs to someone else' }))
    const result = await env.call(createAgent(env.ctx, { id: 'a' }), 'c')
    expect(code(result)).toBe('TOOL_DENIED')
    expect(text(result)).toContain('the file belongs to someone else')
    expect(env.ran).toEqual([])
  })

  it('allowed-once with edited arguments runs the edited call; later phases see the edit', async () => {
    const env = await setup((request) => ({
      kind: 'allowed-once',
      arguments: { ...(request.arguments as object), path: 'safe/place.txt' },
    }))
    const seenByGuard: unknown[] = []
    const seenByResult: unknown[] = []
    env.tools.guard((exec) => {
      seenByGuard.push(exec.arguments)
      return undefined
    })
    env.ctx.on('tools/result', (exec) => {
      seenByResult.push(exec.arguments)
    })
    const result = await env.call(createAgent(env.ctx, { id: 'a' }), 'c')
    expect(result).toMatchObject({ isError: false, value: 'wrote safe/place.txt' })
    expect(env.ran).toEqual([{ path: 'safe/place.txt', text: 'hi' }])
    expect(seenByGuard).toEqual([{ path: 'safe/place.txt', text: 'hi' }])
    expect(seenByResult).toEqual([{ path: 'safe/place.txt', text: 'hi' }])
  })

  it('edited arguments are validated again: invalid edits give INVALID_ARGS and nothing runs', async () => {
    const answers: ApprovalOutcome[] = [
      { kind: 'allowed-once', arguments: { path: 7, text: 'hi' } },
      { kind: 'allowed-once', arguments: { path: 'x' } },
      { kind: 'allowed-once', arguments: { path: 'x', text: 1n } as never },
    ]
    const env = await setup(() => answers.shift() as ApprovalOutcome)
    const agent = createAgent(env.ctx, { id: 'a' })
    const wrongType = await env.call(agent, 'c1')
    const missing = await env.call(agent, 'c2')
    const notJson = await env.call(agent, 'c3')
    expect([code(wrongType), code(missing), code(notJson)]).toEqual(['INVALID_ARGS', 'INVALID_ARGS', 'INVALID_ARGS'])
    expect(text(wrongType)).toMatch(/arguments\.path/)
    expect(text(missing)).toMatch(/text/)
    expect(env.ran).toEqual([])
  })

  it('a guard still denies an edited call', async () => {
    const env = await setup(() => ({ kind: 'allowed-once', arguments: { path: '/etc/passwd', text: 'x' } }))
    env.tools.guard((exec) => ((exec.arguments as { path: string }).path.startsWith('/etc') ? 'no /etc' : undefined))
    const result = await env.call(createAgent(env.ctx, { id: 'a' }), 'c')
    expect(code(result)).toBe('TOOL_DENIED')
    expect(env.ran).toEqual([])
  })
})

describe('standing rules (issue #14)', () => {
  it('allowed-always answers later asks of the same agent and tool without the service, across two calls and two agents', async () => {
    const env = await setup((request) =>
      request.agentId === 'alice' ? { kind: 'allowed-always', reason: 'trusted' } : { kind: 'denied', reason: 'no' },
    )
    const alice = createAgent(env.ctx, { id: 'alice' })
    const bob = createAgent(env.ctx, { id: 'bob' })
    expect(code(await env.call(alice, 'a1'))).toBe('OK')
    expect(code(await env.call(alice, 'a2'))).toBe('OK')
    expect(env.asked.map((r) => r.callId)).toEqual(['a1'])
    // Another agent is not covered by alice's rule, and another tool of alice's is not either.
    expect(code(await env.call(bob, 'b1'))).toBe('TOOL_DENIED')
    expect(code(await env.call(bob, 'b2'))).toBe('TOOL_DENIED')
    expect(code(await env.call(alice, 'r1', 'read', { path: 'x' }))).toBe('OK')
    expect(env.asked.map((r) => r.callId)).toEqual(['a1', 'b1', 'b2', 'r1'])
    expect(env.ran.map((a) => a.path)).toEqual(['a1.txt', 'a2.txt'])
    expect(env.tools.standingApprovals(alice)).toEqual([
      expect.objectContaining({
        agentId: 'alice',
        toolName: 'write',
        kind: 'allowed-always',
        reason: 'trusted',
        callId: 'a1',
      }),
      expect.objectContaining({ agentId: 'alice', toolName: 'read', kind: 'allowed-always' }),
    ])
    expect(env.tools.standingApprovals(bob)).toEqual([])
  })

  it('denied-always refuses later calls without the service, with the reason; revoking asks again', async () => {
    const answers: ApprovalOutcome[] = [{ kind: 'denied-always', reason: 'never on Fridays' }, { kind: 'allowed-once' }]
    const env = await setup(() => answers.shift() as ApprovalOutcome)
    const agent = createAgent(env.ctx, { id: 'a' })
    expect(code(await env.call(agent, 'c1'))).toBe('TOOL_DENIED')
    const second = await env.call(agent, 'c2')
    expect(code(second)).toBe('TOOL_DENIED')
    expect(text(second)).toMatch(/standing rule.*never on Fridays/)
    expect(env.asked).toHaveLength(1)
    expect(env.tools.revokeStandingApproval('write', agent)).toBe(true)
    expect(env.tools.revokeStandingApproval('write', agent)).toBe(false)
    expect(env.tools.standingApprovals(agent)).toEqual([])
    expect(code(await env.call(agent, 'c3'))).toBe('OK')
    expect(env.asked).toHaveLength(2)
  })

  it('rules end with the agent scope', async () => {
    const env = await setup(() => ({ kind: 'allowed-always' }))
    const agent = createAgent(env.ctx, { id: 'a' })
    await env.call(agent, 'c1')
    expect(env.tools.standingApprovals(agent)).toHaveLength(1)
    await agent.dispose()
    expect(env.tools.standingApprovals(agent)).toEqual([])
  })

  it('calls without an agent keep their own rules', async () => {
    const env = await setup(() => ({ kind: 'allowed-always' }))
    await env.call(undefined, 'c1')
    await env.call(undefined, 'c2')
    expect(env.asked).toHaveLength(1)
    expect(env.tools.standingApprovals()).toEqual([expect.objectContaining({ agentId: null, toolName: 'write' })])
    const agent = createAgent(env.ctx, { id: 'a' })
    await env.call(agent, 'c3')
    expect(env.asked).toHaveLength(2)
  })
})
