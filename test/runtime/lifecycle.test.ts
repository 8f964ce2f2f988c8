// Lifecycle (issue 17): what createToolRuntime() and createAgent() return is disposable; afterwards
// the runtime (or agent) refuses work with RUNTIME_DISPOSED / AGENT_DISPOSED, and calls in flight are
// aborted yet still produce exactly one result.
import { describe, expect, it } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/index.js'
import {
  CallbackApproval,
  createAgent,
  createToolRuntime,
  type ToolExecutionResult,
  ToolPipelineError,
} from '../../src/index.js'
import { deferred, rawTool, signal } from './helpers.js'

function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? (result.error.info?.code as string | undefined) : undefined
}

/** A body that waits for its signal and reports how it ended. */
function waitingTool(name: string, started: () => void) {
  return rawTool(name, (_args, exec) => {
    started()
    return new Promise((_resolve, reject) => {
      exec.signal.addEventListener('abort', () => reject(exec.signal.reason), { once: true })
    })
  })
}

function thrown(fn: () => unknown): ToolPipelineError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(ToolPipelineError)
    return error as ToolPipelineError
  }
  throw new Error('expected a throw')
}

describe('disposing the runtime', () => {
  it('afterwards register, restrict, execute and run_code fail with RUNTIME_DISPOSED', async () => {
    const runtime = await createToolRuntime({ mode: 'both' })
    const { ctx, tools } = runtime
    tools.register(rawTool('echo'))
    const agent = createAgent(ctx, { id: 'a' })
    const agentTools = agent.ctx.tools
    await runtime.dispose()

    expect(thrown(() => tools.register(rawTool('late'))).code).toBe('RUNTIME_DISPOSED')
    expect(thrown(() => tools.register(rawTool('late'))).message).toMatch(
      /tools\.register\(\): the tool runtime was disposed/,
    )
    expect(thrown(() => agentTools.restrict({ deny: ['echo'] })).code).toBe('RUNTIME_DISPOSED')
    expect(thrown(() => tools.schemas()).code).toBe('RUNTIME_DISPOSED')
    expect(thrown(() => tools.sdk()).code).toBe('RUNTIME_DISPOSED')
    const direct = await tools.execute({ callId: 'c1', name: 'echo', arguments: {}, signal: signal() })
    expect(codeOf(direct)).toBe('RUNTIME_DISPOSED')
    expect(direct.isError && direct.error.message).toMatch(/the tool runtime was disposed/)
    const program = await tools.execute({
      callId: 'c2',
      name: RUN_CODE_NAME,
      arguments: { code: 'return 1', description: 'one' },
      signal: signal(),
    })
    expect(codeOf(program)).toBe('RUNTIME_DISPOSED')
    expect(Object.isFrozen(program)).toBe(true)
    // Idempotent.
    await runtime.dispose()
  })

  it('`await using` disposes at the end of the block', async () => {
    let kept: Awaited<ReturnType<typeof createToolRuntime>>['tools'] | undefined
    {
      await using runtime = await createToolRuntime()
      runtime.tools.register(rawTool('echo'))
      kept = runtime.tools
      const ok = await kept.execute({ callId: 'c', name: 'echo', arguments: {}, signal: signal() })
      expect(ok.isError).toBe(false)
    }
    const after = await kept.execute({ callId: 'c', name: 'echo', arguments: {}, signal: signal() })
    expect(codeOf(after)).toBe('RUNTIME_DISPOSED')
  })

  it('aborts a running body through its signal; the call still yields its ABORTED result, and dispose waits for it', async () => {
    const { tools, dispose } = await createToolRuntime()
    const started = deferred()
    tools.register(waitingTool('wait', () => started.resolve()))
    const call = tools.execute({ callId: 'w', name: 'wait', arguments: {}, signal: signal() })
    await started.promise
    let settled = false
    void call.then(() => {
      settled = true
    })
    await dispose()
    expect(settled).toBe(true)
    const result = await call
    expect(codeOf(result)).toBe('ABORTED')
    expect(Object.isFrozen(result)).toBe(true)
  })

  it('a body that ignores its signal finishes, and its call reports ABORTED rather than a late success', async () => {
    const { tools, dispose } = await createToolRuntime()
    const release = deferred()
    const started = deferred()
    tools.register(
      rawTool('stubborn', async () => {
        started.resolve()
        await release.promise
        return 'done'
      }),
    )
    const call = tools.execute({ callId: 's', name: 'stubborn', arguments: {}, signal: signal() })
    await started.promise
    const disposing = dispose()
    release.resolve()
    await disposing
    expect(codeOf(await call)).toBe('ABORTED')
  })

  it('cuts short a call waiting for approval (ABORTED_BEFORE_DISPATCH), so dispose never hangs on it', async () => {
    const { ctx, tools, dispose } = await createToolRuntime()
    const asked = deferred()
    await ctx.plugin(CallbackApproval, {
      decide: () => {
        asked.resolve()
        return new Promise(() => {}) // never answers
      },
    })
    let ran = false
    tools.register(
      rawTool('guarded', async () => {
        ran = true
        return 1
      }),
    )
    ctx.on('tools/pre-execute', () => Promise.resolve({ kind: 'ask', reason: 'check' }))
    const agent = createAgent(ctx, { id: 'a' })
    const call = tools.execute({ callId: 'g', name: 'guarded', arguments: {}, agent, signal: signal() })
    await asked.promise
    await dispose()
    expect(codeOf(await call)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(ran).toBe(false)
  })

  it('unloading the service from a Cordis app disposes it too', async () => {
    const { ctx, tools } = await createToolRuntime()
    const { Context } = await import('cordis')
    expect(ctx).toBeInstanceOf(Context)
    await ctx.fiber.dispose()
    expect(thrown(() => tools.register(rawTool('late'))).code).toBe('RUNTIME_DISPOSED')
  })
})

describe('disposal when a tools/execute wrapper replaced the signal (issue 23: the body signal is the call fusion)', () => {
  /** A wrapper that gives the body a signal of its own, as TimeoutPolicy does. */
  function replacingWrapper(ctx: Awaited<ReturnType<typeof createToolRuntime>>['ctx']) {
    const wrapper = new AbortController()
    ctx.on('tools/execute', (exec, next) => {
      exec.signal = wrapper.signal
      return next()
    })
    return wrapper
  }

  it('aborts the body with RUNTIME_DISPOSED, leaving the caller and wrapper signals alone', async () => {
    const { ctx, tools, dispose } = await createToolRuntime()
    const wrapper = replacingWrapper(ctx)
    const started = deferred()
    let reason: unknown
    tools.register(
      rawTool('wait', (_args, exec) => {
        started.resolve()
        return new Promise((_resolve, reject) => {
          exec.signal.addEventListener(
            'abort',
            () => {
              reason = exec.signal.reason
              reject(exec.signal.reason)
            },
            { once: true },
          )
        })
      }),
    )
    const caller = signal()
    const call = tools.execute({ callId: 'w', name: 'wait', arguments: {}, signal: caller })
    await started.promise
    await dispose()
    expect(codeOf(await call)).toBe('ABORTED')
    expect((reason as Error).name).toBe('RuntimeDisposedError')
    expect(caller.aborted).toBe(false)
    expect(wrapper.signal.aborted).toBe(false)
  })

  it('the wrapper signal still reaches the body with its own reason, and a later disposal changes nothing', async () => {
    const { ctx, tools, dispose } = await createToolRuntime()
    const wrapper = replacingWrapper(ctx)
    const started = deferred()
    let seen: AbortSignal | undefined
    tools.register(
      rawTool('wait', (_args, exec) => {
        seen = exec.signal
        started.resolve()
        return new Promise((_resolve, reject) => {
          exec.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })
        })
      }),
    )
    const call = tools.execute({ callId: 'w', name: 'wait', arguments: {}, signal: signal() })
    await started.promise
    wrapper.abort('the wrapper gave up')
    expect(codeOf(await call)).toBe('TOOL_ERROR')
    expect(seen?.reason).toBe('the wrapper gave up')
    await dispose()
    expect(seen?.reason).toBe('the wrapper gave up')
  })

  it('a body that reads its signal only after the runtime was disposed finds it aborted', async () => {
    const { ctx, tools, dispose } = await createToolRuntime()
    replacingWrapper(ctx)
    const started = deferred()
    const go = deferred()
    let reason: unknown
    tools.register(
      rawTool('late', async (_args, exec) => {
        started.resolve()
        await go.promise
        reason = exec.signal.aborted ? exec.signal.reason : 'not aborted'
        return null
      }),
    )
    const call = tools.execute({ callId: 'l', name: 'late', arguments: {}, signal: signal() })
    await started.promise
    const disposing = dispose()
    go.resolve()
    await disposing
    expect(codeOf(await call)).toBe('ABORTED')
    expect((reason as Error).name).toBe('RuntimeDisposedError')
  })
})

