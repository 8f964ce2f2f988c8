import { describe, expect, it } from 'vitest'
import type {
  ApprovalContext,
  ApprovalOutcome,
  ApprovalRequest,
  ToolExecutionInput,
  ToolRunContext,
} from '../../src/contract/execution.js'
import { createToolRuntime } from '../../src/preset/create.js'
import { createAgent } from '../../src/runtime/agent.js'
import { CallbackApproval } from '../../src/scheduling/approval.js'
import { executeBatch } from '../../src/scheduling/execute-batch.js'
import { TimeoutPolicy } from '../../src/scheduling/timeout-policy.js'
import { codeOf, deferred, settles, tool, until } from './fakes.js'

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
}

async function setup() {
  const { ctx, tools } = await createToolRuntime()
  const agent = createAgent(ctx, { id: 'agent' })
  const input = (callId: string, name: string, signal = new AbortController().signal, args: unknown = {}) =>
    ({ callId, name, arguments: args, agent, signal }) satisfies ToolExecutionInput
  return { ctx, tools, agent, input }
}

describe('R-SCHED-1 executeBatch with the real runtime', () => {
  it('schedules by isConcurrencySafe, keeps barriers, bounds the pool, and reports concludesTurn', async () => {
    const { tools, input } = await setup()
    const log: string[] = []
    let running = 0
    let peak = 0
    const body = (label: string) => async (_args: unknown, exec: ToolRunContext) => {
      running++
      peak = Math.max(peak, running)
      log.push(`start:${exec.callId}`)
      await new Promise<void>((resolve) => setImmediate(resolve))
      await new Promise<void>((resolve) => setImmediate(resolve))
      log.push(`end:${exec.callId}`)
      running--
      if (label === 'finish') exec.concludeTurn()
      return label
    }
    tools.register(tool('read', body('read'), { isConcurrencySafe: () => true }))
    tools.register(tool('write', body('write')))
    tools.register(tool('finish', body('finish'), { isConcurrencySafe: () => true }))
    const calls = [
      input('r1', 'read'),
      input('r2', 'read'),
      input('r3', 'read'),
      input('w', 'write'),
      input('r4', 'read'),
      input('done', 'finish'),
      input('ghost', 'no_such_tool'),
    ]
    const { results, concludesTurn } = await executeBatch(tools, calls, { maxParallel: 2 })
    expect(results.map((entry) => entry.mode.kind)).toEqual([
      'parallel',
      'parallel',
      'parallel',
      'exclusive',
      'parallel',
      'parallel',
      'exclusive',
    ])
    expect(peak).toBe(2)
    const at = (line: string) => log.indexOf(line)
    for (const id of ['r1', 'r2', 'r3']) expect(at('start:w')).toBeGreaterThan(at(`end:${id}`))
    expect(at('start:r4')).toBeGreaterThan(at('end:w'))
    expect(results.map((entry) => (entry.result.isError ? codeOf(entry.result) : entry.result.value))).toEqual([
      'read',
      'read',
      'read',
      'write',
      'read',
      'finish',
      'UNKNOWN_TOOL',
    ])
    expect(concludesTurn).toBe(true)
  })

  it('cancelling a running batch: every call returns a result, the not-started ones ABORTED_BEFORE_DISPATCH', async () => {
    const { tools, input } = await setup()
    const started: string[] = []
    tools.register(
      tool(
        'wait',
        async (_args, exec) => {
          started.push(exec.callId)
          await untilAborted(exec.signal)
          return 'stopped early' // a cooperative body that resolves; the pipeline reports ABORTED
        },
        { isConcurrencySafe: () => true },
      ),
    )
    tools.register(tool('exclusive', async () => 'never runs'))
    const controller = new AbortController()
    const batch = executeBatch(
      tools,
      [input('a', 'wait'), input('b', 'wait'), input('c', 'wait'), input('x', 'exclusive'), input('d', 'wait')],
      { maxParallel: 2, signal: controller.signal },
    )
    await until(() => started.length === 2, 'a running pool')
    controller.abort()
    const { results } = await batch
    expect(results.map((entry) => codeOf(entry.result))).toEqual([
      'ABORTED',
      'ABORTED',
      'ABORTED_BEFORE_DISPATCH',
      'ABORTED_BEFORE_DISPATCH',
      'ABORTED_BEFORE_DISPATCH',
    ])
    expect(started).toEqual(['a', 'b'])
    expect(results.every((entry) => Object.isFrozen(entry.result))).toBe(true)
  })
})

