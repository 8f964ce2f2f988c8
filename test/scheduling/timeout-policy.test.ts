import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import '../../src/runtime/events.js'
import type {
  Agent,
  ToolDispatchExecution,
  ToolExecutionResult,
  ToolExecutionToken,
} from '../../src/contract/execution.js'
import { TimeoutPolicy } from '../../src/scheduling/timeout-policy.js'
import { codeOf, deferred, flush, settles, success } from './fakes.js'

/**
 * Unit tests against a bare Cordis context: a fake `tools` lookup and the `tools/execute`
 * waterfall driven directly (the pipeline integration lives in integration.test.ts).
 */
async function setup(timeouts: Record<string, number | undefined>, config?: { defaultTimeoutMs?: number }) {
  const ctx = new Context()
  const lookups: Array<[string, Agent | undefined]> = []
  const tools = {
    get(name: string, scope?: Agent) {
      lookups.push([name, scope])
      return name in timeouts ? { name, timeoutMs: timeouts[name] } : undefined
    },
  }
  ctx.provide('tools', tools as unknown as Context['tools'])
  await ctx.plugin(TimeoutPolicy, config)
  return { ctx, lookups }
}

function dispatchExec(name: string, signal: AbortSignal, agent?: Agent): ToolDispatchExecution {
  return {
    callId: `call-${name}`,
    rootCallId: `call-${name}`,
    parentCallId: null,
    name,
    arguments: {},
    agent,
    token: Symbol('token') as ToolExecutionToken,
    signal,
  }
}

function run(ctx: Context, exec: ToolDispatchExecution, body: () => Promise<ToolExecutionResult>) {
  return ctx.waterfall('tools/execute', exec, body)
}