describe('disposing an agent', () => {
  it('afterwards its register, restrict, execute and run_code fail with AGENT_DISPOSED; the rest keeps working', async () => {
    const { ctx, tools } = await createToolRuntime({ mode: 'both' })
    tools.register(rawTool('echo'))
    const agent = createAgent(ctx, { id: 'worker' })
    const child = createAgent(agent.ctx, { id: 'helper' })
    const agentTools = agent.ctx.tools
    const childTools = child.ctx.tools
    agentTools.register(rawTool('mine'))
    await agent.dispose()

    const refused = thrown(() => agentTools.register(rawTool('late')))
    expect(refused.code).toBe('AGENT_DISPOSED')
    expect(refused.message).toMatch(/agent "worker" was disposed/)
    expect(thrown(() => agentTools.restrict({ deny: ['echo'] })).code).toBe('AGENT_DISPOSED')
    expect(thrown(() => childTools.register(rawTool('late'))).code).toBe('AGENT_DISPOSED')
    for (const [who, name, args] of [
      [agent, 'echo', {}],
      [agent, 'mine', {}],
      [child, 'echo', {}],
      [agent, RUN_CODE_NAME, { code: 'return 1', description: 'one' }],
    ] as const) {
      const result = await tools.execute({ callId: 'c', name, arguments: args, agent: who, signal: signal() })
      expect(codeOf(result), `${who.id}/${name}`).toBe('AGENT_DISPOSED')
    }
    // The global layer and other agents are untouched.
    const other = createAgent(ctx, { id: 'other' })
    const ok = await tools.execute({ callId: 'c', name: 'echo', arguments: {}, agent: other, signal: signal() })
    expect(ok.isError).toBe(false)
    tools.register(rawTool('still-open'))
  })

  it('aborts only that agent’s running bodies; `await using` disposes it', async () => {
    const { ctx, tools } = await createToolRuntime()
    const startedA = deferred()
    const startedB = deferred()
    tools.register(waitingTool('wait-a', () => startedA.resolve()))
    tools.register(
      rawTool('wait-b', async (_args, exec) => {
        startedB.resolve()
        await new Promise((resolve) => setTimeout(resolve, 50))
        return exec.signal.aborted ? 'aborted' : 'finished'
      }),
    )
    const other = createAgent(ctx, { id: 'other' })
    let call: Promise<ToolExecutionResult>
    {
      await using agent = createAgent(ctx, { id: 'scoped' })
      call = tools.execute({ callId: 'a', name: 'wait-a', arguments: {}, agent, signal: signal() })
      await startedA.promise
    }
    const otherCall = tools.execute({ callId: 'b', name: 'wait-b', arguments: {}, agent: other, signal: signal() })
    await startedB.promise
    expect(codeOf(await call)).toBe('ABORTED')
    const otherResult = await otherCall
    expect(otherResult.isError).toBe(false)
    expect(!otherResult.isError && otherResult.value).toBe('finished')
  })
})

