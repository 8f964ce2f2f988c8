import { describe, expect, it, vi } from 'vitest'
import type { ToolExecution, ToolProgress, ToolRunContext } from '../../src/contract/execution.js'
import { createToolRuntime } from '../../src/preset/create.js'
import { createAgent } from '../../src/runtime/agent.js'
import { TimeoutPolicy } from '../../src/scheduling/timeout-policy.js'
import { codeOf, tool } from './fakes.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function untilAborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason)
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true })
  })
}

describe('exec.progress and tools/progress', () => {
  it('reaches listeners as (ToolExecution, frozen progress) in order, scope-filtered', async () => {
    const { ctx, tools } = await createToolRuntime()
    const a = createAgent(ctx, { id: 'a' })
    const b = createAgent(ctx, { id: 'b' })
    tools.register(
      tool('work', async (_args, exec) => {
        exec.progress({ message: 'starting' })
        exec.progress({ fraction: 0.5 })
        exec.progress({ message: 'done', fraction: 1 })
        return 'ok'
      }),
    )
    const seenGlobal: Array<[ToolExecution, ToolProgress]> = []
    const seenA: string[] = []
    const seenB: string[] = []
    ctx.on('tools/progress', (exec, progress) => {
      seenGlobal.push([exec, progress])
    })
    a.ctx.on('tools/progress', (exec) => {
      seenA.push(exec.callId)
    })
    b.ctx.on('tools/progress', (exec) => {
      seenB.push(exec.callId)
    })
    const result = await tools.execute({
      callId: 'c1',
      name: 'work',
      arguments: {},
      agent: a,
      signal: new AbortController().signal,
    })
    expect(result.isError).toBe(false)
    expect(seenGlobal.map(([, p]) => p)).toEqual([
      { message: 'starting' },
      { fraction: 0.5 },
      { message: 'done', fraction: 1 },
    ])
    for (const [exec, progress] of seenGlobal) {
      expect(exec.callId).toBe('c1')
      expect(exec.name).toBe('work')
      expect(Object.isFrozen(exec)).toBe(true)
      expect(Object.isFrozen(progress)).toBe(true)
    }
    expect(seenA).toEqual(['c1', 'c1', 'c1'])
    expect(seenB).toEqual([])
  })

  it('rejects malformed progress at the tool with a path-qualified TypeError', async () => {
    const { tools } = await createToolRuntime()
    const thrown: string[] = []
    tools.register(
      tool('bad', async (_args, exec) => {
        for (const p of [null, 'text', { message: 3 }, { fraction: 2 }, { fraction: Number.NaN }, { fraction: -0.1 }]) {
          try {
            exec.progress(p as unknown as ToolProgress)
          } catch (error) {
            thrown.push((error as Error).message)
          }
        }
        return 'ok'
      }),
    )
    await tools.execute({ callId: 'c', name: 'bad', arguments: {}, signal: new AbortController().signal })
    expect(thrown).toEqual([
      'exec.progress(progress): expected an object { message?, fraction? }',
      'exec.progress(progress): expected an object { message?, fraction? }',
      'exec.progress(progress).message: expected a string, got number',
      'exec.progress(progress).fraction: expected a number in [0, 1], got 2',
      'exec.progress(progress).fraction: expected a number in [0, 1], got NaN',
      'exec.progress(progress).fraction: expected a number in [0, 1], got -0.1',
    ])
  })

  it('a throwing or rejecting listener never reaches the tool or the other listeners', async () => {
    const { ctx, tools } = await createToolRuntime()
    const seen: string[] = []
    ctx.on('tools/progress', () => {
      throw new Error('listener boom')
    })
    ctx.on('tools/progress', async () => {
      throw new Error('async boom')
    })
    ctx.on('tools/progress', (_exec, progress) => {
      seen.push(progress.message ?? '')
    })
    tools.register(
      tool('work', async (_args, exec) => {
        exec.progress({ message: 'one' })
        exec.progress({ message: 'two' })
        return 'ok'
      }),
    )
    const result = await tools.execute({
      callId: 'c',
      name: 'work',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result).toMatchObject({ isError: false, value: 'ok' })
    expect(seen).toEqual(['one', 'two'])
  })

  it('progress after the body settled is a no-op', async () => {
    const { ctx, tools } = await createToolRuntime()
    let late: ToolRunContext | undefined
    const seen: ToolProgress[] = []
    ctx.on('tools/progress', (_exec, p) => {
      seen.push(p)
    })
    tools.register(
      tool('work', async (_args, exec) => {
        late = exec
        return 'ok'
      }),
    )
    await tools.execute({ callId: 'c', name: 'work', arguments: {}, signal: new AbortController().signal })
    late?.progress({ message: 'too late' })
    expect(seen).toEqual([])
  })
})

describe('TimeoutPolicy idleTimeoutMs', () => {
  it('an idle call ends as TOOL_TIMEOUT (per-tool idleTimeoutMs), and its body sees the abort', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(TimeoutPolicy, {})
    let reason: unknown
    tools.register(
      tool(
        'idle',
        async (_args, exec) => {
          reason = await untilAborted(exec.signal)
          throw reason
        },
        { idleTimeoutMs: 40 },
      ),
    )
    const result = await tools.execute({
      callId: 'c',
      name: 'idle',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result).toEqual({
      isError: true,
      error: {
        message: 'Tool "idle" timed out after 40 ms without progress',
        info: { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT', timeoutMs: 40, idle: true },
      },
      content: [{ type: 'text', text: 'Tool "idle" timed out after 40 ms without progress' }],
    })
    expect((reason as Error).name).toBe('ToolTimeoutError')
  })

  it('progress keeps a slow but live tool running well past its idle budget', async () => {
    // On the clock the policy reads (timers and performance.now, faked): a loaded machine that
    // stalls the tool's loop past the budget must not decide this test.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    try {
      const { ctx, tools } = await createToolRuntime()
      await ctx.plugin(TimeoutPolicy, { idleTimeoutMs: 200 })
      tools.register(
        tool('live', async (_args, exec) => {
          // ~600 ms of work, reporting every 15 ms: three idle budgets long, never idle for one.
          for (let i = 0; i < 40; i++) {
            await sleep(15)
            if (exec.signal.aborted) throw exec.signal.reason
            exec.progress({ fraction: (i + 1) / 40 })
          }
          return 'finished'
        }),
      )
      const running = tools.execute({
        callId: 'c',
        name: 'live',
        arguments: {},
        signal: new AbortController().signal,
      })
      await vi.advanceTimersByTimeAsync(700)
      expect(await running).toMatchObject({ isError: false, value: 'finished' })
    } finally {
      vi.useRealTimers()
    }
  })

  it('the config idleTimeoutMs applies to tools that declare none; the tool value wins', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(TimeoutPolicy, { idleTimeoutMs: 30 })
    const quietThenDone = async (_args: unknown, exec: ToolRunContext) => {
      const outcome = await Promise.race([
        untilAborted(exec.signal).then(() => 'aborted'),
        sleep(120).then(() => 'done'),
      ])
      if (outcome === 'aborted') throw exec.signal.reason
      return outcome
    }
    tools.register(tool('default', quietThenDone))
    tools.register(tool('patient', quietThenDone, { idleTimeoutMs: 2_000 }))
    const [a, b] = await Promise.all([
      tools.execute({ callId: 'a', name: 'default', arguments: {}, signal: new AbortController().signal }),
      tools.execute({ callId: 'b', name: 'patient', arguments: {}, signal: new AbortController().signal }),
    ])
    expect(codeOf(a)).toBe('TOOL_TIMEOUT')
    expect(a.isError && a.error.message).toBe('Tool "default" timed out after 30 ms without progress')
    expect(b).toMatchObject({ isError: false, value: 'done' })
  })

  it('a tool with its own idleTimeoutMs is not subject to defaultTimeoutMs; timeoutMs still caps it', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: 40 })
    const reporting = (ms: number) => async (_args: unknown, exec: ToolRunContext) => {
      const end = Date.now() + ms
      while (Date.now() < end) {
        await sleep(5)
        if (exec.signal.aborted) throw exec.signal.reason
        exec.progress({ message: 'tick' })
      }
      return 'done'
    }
    tools.register(tool('live', reporting(150), { idleTimeoutMs: 1_000 }))
    tools.register(tool('capped', reporting(2_000), { idleTimeoutMs: 1_000, timeoutMs: 60 }))
    const live = await tools.execute({ callId: 'a', name: 'live', arguments: {}, signal: new AbortController().signal })
    const capped = await tools.execute({
      callId: 'b',
      name: 'capped',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(live).toMatchObject({ isError: false, value: 'done' })
    expect(capped.isError && capped.error.message).toBe('Tool "capped" timed out after 60 ms')
  })

  it('caller cancellation still wins over an idle budget', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(TimeoutPolicy, { idleTimeoutMs: 5_000 })
    tools.register(
      tool('wait', async (_args, exec) => {
        throw await untilAborted(exec.signal)
      }),
    )
    const controller = new AbortController()
    const pending = tools.execute({ callId: 'c', name: 'wait', arguments: {}, signal: controller.signal })
    setTimeout(() => controller.abort(), 10)
    expect(codeOf(await pending)).toBe('ABORTED')
  })

  it('refuses a malformed idleTimeoutMs in the config and in a definition', async () => {
    const { ctx, tools } = await createToolRuntime()
    await expect(ctx.plugin(TimeoutPolicy, { idleTimeoutMs: -1 })).rejects.toThrow(
      'TimeoutPolicy config.idleTimeoutMs: expected a positive finite number, got -1',
    )
    expect(() => tools.register(tool('bad', async () => 1, { idleTimeoutMs: Number.POSITIVE_INFINITY }))).toThrow(
      'definition.idleTimeoutMs: expected a positive finite number of milliseconds, got Infinity',
    )
  })
})