describe('R-SCHED-2 TimeoutPolicy with the real pipeline', () => {
  it('a cooperative body is cut at the deadline: TOOL_TIMEOUT', async () => {
    const { ctx, tools, input } = await setup()
    await ctx.plugin(TimeoutPolicy, {})
    let sawReason: unknown
    tools.register(
      tool(
        'slow',
        async (_args, exec) => {
          await untilAborted(exec.signal)
          sawReason = exec.signal.reason
          throw exec.signal.reason
        },
        { timeoutMs: 20 },
      ),
    )
    const result = await tools.execute(input('t1', 'slow'))
    expect(result).toMatchObject({
      isError: true,
      error: {
        message: 'Tool "slow" timed out after 20 ms',
        info: { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT', timeoutMs: 20 },
      },
      content: [{ type: 'text', text: 'Tool "slow" timed out after 20 ms' }],
    })
    expect(sawReason).toMatchObject({ code: 'TOOL_TIMEOUT' })
  })

  it('an uncooperative body is awaited: its finally ran before the TOOL_TIMEOUT result', async () => {
    const { ctx, tools, input } = await setup()
    await ctx.plugin(TimeoutPolicy, {})
    const log: string[] = []
    const release = deferred()
    const deadlineSeen = deferred()
    tools.register(
      tool(
        'stubborn',
        async (_args, exec) => {
          try {
            await untilAborted(exec.signal)
            log.push('deadline passed; carrying on')
            deadlineSeen.resolve()
            await release.promise
            return 'finished anyway'
          } finally {
            log.push('body finally')
          }
        },
        { timeoutMs: 20 },
      ),
    )
    const pending = tools.execute(input('t2', 'stubborn')).then((result) => {
      log.push('result')
      return result
    })
    // Issue 22: wait for the deadline itself (bounded generously), not for a number of loop turns.
    await settles(deadlineSeen.promise, 'the deadline')
    await new Promise<void>((resolve) => setImmediate(resolve))
    expect(log).toEqual(['deadline passed; carrying on']) // no result while the body still runs
    release.resolve()
    const result = await pending
    expect(log).toEqual(['deadline passed; carrying on', 'body finally', 'result'])
    expect(codeOf(result)).toBe('TOOL_TIMEOUT')
  })

  it('caller abort racing the deadline: ABORTED wins', async () => {
    const { ctx, tools, input } = await setup()
    await ctx.plugin(TimeoutPolicy, {})
    const caller = new AbortController()
    tools.register(
      tool(
        'racer',
        async (_args, exec) => {
          caller.abort()
          await untilAborted(exec.signal)
          await new Promise<void>((resolve) => setTimeout(resolve, 40)) // the 20 ms deadline fires meanwhile
          return 'partial'
        },
        { timeoutMs: 20 },
      ),
    )
    const result = await tools.execute(input('t3', 'racer', caller.signal))
    expect(codeOf(result)).toBe('ABORTED')
  })

  it('defaultTimeoutMs applies to tools without timeoutMs; a body within budget succeeds', async () => {
    const { ctx, tools, input } = await setup()
    await ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: 20 })
    tools.register(tool('undeclared', async (_args, exec) => untilAborted(exec.signal).then(() => 'late')))
    tools.register(tool('quick', async () => 'quick', { timeoutMs: 10_000 }))
    const [late, quick] = await Promise.all([
      tools.execute(input('t4', 'undeclared')),
      tools.execute(input('t5', 'quick')),
    ])
    expect(late.isError && late.error.info).toMatchObject({ code: 'TOOL_TIMEOUT', timeoutMs: 20 })
    expect(quick).toMatchObject({ isError: false, value: 'quick' })
  })

  it('uses the definition the agent sees (a scoped tool shadows the global one)', async () => {
    const { ctx, tools, agent, input } = await setup()
    await ctx.plugin(TimeoutPolicy, {})
    const waitForAbort = async (_args: unknown, exec: ToolRunContext) => {
      await untilAborted(exec.signal)
      return 'aborted'
    }
    tools.register(tool('shadowed', async () => 'global has no deadline'))
    agent.ctx.tools.register(tool('shadowed', waitForAbort, { timeoutMs: 20 }))
    expect(codeOf(await tools.execute(input('t6', 'shadowed')))).toBe('TOOL_TIMEOUT')
  })

  it('timeoutMs never reaches schemas()', async () => {
    const { tools, agent } = await setup()
    tools.register(tool('slow', async () => 'x', { timeoutMs: 1234, isConcurrencySafe: () => true }))
    for (const schemas of [tools.schemas(), tools.schemas(agent)]) {
      expect(schemas).toEqual([
        { name: 'slow', description: 'slow (test tool)', parameters: { type: 'object', properties: {} } },
      ])
      expect(JSON.stringify(schemas)).not.toContain('timeoutMs')
      expect(JSON.stringify(schemas)).not.toContain('1234')
    }
  })
})