describe('the run context a body receives', () => {
  it('carries the execution as own enumerable fields, a lazily linked signal a spread keeps, and is frozen', async () => {
    const runtime = await createToolRuntime()
    const { tools } = runtime
    const caller = new AbortController()
    let seen: Record<string, unknown> | undefined
    tools.register(
      rawTool('probe', async (_args, exec) => {
        const copy: Record<string, unknown> = { ...exec }
        seen = { keys: Object.keys(exec).sort(), frozen: Object.isFrozen(exec), copy }
        return 1
      }),
    )
    const result = await tools.execute({ callId: 'p1', name: 'probe', arguments: {}, signal: caller.signal })
    expect(result.isError).toBe(false)
    expect(seen?.keys).toEqual(
      [
        'agent',
        'arguments',
        'callId',
        'concludeTurn',
        'deferContext',
        'name',
        'parent',
        'parentCallId',
        'progress',
        'rootCallId',
        'signal',
        'token',
      ].sort(),
    )
    expect(seen?.frozen).toBe(true)
    const copy = seen?.copy as { signal: AbortSignal; callId: string }
    expect(copy.callId).toBe('p1')
    // The spread read the linked signal: it follows the caller's.
    expect(copy.signal).toBeInstanceOf(AbortSignal)
    expect(copy.signal.aborted).toBe(false)
    await runtime.dispose()
  })
})