describe('R-SCHED-2 TimeoutPolicy (unit, fake waterfall)', () => {
  it('leaves calls without a budget alone (same signal, same result)', async () => {
    const { ctx } = await setup({ plain: undefined })
    const caller = new AbortController().signal
    const exec = dispatchExec('plain', caller)
    const expected = success('ok')
    let seen: AbortSignal | undefined
    const result = await run(ctx, exec, async () => {
      seen = exec.signal
      return expected
    })
    expect(result).toBe(expected)
    expect(seen).toBe(caller)
    const unknown = await run(ctx, dispatchExec('not-registered', caller), async () => expected)
    expect(unknown).toBe(expected)
  })

  it('a cooperative body observes the replaced signal at the deadline and the call reports TOOL_TIMEOUT', async () => {
    const { ctx } = await setup({ slow: 20 })
    const caller = new AbortController().signal
    const exec = dispatchExec('slow', caller)
    let reason: unknown
    const result = await run(ctx, exec, async () => {
      expect(exec.signal).not.toBe(caller)
      await new Promise<void>((resolve) => exec.signal.addEventListener('abort', () => resolve(), { once: true }))
      reason = exec.signal.reason
      throw reason
    })
    expect(result).toEqual({
      isError: true,
      error: {
        message: 'Tool "slow" timed out after 20 ms',
        info: { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT', timeoutMs: 20 },
      },
      content: [{ type: 'text', text: 'Tool "slow" timed out after 20 ms' }],
    })
    expect(reason).toMatchObject({ name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' })
    expect(exec.signal).toBe(caller) // restored after the delegated lifetime
    expect(caller.aborted).toBe(false)
  })

  it('an uncooperative body is awaited to quiescence before TOOL_TIMEOUT is reported', async () => {
    const { ctx } = await setup({ stubborn: 20 })
    const exec = dispatchExec('stubborn', new AbortController().signal)
    const log: string[] = []
    const release = deferred()
    const deadlineSeen = deferred()
    const outcome = run(ctx, exec, async () => {
      try {
        await new Promise<void>((resolve) => exec.signal.addEventListener('abort', () => resolve(), { once: true }))
        log.push('deadline seen, ignoring it')
        deadlineSeen.resolve()
        await release.promise
        return success('late')
      } finally {
        log.push('body finally')
      }
    }).then((result) => {
      log.push('result')
      return result
    })
    // Issue 22: wait for the deadline itself (bounded generously), not for a number of loop turns.
    await settles(deadlineSeen.promise, 'the deadline')
    await flush()
    expect(log).toEqual(['deadline seen, ignoring it']) // no result while the body still runs
    release.resolve()
    const result = await outcome
    expect(log).toEqual(['deadline seen, ignoring it', 'body finally', 'result'])
    expect(codeOf(result)).toBe('TOOL_TIMEOUT') // a late success past the deadline is still a timeout
  })

  it('caller cancellation wins: the result is left to the pipeline even when the deadline fires later', async () => {
    const { ctx } = await setup({ slow: 20 })
    const caller = new AbortController()
    const exec = dispatchExec('slow', caller.signal)
    const passthrough = success('cancelled body result')
    const result = await run(ctx, exec, async () => {
      caller.abort(new Error('caller gave up'))
      expect(exec.signal.aborted).toBe(true)
      expect(exec.signal.reason).toEqual(new Error('caller gave up'))
      await new Promise<void>((resolve) => setTimeout(resolve, 40)) // let the deadline fire too
      return passthrough
    })
    expect(result).toBe(passthrough)
  })

  it('a caller already aborted at entry is not wrapped', async () => {
    const { ctx } = await setup({ slow: 20 })
    const caller = AbortSignal.abort()
    const exec = dispatchExec('slow', caller)
    const result = await run(ctx, exec, async () => {
      expect(exec.signal).toBe(caller)
      return success('x')
    })
    expect(codeOf(result)).toBeUndefined()
  })

  it('a body that finishes in time keeps its result and the timer is cleared', async () => {
    const { ctx } = await setup({ quick: 20 })
    const exec = dispatchExec('quick', new AbortController().signal)
    let inner: AbortSignal | undefined
    const expected = success('fast')
    const result = await run(ctx, exec, async () => {
      inner = exec.signal
      return expected
    })
    expect(result).toBe(expected)
    await new Promise<void>((resolve) => setTimeout(resolve, 40))
    expect(inner?.aborted).toBe(false)
  })

  it('defaultTimeoutMs covers tools without timeoutMs; a declared timeoutMs wins over it', async () => {
    const { ctx } = await setup({ undeclared: undefined, declared: 20 }, { defaultTimeoutMs: 30 })
    const waitForAbort = (exec: ToolDispatchExecution) => async () => {
      await new Promise<void>((resolve) => exec.signal.addEventListener('abort', () => resolve(), { once: true }))
      return success('aborted')
    }
    const a = dispatchExec('undeclared', new AbortController().signal)
    const b = dispatchExec('declared', new AbortController().signal)
    const [ra, rb] = await Promise.all([run(ctx, a, waitForAbort(a)), run(ctx, b, waitForAbort(b))])
    expect(ra.isError && ra.error.info).toMatchObject({ code: 'TOOL_TIMEOUT', timeoutMs: 30 })
    expect(rb.isError && rb.error.info).toMatchObject({ code: 'TOOL_TIMEOUT', timeoutMs: 20 })
  })

  it("looks the definition up in the call's agent scope and keeps tool-deferred contexts", async () => {
    const { ctx, lookups } = await setup({ slow: 20 })
    const agent: Agent = { id: 'agent-1', ctx }
    const exec = dispatchExec('slow', new AbortController().signal, agent)
    const context = { role: 'user' as const, content: [{ type: 'text' as const, text: 'note' }] }
    const result = await run(ctx, exec, async () => {
      await new Promise<void>((resolve) => exec.signal.addEventListener('abort', () => resolve(), { once: true }))
      return { ...success('late'), additionalContexts: [context] }
    })
    expect(lookups).toEqual([['slow', agent]])
    expect(codeOf(result)).toBe('TOOL_TIMEOUT')
    expect(result.additionalContexts).toEqual([context])
  })

  it('a rejecting chain before the deadline still rejects, with the signal restored', async () => {
    const { ctx } = await setup({ slow: 10_000 })
    const caller = new AbortController().signal
    const exec = dispatchExec('slow', caller)
    await expect(
      run(ctx, exec, async () => {
        throw new Error('foreign chain broke')
      }),
    ).rejects.toThrow('foreign chain broke')
    expect(exec.signal).toBe(caller)
  })

  it("a sub-call's open approval question pauses its parent's deadline and idle budget (pause once)", async () => {
    const ctx = new Context()
    ctx.provide('tools', { get: () => ({ timeoutMs: 40, idleTimeoutMs: 30 }) } as unknown as Context['tools'])
    await ctx.plugin(TimeoutPolicy)
    const exec = dispatchExec('program', new AbortController().signal)
    const sub = (n: number) => ({ ...dispatchExec(`sub-${n}`, exec.signal), parent: exec.token })
    const [one, two] = [sub(1), sub(2)]
    const emit = (event: string, ...args: unknown[]) => (ctx.emit as (...all: unknown[]) => void)(event, ...args)
    const waitMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const result = await run(ctx, exec, async () => {
      // Two overlapping asks: the first answer must not restart the budgets while the second is open.
      emit('tools/approval-asked', {}, one)
      emit('tools/approval-asked', {}, two)
      emit('tools/approval-asked', {}, one)
      await waitMs(60)
      emit('tools/approval-answered', {}, { kind: 'allowed-once' }, 'service', one)
      emit('tools/approval-answered', {}, { kind: 'allowed-once' }, 'service', one)
      await waitMs(60)
      expect(exec.signal.aborted).toBe(false)
      emit('tools/approval-answered', {}, { kind: 'allowed-once' }, 'service', two)
      return success('done')
    })
    expect(result).toEqual(success('done'))
    // With no question open, the budgets run again and still end a call that stalls.
    const stalled = await run(ctx, exec, async () => {
      emit('tools/approval-asked', {}, one)
      emit('tools/approval-answered', {}, { kind: 'allowed-once' }, 'service', one)
      await new Promise<void>((resolve) => exec.signal.addEventListener('abort', () => resolve(), { once: true }))
      throw exec.signal.reason
    })
    expect(codeOf(stalled)).toBe('TOOL_TIMEOUT')
  })

  it.each([0, -5, Number.POSITIVE_INFINITY, Number.NaN, '10'])('rejects defaultTimeoutMs %s', async (bad) => {
    const ctx = new Context()
    ctx.provide('tools', { get: () => undefined } as unknown as Context['tools'])
    await expect(ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: bad as number })).rejects.toMatchObject({
      name: 'ConfigError',
      code: 'INVALID_CONFIG',
      path: 'TimeoutPolicy config.defaultTimeoutMs',
      message: expect.stringMatching(/^TimeoutPolicy config\.defaultTimeoutMs: expected a positive finite number/),
    })
  })
})