describe('R-SCHED-3 approval through the pipeline (ask → only allowed-once proceeds)', () => {
  async function askSetup() {
    const env = await setup()
    let ran = 0
    env.tools.register(
      tool('write', async () => {
        ran++
        return 'written'
      }),
    )
    env.ctx.on('tools/pre-execute', (exec, next) =>
      exec.name === 'write' ? Promise.resolve({ kind: 'ask', reason: 'writes need approval' }) : next(),
    )
    return { ...env, ran: () => ran }
  }

  it('allowed-once proceeds, and the service receives the plain request with the execution and agent beside it', async () => {
    const env = await askSetup()
    const seen: ApprovalRequest[] = []
    const contexts: ApprovalContext[] = []
    await env.ctx.plugin(CallbackApproval, {
      decide(request, context) {
        seen.push(request)
        contexts.push(context)
        return { kind: 'allowed-once' }
      },
    })
    const result = await env.tools.execute(env.input('w1', 'write'))
    expect(result).toMatchObject({ isError: false, value: 'written' })
    expect(env.ran()).toBe(1)
    expect(seen).toHaveLength(1)
    expect(contexts[0].agent).toBe(env.agent)
    expect(seen[0].reason).toBe('writes need approval')
    expect(contexts[0].execution).toMatchObject({ callId: 'w1', name: 'write' })
    expect(JSON.parse(JSON.stringify(seen[0]))).toEqual({
      callId: 'w1',
      rootCallId: 'w1',
      parentCallId: null,
      agentId: env.agent.id,
      toolName: 'write',
      arguments: seen[0].arguments,
      reason: 'writes need approval',
    })
  })

  it.each<[string, () => ApprovalOutcome | Promise<ApprovalOutcome>]>([
    ['denied', () => ({ kind: 'denied', reason: 'not today' })],
    ['cancelled', () => ({ kind: 'cancelled' })],
    ['an unknown kind', () => ({ kind: 'allowed-forever' }) as unknown as ApprovalOutcome],
    [
      'a throwing decide',
      () => {
        throw new Error('approver crashed')
      },
    ],
  ])('%s is a denial and the body never runs', async (_, decide) => {
    const env = await askSetup()
    await env.ctx.plugin(CallbackApproval, { decide })
    const result = await env.tools.execute(env.input('w2', 'write'))
    expect(codeOf(result)).toBe('TOOL_DENIED')
    expect(env.ran()).toBe(0)
  })

  it('a missing approval service is a denial', async () => {
    const env = await askSetup()
    const result = await env.tools.execute(env.input('w3', 'write'))
    expect(codeOf(result)).toBe('TOOL_DENIED')
    expect(result.isError && result.error.message).toMatch(/no approval service/)
    expect(env.ran()).toBe(0)
  })

  it('a batch asks serially through the service and runs only the approved calls', async () => {
    const env = await askSetup()
    await env.ctx.plugin(CallbackApproval, {
      decide: (request) => (request.callId === 'ok' ? { kind: 'allowed-once' } : { kind: 'denied', reason: 'no' }),
    })
    const { results } = await executeBatch(env.tools, [env.input('ok', 'write'), env.input('no', 'write')])
    expect(results.map((entry) => codeOf(entry.result) ?? 'ok')).toEqual(['ok', 'TOOL_DENIED'])
    expect(env.ran()).toBe(1)
  })
})
