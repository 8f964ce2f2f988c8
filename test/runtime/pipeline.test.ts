import { type Context, Service } from 'cordis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { ToolExecution } from '../../src/contract/execution.js'
import { createAgent, createToolRuntime, type ToolExecutionResult } from '../../src/index.js'
import { deferred, isDeepFrozen, rawTool, signal } from './helpers.js'

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled)
})
afterAll(async () => {
  await new Promise((r) => setTimeout(r, 20))
  process.off('unhandledRejection', onUnhandled)
  expect(unhandled).toEqual([])
})

const code = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : 'OK')

async function setup() {
  const { ctx, tools } = await createToolRuntime()
  const results: Array<[ToolExecution, ToolExecutionResult]> = []
  ctx.on('tools/result', (exec, result) => {
    results.push([exec, result])
  })
  return { ctx, tools, results }
}

describe('R-EXEC-1 input materialization and identity', () => {
  it('materializes and deep-freezes arguments once, assigns a fresh symbol token and resolves rootCallId', async () => {
    const { tools, results } = await setup()
    let seen: ToolExecution | undefined
    tools.register(
      rawTool('t', async (_args, exec) => {
        seen = exec
        return null
      }),
    )
    const args = { a: [1, { b: 2 }] }
    await tools.execute({ callId: 'root', name: 't', arguments: args, signal: signal() })
    expect(seen?.arguments).toEqual(args)
    expect(seen?.arguments).not.toBe(args)
    expect(isDeepFrozen(seen?.arguments)).toBe(true)
    expect(typeof seen?.token).toBe('symbol')
    expect(seen?.rootCallId).toBe('root')
    expect(Object.isFrozen(results[0][0])).toBe(true)
    args.a.push(3)
    expect(seen?.arguments).toEqual({ a: [1, { b: 2 }] })
  })

  it.each([
    [
      'a cycle',
      () => {
        const a: Record<string, unknown> = {}
        a.self = a
        return a
      },
    ],
    ['a BigInt', () => ({ n: 10n })],
    ['a function', () => ({ f: () => 1 })],
    ['-0', () => ({ z: -0 })],
  ])('non-JSON arguments (%s) are an INVALID_ARGS result with a path, and skip every policy', async (_label, make) => {
    const { ctx, tools, results } = await setup()
    const body = vi.fn(async () => null)
    const pre = vi.fn((_exec, next) => next())
    ctx.on('tools/pre-execute', pre)
    tools.register(rawTool('t', body))
    const result = await tools.execute({ callId: 'c', name: 't', arguments: make(), signal: signal() })
    expect(code(result)).toBe('INVALID_ARGS')
    expect(result.isError && result.error.message).toMatch(/arguments\./)
    expect(body).not.toHaveBeenCalled()
    expect(pre).not.toHaveBeenCalled()
    expect(results).toHaveLength(1)
  })

  it('nested calls carry parent and inherit rootCallId', async () => {
    const { tools } = await setup()
    const seen: ToolExecution[] = []
    tools.register(
      rawTool('inner', async (_a, exec) => {
        seen.push(exec)
        return 1
      }),
    )
    tools.register(
      rawTool('outer', async (_a, exec) => {
        seen.push(exec)
        const r = await tools.execute({
          callId: 'inner-1',
          name: 'inner',
          arguments: {},
          parent: exec.token,
          signal: exec.signal,
        })
        return r.isError ? null : r.value
      }),
    )
    const result = await tools.execute({ callId: 'outer-1', name: 'outer', arguments: {}, signal: signal() })
    expect(result.isError ? null : result.value).toBe(1)
    expect(seen[1].parent).toBe(seen[0].token)
    expect(seen[1].rootCallId).toBe('outer-1')
    // The body's run context carries parentCallId as its type promises: null at the top, the enclosing id below.
    expect(seen[0].parentCallId).toBeNull()
    expect(seen[1].parentCallId).toBe('outer-1')
    expect(Object.keys(seen[1])).toContain('parentCallId')
    expect(seen[1].token).not.toBe(seen[0].token)
  })

  it('a garbage input resolves to an INVALID_INPUT failure instead of rejecting', async () => {
    const { tools } = await setup()
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {} } as never)
    expect(code(result)).toBe('INVALID_INPUT')
    expect(result.isError && result.error.message).toMatch(/signal/)
  })
})

describe('R-EXEC-2 phase order', () => {
  it('runs pre-execute → guards → execute → body → post-execute → finalizeContent → tools/result', async () => {
    const { ctx, tools } = await setup()
    const order: string[] = []
    ctx.on('tools/pre-execute', async (_e, next) => {
      order.push('pre')
      return next()
    })
    tools.guard(() => {
      order.push('guard')
      return undefined
    })
    ctx.on('tools/execute', async (_e, next) => {
      order.push('execute:before')
      const r = await next()
      order.push('execute:after')
      return r
    })
    ctx.on('tools/post-execute', async (_e, _r, next) => {
      order.push('post')
      return next()
    })
    ctx.on('tools/result', () => {
      order.push('result')
    })
    tools.register(
      rawTool(
        't',
        async () => {
          order.push('body')
          return { ok: true }
        },
        {
          output: {
            schema: { type: 'object' },
            render: (_a, v) => {
              order.push('render')
              return [{ type: 'text', text: JSON.stringify(v) }]
            },
            presentationMeta: () => {
              order.push('meta')
              return { card: 'x' }
            },
          },
          finalizeContent: () => {
            order.push('finalize')
            return undefined
          },
        },
      ),
    )
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(order).toEqual([
      'pre',
      'guard',
      'execute:before',
      'body',
      'render',
      'meta',
      'execute:after',
      'post',
      'finalize',
      'result',
    ])
    expect(result).toMatchObject({ isError: false, value: { ok: true }, meta: { card: 'x' } })
  })

  it('resolves with the very object tools/result saw, deep-frozen', async () => {
    const { tools, results } = await setup()
    tools.register(rawTool('t', async () => ({ deep: { list: [1, 2] } })))
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(results[0][1]).toBe(result)
    expect(isDeepFrozen(result)).toBe(true)
  })
})

describe('R-EXEC-3 failures are results, never rejections', () => {
  it('an unknown tool is UNKNOWN_TOOL (ToolNotFoundError)', async () => {
    const { tools, results } = await setup()
    const result = await tools.execute({ callId: 'c', name: 'nope', arguments: {}, signal: signal() })
    expect(result.isError && result.error.info).toEqual({ name: 'ToolNotFoundError', code: 'UNKNOWN_TOOL' })
    expect(results).toHaveLength(1)
  })

  it.each([
    ['an Error', () => Promise.reject(new Error('boom')), 'boom', 'TOOL_ERROR'],
    ['a string', () => Promise.reject('plain string'), 'plain string', 'TOOL_ERROR'],
    ['an object', () => Promise.reject({ why: 1 }), '{"why":1}', 'TOOL_ERROR'],
    ['undefined', () => Promise.reject(undefined), 'undefined', 'TOOL_ERROR'],
    ['a coded error', () => Promise.reject(Object.assign(new Error('coded'), { code: 'E_MINE' })), 'coded', 'E_MINE'],
  ])('a body that throws %s becomes an error result with its message', async (_l, body, message, errorCode) => {
    const { tools } = await setup()
    tools.register(rawTool('t', body as never))
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(result.isError && result.error.message).toBe(message)
    expect(code(result)).toBe(errorCode)
    expect(result.content).toEqual([{ type: 'text', text: message }])
  })

  it('a synchronously throwing body is contained too', async () => {
    const { tools } = await setup()
    tools.register(
      rawTool('t', (() => {
        throw new Error('sync')
      }) as never),
    )
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(result.isError && result.error.message).toBe('sync')
  })

  it('a body returning non-JSON is INVALID_TOOL_OUTPUT', async () => {
    const { tools } = await setup()
    tools.register(rawTool('t', async () => ({ when: new Date() })))
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
    expect(result.isError && result.error.message).toMatch(/value\.when/)
  })

  it('a value outside the output schema is INVALID_TOOL_OUTPUT with every violation', async () => {
    const { tools } = await setup()
    tools.register(
      rawTool('t', async () => ({ a: 1, b: 'x' }), {
        output: {
          schema: {
            type: 'object',
            properties: { a: { type: 'string' }, b: { type: 'integer' } },
            required: ['a', 'b'],
          },
          render: () => [],
        },
      }),
    )
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
    expect(result.isError && result.error.message).toMatch(/value\.a/)
    expect(result.isError && result.error.message).toMatch(/value\.b/)
    expect(result.isError).toBe(true)
    expect('value' in result).toBe(false)
  })

  it('a renderer that throws or returns non-content is an error result', async () => {
    const { tools } = await setup()
    tools.register(
      rawTool('throws', async () => 1, {
        output: {
          schema: {},
          render: () => {
            throw new Error('render bug')
          },
        },
      }),
    )
    tools.register(rawTool('bad', async () => 1, { output: { schema: {}, render: () => [{ type: 'text' }] as never } }))
    const a = await tools.execute({ callId: 'a', name: 'throws', arguments: {}, signal: signal() })
    const b = await tools.execute({ callId: 'b', name: 'bad', arguments: {}, signal: signal() })
    expect(a.isError && a.error.message).toMatch(/render bug/)
    expect(b.isError && b.error.message).toMatch(/text: expected a string/)
  })

  it('presentationMeta is computed for top-level calls only', async () => {
    const { tools } = await setup()
    const meta = vi.fn(() => ({ m: 1 }))
    tools.register(rawTool('leaf', async () => 1, { output: { schema: {}, render: () => [], presentationMeta: meta } }))
    tools.register(
      rawTool('outer', async (_a, exec) => {
        const r = await tools.execute({
          callId: 'n',
          name: 'leaf',
          arguments: {},
          parent: exec.token,
          signal: exec.signal,
        })
        return { nestedMeta: r.meta ?? null }
      }),
    )
    const top = await tools.execute({ callId: 'c', name: 'leaf', arguments: {}, signal: signal() })
    expect(top.meta).toEqual({ m: 1 })
    const outer = await tools.execute({ callId: 'o', name: 'outer', arguments: {}, signal: signal() })
    expect(outer.isError ? null : outer.value).toEqual({ nestedMeta: null })
    expect(meta).toHaveBeenCalledTimes(1)
  })
})

describe('R-EXEC-4 tools/pre-execute decisions', () => {
  it('deny becomes an error result with the reason; the body never runs', async () => {
    const { ctx, tools } = await setup()
    const body = vi.fn(async () => 1)
    tools.register(rawTool('t', body))
    ctx.on('tools/pre-execute', async () => ({ kind: 'deny', reason: 'not today' }))
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(code(result)).toBe('TOOL_DENIED')
    expect(result.isError && result.error.message).toMatch(/not today/)
    expect(body).not.toHaveBeenCalled()
  })

  it.each([
    [
      'throws',
      async () => {
        throw new Error('listener bug')
      },
      'POLICY_ERROR',
      /listener bug/,
    ],
    ['returns garbage', async () => ({ kind: 'maybe' }), 'INVALID_DECISION', /expected \{ kind/],
    ['returns undefined', async () => undefined, 'INVALID_DECISION', /expected \{ kind/],
    ['denies without reason', async () => ({ kind: 'deny' }), 'INVALID_DECISION', /string reason/],
    [
      'calls next() twice',
      async (_e: unknown, next: () => Promise<unknown>) => {
        await next()
        return next()
      },
      'POLICY_ERROR',
      /next\(\) called multiple times/,
    ],
  ])('a listener that %s fails the call closed', async (_l, listener, errorCode, message) => {
    const { ctx, tools } = await setup()
    const body = vi.fn(async () => 1)
    tools.register(rawTool('t', body))
    ctx.on('tools/pre-execute', listener as never)
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(code(result)).toBe(errorCode)
    expect(result.isError && result.error.message).toMatch(message)
    expect(body).not.toHaveBeenCalled()
  })

  it('arguments can never be rewritten', async () => {
    const { ctx, tools } = await setup()
    let received: unknown
    tools.register(
      rawTool('t', async (args) => {
        received = args
        return 1
      }),
    )
    ctx.on('tools/pre-execute', async (exec, next) => {
      try {
        ;(exec.arguments as Record<string, unknown>).path = '/etc/passwd'
      } catch {}
      try {
        ;(exec as unknown as Record<string, unknown>).arguments = { path: '/etc/shadow' }
      } catch {}
      return next()
    })
    await tools.execute({ callId: 'c', name: 't', arguments: { path: 'a.txt' }, signal: signal() })
    expect(received).toEqual({ path: 'a.txt' })
  })

  it('ask without an approval service is a denial that says why, with or without an agent (issue #14)', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t'))
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'writes files' }))
    const noAgent = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(noAgent.isError && noAgent.error.message).toMatch(/no approval service/)
    const agent = createAgent(ctx, { id: 'a' })
    const noService = await tools.execute({ callId: 'd', name: 't', arguments: {}, agent, signal: signal() })
    expect(noService.isError && noService.error.message).toMatch(/no approval service/)
    expect(noService.isError && noService.error.message).toMatch(/writes files/)
  })

  it('ask proceeds only on an allowed answer from the approval service', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t', async () => 'ran'))
    const answers: unknown[] = [
      { kind: 'allowed-once' },
      { kind: 'denied', reason: 'user said no' },
      { kind: 'allowed-for-a-while' },
    ]
    const requests: unknown[] = []
    class Approval extends Service {
      constructor(ctx: Context) {
        super(ctx, 'approval')
      }
      async request(request: unknown) {
        requests.push(request)
        const answer = answers.shift()
        if (answer === undefined) throw new Error('service down')
        return answer
      }
    }
    await ctx.plugin(Approval)
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'because' }))
    const agent = createAgent(ctx, { id: 'a' })
    const run = (id: string) => tools.execute({ callId: id, name: 't', arguments: { x: 1 }, agent, signal: signal() })
    const allowed = await run('1')
    const denied = await run('2')
    const other = await run('3')
    const thrown = await run('4')
    expect(allowed.isError ? allowed.error : allowed.value).toBe('ran')
    expect(denied.isError && denied.error.message).toMatch(/user said no/)
    expect(other.isError && other.error.message).toMatch(/unsupported approval outcome "allowed-for-a-while"/)
    expect(thrown.isError && thrown.error.message).toMatch(/service down/)
    expect(requests[0]).toEqual({
      callId: '1',
      rootCallId: '1',
      parentCallId: null,
      agentId: 'a',
      toolName: 't',
      arguments: { x: 1 },
      reason: 'because',
    })
    // Exactly the documented JSON: no hidden properties (issue 21); live objects travel in the context.
    expect(Reflect.ownKeys(requests[0] as object).sort()).toEqual(
      ['agentId', 'arguments', 'callId', 'parentCallId', 'reason', 'rootCallId', 'toolName'].sort(),
    )
  })
})

describe('R-EXEC-5 guards are monotonic', () => {
  it('a guard denial cannot be turned back by any listener; a throwing guard denies', async () => {
    const { ctx, tools } = await setup()
    const body = vi.fn(async () => 1)
    tools.register(rawTool('t', body))
    ctx.on('tools/pre-execute', async () => ({ kind: 'allow' }), true)
    tools.guard((exec) => ((exec.arguments as { bad?: boolean }).bad ? 'bad args' : undefined))
    const denied = await tools.execute({ callId: 'c', name: 't', arguments: { bad: true }, signal: signal() })
    expect(code(denied)).toBe('TOOL_DENIED')
    expect(body).not.toHaveBeenCalled()
    tools.guard(() => {
      throw new Error('guard bug')
    })
    const thrown = await tools.execute({ callId: 'd', name: 't', arguments: {}, signal: signal() })
    expect(thrown.isError && thrown.error.message).toMatch(/guard bug/)
    expect(body).not.toHaveBeenCalled()
  })
})

describe('R-EXEC-6 signal fusion in tools/execute', () => {
  it('a wrapper may swap the signal but the caller’s cancellation is fused back before the body', async () => {
    const { ctx, tools } = await setup()
    const caller = new AbortController()
    let bodySignal: AbortSignal | undefined
    const started = deferred()
    tools.register(
      rawTool('t', async (_a, exec) => {
        bodySignal = exec.signal
        started.resolve()
        await new Promise((resolve) => exec.signal.addEventListener('abort', resolve))
        return 'done'
      }),
    )
    ctx.on('tools/execute', async (exec, next) => {
      const previous = exec.signal
      exec.signal = new AbortController().signal // an attempt to detach the caller
      try {
        return await next()
      } finally {
        exec.signal = previous
      }
    })
    const pending = tools.execute({ callId: 'c', name: 't', arguments: {}, signal: caller.signal })
    await started.promise
    caller.abort()
    const result = await pending
    expect(bodySignal?.aborted).toBe(true)
    expect(code(result)).toBe('ABORTED')
  })

  it('a wrapper cannot delete the signal, set a non-signal, or change identity', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t', async () => 1))
    const attempts: string[] = []
    let seenSignal: unknown
    ctx.on('tools/execute', async (exec, next) => {
      for (const [label, attempt] of [
        ['delete', () => delete (exec as { signal?: unknown }).signal],
        [
          'null',
          () => {
            ;(exec as { signal: unknown }).signal = null
          },
        ],
        [
          'name',
          () => {
            ;(exec as { name: string }).name = 'other'
          },
        ],
      ] as const) {
        try {
          attempt()
        } catch {
          attempts.push(label)
        }
      }
      // `delete` has no own property to remove: the signal is still there.
      seenSignal = exec.signal
      return next()
    })
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(attempts).toEqual(['null', 'name'])
    expect(seenSignal).toBeInstanceOf(AbortSignal)
    expect(result.isError).toBe(false)
  })

  it('a wrapper-authored success is validated against the tool’s output declaration', async () => {
    const { ctx, tools } = await setup()
    const body = vi.fn(async () => 'real')
    tools.register(
      rawTool('t', body, {
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
      }),
    )
    let answer: unknown = { isError: false, value: 'cached', content: [] }
    ctx.on('tools/execute', async () => answer as never)
    const ok = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(ok).toMatchObject({ isError: false, value: 'cached', content: [{ type: 'text', text: 'cached' }] })
    answer = { isError: false, value: 42, content: [] }
    const bad = await tools.execute({ callId: 'd', name: 't', arguments: {}, signal: signal() })
    expect(code(bad)).toBe('INVALID_TOOL_OUTPUT')
    answer = 'nonsense'
    const garbage = await tools.execute({ callId: 'e', name: 't', arguments: {}, signal: signal() })
    expect(code(garbage)).toBe('INVALID_RESULT')
    expect(body).not.toHaveBeenCalled()
  })

  it('a wrapper that returns before its next() settles still waits for the body (quiescence)', async () => {
    const { ctx, tools } = await setup()
    const gate = deferred()
    let finished = false
    tools.register(
      rawTool('t', async () => {
        await gate.promise
        finished = true
        return 1
      }),
    )
    ctx.on('tools/execute', async (_exec, next) => {
      void next()
      throw new Error('wrapper gave up')
    })
    const pending = tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    let settled = false
    void pending.then(() => {
      settled = true
    })
    await new Promise((r) => setTimeout(r, 10))
    expect(settled).toBe(false)
    gate.resolve()
    const result = await pending
    expect(finished).toBe(true)
    expect(result.isError && result.error.message).toBe('wrapper gave up')
  })
})

describe('R-EXEC-7 ToolRunContext: deferContext and concludeTurn', () => {
  it('contexts ride the result in call order, even when the body throws; concludesTurn only on success', async () => {
    const { tools } = await setup()
    tools.register(
      rawTool('ok', async (_a, exec) => {
        exec.deferContext({ role: 'user', content: [{ type: 'text', text: 'one' }] })
        exec.deferContext({ role: 'user', content: [{ type: 'text', text: 'two' }], source: 'plugin' })
        exec.concludeTurn()
        return 1
      }),
    )
    tools.register(
      rawTool('fails', async (_a, exec) => {
        exec.deferContext({ role: 'user', content: [{ type: 'text', text: 'kept' }] })
        exec.concludeTurn()
        throw new Error('nope')
      }),
    )
    const ok = await tools.execute({ callId: 'a', name: 'ok', arguments: {}, signal: signal() })
    expect(ok.additionalContexts?.map((c) => (c.content[0] as { text: string }).text)).toEqual(['one', 'two'])
    expect(ok.concludesTurn).toBe(true)
    const failed = await tools.execute({ callId: 'b', name: 'fails', arguments: {}, signal: signal() })
    expect(failed.additionalContexts).toHaveLength(1)
    expect('concludesTurn' in failed).toBe(false)
  })

  it('a malformed deferred context throws inside the body with a path', async () => {
    const { tools } = await setup()
    tools.register(
      rawTool('t', async (_a, exec) => {
        exec.deferContext({ role: 'assistant', content: [] } as never)
        return 1
      }),
    )
    const result = await tools.execute({ callId: 'a', name: 't', arguments: {}, signal: signal() })
    expect(result.isError && result.error.message).toMatch(/deferContext\(context\)\.role/)
  })
})

describe('R-EXEC-9 tools/post-execute decisions', () => {
  async function withPost(decide: (result: ToolExecutionResult) => unknown) {
    const { ctx, tools } = await setup()
    tools.register(
      rawTool(
        't',
        async (_a, exec) => {
          exec.deferContext({ role: 'user', content: [{ type: 'text', text: 'tool' }] })
          return 'v'
        },
        {
          output: {
            schema: { type: 'string' },
            render: (_a, v) => [{ type: 'text', text: `rendered ${String(v)}` }],
            presentationMeta: (_a, v) => ({ v }),
          },
        },
      ),
    )
    ctx.on('tools/post-execute', async (_exec, result) => decide(result) as never)
    return tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
  }
  const texts = (r: ToolExecutionResult) => r.additionalContexts?.map((c) => (c.content[0] as { text: string }).text)
  const ctxMsg = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] })

  it('accept with content keeps value and meta; tool contexts come before the decision’s', async () => {
    const r = await withPost(() => ({
      kind: 'accept',
      content: [{ type: 'text', text: 'short' }],
      additionalContexts: [ctxMsg('post')],
    }))
    expect(r).toMatchObject({
      isError: false,
      value: 'v',
      meta: { v: 'v' },
      content: [{ type: 'text', text: 'short' }],
    })
    expect(texts(r)).toEqual(['tool', 'post'])
  })

  it('accept with value is revalidated and re-rendered', async () => {
    const good = await withPost(() => ({ kind: 'accept', value: 'w' }))
    expect(good).toMatchObject({ value: 'w', content: [{ type: 'text', text: 'rendered w' }], meta: { v: 'w' } })
    const bad = await withPost(() => ({ kind: 'accept', value: 3 }))
    expect(code(bad)).toBe('INVALID_TOOL_OUTPUT')
  })

  it('accept with both content and value is refused', async () => {
    const r = await withPost(() => ({ kind: 'accept', value: 'w', content: [] }))
    expect(code(r)).toBe('INVALID_DECISION')
    expect(r.isError && r.error.message).toMatch(/never both/)
  })

  it('block becomes an error whose content is the feedback, keeping only the decision’s contexts', async () => {
    const r = await withPost(() => ({
      kind: 'block',
      feedback: [{ type: 'text', text: 'try again' }],
      additionalContexts: [ctxMsg('post')],
    }))
    expect(r).toMatchObject({ isError: true, content: [{ type: 'text', text: 'try again' }] })
    expect(code(r)).toBe('TOOL_BLOCKED')
    expect('value' in r).toBe(false)
    expect(texts(r)).toEqual(['post'])
  })

  it('thrown tools reach post-execute as errors', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t', async () => Promise.reject(new Error('x'))))
    const seen: ToolExecutionResult[] = []
    ctx.on('tools/post-execute', async (_e, result, next) => {
      seen.push(result)
      return next()
    })
    await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(seen[0]).toMatchObject({ isError: true, error: { message: 'x' } })
  })
})

describe('R-EXEC-10 finalizeContent exactly once', () => {
  it('is called once for every outcome, including failures that bypassed post-execute', async () => {
    const { ctx, tools } = await setup()
    const finalize = vi.fn((_exec, result: ToolExecutionResult) =>
      result.isError ? [{ type: 'text' as const, text: 'finalized error' }] : undefined,
    )
    tools.register(rawTool('t', async () => 1, { finalizeContent: finalize }))
    ctx.on('tools/pre-execute', async (exec, next) =>
      (exec.arguments as { deny?: boolean }).deny ? { kind: 'deny', reason: 'r' } : next(),
    )
    const ok = await tools.execute({ callId: 'a', name: 't', arguments: {}, signal: signal() })
    const denied = await tools.execute({ callId: 'b', name: 't', arguments: { deny: true }, signal: signal() })
    const badArgs = await tools.execute({ callId: 'c', name: 't', arguments: { f: () => 1 }, signal: signal() })
    expect(finalize).toHaveBeenCalledTimes(3)
    expect(ok.content).toEqual([{ type: 'text', text: '1' }])
    expect(denied.content).toEqual([{ type: 'text', text: 'finalized error' }])
    expect(denied.isError && denied.error.info?.code).toBe('TOOL_DENIED')
    expect(badArgs.content).toEqual([{ type: 'text', text: 'finalized error' }])
  })

  it('a throw or non-JSON answer becomes an error result that is not finalized again', async () => {
    const { tools } = await setup()
    const throwing = vi.fn(() => {
      throw new Error('finalizer bug')
    })
    const nonJson = vi.fn(() => [{ type: 'text', text: 'x', extra: undefined }] as never)
    tools.register(rawTool('a', async () => 1, { finalizeContent: throwing }))
    tools.register(rawTool('b', async () => 1, { finalizeContent: nonJson }))
    const a = await tools.execute({ callId: 'a', name: 'a', arguments: {}, signal: signal() })
    const b = await tools.execute({ callId: 'b', name: 'b', arguments: {}, signal: signal() })
    expect(a.isError && a.error.message).toMatch(/finalizer bug/)
    expect(b.isError && b.error.info?.code).toBe('FINALIZE_FAILED')
    expect(throwing).toHaveBeenCalledTimes(1)
    expect(nonJson).toHaveBeenCalledTimes(1)
  })

  it('is snapshotted when execution starts', async () => {
    const { tools } = await setup()
    const first = vi.fn(() => undefined)
    const definition = rawTool('t', async () => 1, { finalizeContent: first })
    const gate = deferred()
    definition.execute = async () => {
      await gate.promise
      return 1
    }
    tools.register(definition)
    const pending = tools.execute({ callId: 'a', name: 't', arguments: {}, signal: signal() })
    ;(definition as { finalizeContent?: unknown }).finalizeContent = () => [{ type: 'text', text: 'late' }]
    gate.resolve()
    const result = await pending
    expect(first).toHaveBeenCalledTimes(1)
    expect(result.content).toEqual([{ type: 'text', text: '1' }])
  })
})

describe('R-EXEC-11 tools/result listeners only observe', () => {
  it('a throwing listener reaches neither the caller nor other listeners', async () => {
    const { ctx, tools, results } = await setup()
    tools.register(rawTool('t'))
    ctx.on('tools/result', () => {
      throw new Error('observer bug')
    })
    ctx.on('tools/result', async () => {
      throw new Error('async observer bug')
    })
    const after = vi.fn()
    ctx.on('tools/result', after)
    const result = await tools.execute({ callId: 'c', name: 't', arguments: { a: 1 }, signal: signal() })
    expect(result.isError).toBe(false)
    expect(after).toHaveBeenCalledTimes(1)
    expect(results).toHaveLength(1)
  })

  it('cannot change the result', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t', async () => ({ a: 1 })))
    ctx.on('tools/result', (_e, result) => {
      try {
        ;(result as { isError: boolean }).isError = true
      } catch {}
      try {
        ;((result as unknown as { value: { a: number } }).value as { a: number }).a = 2
      } catch {}
    })
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(result).toMatchObject({ isError: false, value: { a: 1 } })
  })
})

describe('R-EXEC-12 cancellation and quiescence', () => {
  it('an already-aborted signal materializes arguments and skips every policy with ABORTED_BEFORE_DISPATCH', async () => {
    const { ctx, tools, results } = await setup()
    const pre = vi.fn((_e, next) => next())
    ctx.on('tools/pre-execute', pre)
    const body = vi.fn(async () => 1)
    tools.register(rawTool('t', body))
    const controller = new AbortController()
    controller.abort()
    const result = await tools.execute({ callId: 'c', name: 't', arguments: { a: 1 }, signal: controller.signal })
    expect(code(result)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(pre).not.toHaveBeenCalled()
    expect(body).not.toHaveBeenCalled()
    expect(results[0][0].arguments).toEqual({ a: 1 })
    const bad = await tools.execute({ callId: 'd', name: 't', arguments: { f: () => 1 }, signal: controller.signal })
    expect(code(bad)).toBe('INVALID_ARGS')
  })

  it('cancellation during pre-execute gives ABORTED_BEFORE_DISPATCH; a denial stays a denial', async () => {
    const { ctx, tools } = await setup()
    const body = vi.fn(async () => 1)
    tools.register(rawTool('t', body))
    const controller = new AbortController()
    ctx.on('tools/pre-execute', async (exec, next) => {
      controller.abort()
      return (exec.arguments as { deny?: boolean }).deny ? { kind: 'deny', reason: 'no' } : next()
    })
    const aborted = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: controller.signal })
    expect(code(aborted)).toBe('ABORTED_BEFORE_DISPATCH')
    const c2 = new AbortController()
    controller.abort()
    const denied = await tools.execute({ callId: 'd', name: 't', arguments: { deny: true }, signal: c2.signal })
    expect(code(denied)).toBe('TOOL_DENIED')
    expect(body).not.toHaveBeenCalled()
  })

  it('cancellation during the guards or while approval is pending gives ABORTED_BEFORE_DISPATCH', async () => {
    const { ctx, tools } = await setup()
    const body = vi.fn(async () => 1)
    tools.register(rawTool('t', body))
    const duringGuard = new AbortController()
    const dispose = tools.guard(() => {
      duringGuard.abort()
      return undefined
    })
    const guarded = await tools.execute({ callId: 'g', name: 't', arguments: {}, signal: duringGuard.signal })
    expect(code(guarded)).toBe('ABORTED_BEFORE_DISPATCH')
    dispose()
    const duringApproval = new AbortController()
    class Approval extends Service {
      constructor(ctx: Context) {
        super(ctx, 'approval')
      }
      async request() {
        duringApproval.abort()
        return { kind: 'allowed-once' as const }
      }
    }
    await ctx.plugin(Approval)
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask' }))
    const agent = createAgent(ctx, { id: 'a' })
    const asked = await tools.execute({ callId: 'a', name: 't', arguments: {}, agent, signal: duringApproval.signal })
    expect(code(asked)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(body).not.toHaveBeenCalled()
  })

  it('cancellation in tools/execute before next() gives ABORTED_BEFORE_DISPATCH', async () => {
    const { ctx, tools } = await setup()
    const body = vi.fn(async () => 1)
    tools.register(rawTool('t', body))
    const controller = new AbortController()
    ctx.on('tools/execute', async (_e, next) => {
      controller.abort()
      return next()
    })
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: controller.signal })
    expect(code(result)).toBe('ABORTED_BEFORE_DISPATCH')
    expect(body).not.toHaveBeenCalled()
  })

  it('cancellation after the body started replaces only a success with ABORTED; a tool error stays', async () => {
    const { tools } = await setup()
    const started = deferred()
    tools.register(
      rawTool('t', async (args, exec) => {
        started.resolve()
        await new Promise((resolve) => exec.signal.addEventListener('abort', resolve))
        if ((args as { fail?: boolean }).fail) throw new Error('specific failure')
        return 'finished anyway'
      }),
    )
    const c1 = new AbortController()
    const p1 = tools.execute({ callId: 'a', name: 't', arguments: {}, signal: c1.signal })
    await started.promise
    c1.abort()
    expect(code(await p1)).toBe('ABORTED')
    const c2 = new AbortController()
    const p2 = tools.execute({ callId: 'b', name: 't', arguments: { fail: true }, signal: c2.signal })
    await new Promise((r) => setTimeout(r, 5))
    c2.abort()
    const r2 = await p2
    expect(r2.isError && r2.error.message).toBe('specific failure')
  })

  it('cancellation during post-execute replaces a success with ABORTED', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t'))
    const controller = new AbortController()
    ctx.on('tools/post-execute', async (_e, _r, next) => {
      controller.abort()
      return next()
    })
    expect(code(await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: controller.signal }))).toBe(
      'ABORTED',
    )
  })

  it('a body that never settles until aborted: execute() waits for it, then ABORTED', async () => {
    const { tools } = await setup()
    let cleanedUp = false
    tools.register(
      rawTool('t', async (_a, exec) => {
        await new Promise((resolve) => exec.signal.addEventListener('abort', () => setTimeout(resolve, 15)))
        cleanedUp = true
        return 1
      }),
    )
    const controller = new AbortController()
    const pending = tools.execute({ callId: 'c', name: 't', arguments: {}, signal: controller.signal })
    setTimeout(() => controller.abort(), 5)
    const result = await pending
    expect(cleanedUp).toBe(true)
    expect(code(result)).toBe('ABORTED')
  })

  it('execute() does not settle before an async tools/result listener settles', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t'))
    let listenerDone = false
    ctx.on('tools/result', async () => {
      await new Promise((r) => setTimeout(r, 10))
      listenerDone = true
    })
    await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(listenerDone).toBe(true)
  })
})

describe('R-EXEC-13 scope-filtered dispatch', () => {
  it('an agent’s listeners see only that agent’s (and descendants’) calls; plain listeners see all', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t'))
    const a = createAgent(ctx, { id: 'a' })
    const child = createAgent(a.ctx, { id: 'child' })
    const b = createAgent(ctx, { id: 'b' })
    const seen: Record<string, string[]> = { a: [], b: [], plain: [], child: [] }
    for (const event of ['tools/pre-execute', 'tools/execute', 'tools/post-execute'] as const) {
      a.ctx.on(event, ((...args: unknown[]) => {
        seen.a.push(`${event}:${(args[0] as ToolExecution).callId}`)
        return (args.at(-1) as () => unknown)()
      }) as never)
    }
    a.ctx.on('tools/result', (exec) => {
      seen.a.push(`result:${exec.callId}`)
    })
    b.ctx.on('tools/result', (exec) => {
      seen.b.push(`result:${exec.callId}`)
    })
    child.ctx.on('tools/result', (exec) => {
      seen.child.push(`result:${exec.callId}`)
    })
    ctx.on('tools/result', (exec) => {
      seen.plain.push(`result:${exec.callId}`)
    })
    for (const [callId, agent] of [
      ['ga', a],
      ['gb', b],
      ['gc', child],
      ['gg', undefined],
    ] as const) {
      await tools.execute({ callId, name: 't', arguments: {}, agent, signal: signal() })
    }
    expect(seen.a).toEqual([
      'tools/pre-execute:ga',
      'tools/execute:ga',
      'tools/post-execute:ga',
      'result:ga',
      'tools/pre-execute:gc',
      'tools/execute:gc',
      'tools/post-execute:gc',
      'result:gc',
    ])
    expect(seen.b).toEqual(['result:gb'])
    expect(seen.child).toEqual(['result:gc'])
    expect(seen.plain).toEqual(['result:ga', 'result:gb', 'result:gc', 'result:gg'])
  })
})

describe('R-EXEC-14 result shape', () => {
  it('success has value and no error; failure has error and no value; durable fields are JSON', async () => {
    const { tools } = await setup()
    tools.register(rawTool('ok', async () => ({ x: 1 })))
    tools.register(rawTool('bad', async () => Promise.reject(new Error('e'))))
    const ok = await tools.execute({ callId: 'a', name: 'ok', arguments: {}, signal: signal() })
    const bad = await tools.execute({ callId: 'b', name: 'bad', arguments: {}, signal: signal() })
    expect(Object.keys(ok).sort()).toEqual(['content', 'isError', 'value'])
    expect(Object.keys(bad).sort()).toEqual(['content', 'error', 'isError'])
    expect(JSON.parse(JSON.stringify(bad))).toEqual(bad)
  })

  it('registry state stays intact after every kind of fault', async () => {
    const { ctx, tools } = await setup()
    tools.register(rawTool('t', async () => Promise.reject('x')))
    ctx.on('tools/pre-execute', async () => {
      throw new Error('bug')
    })
    const before = tools.schemas()
    await tools.execute({ callId: 'a', name: 't', arguments: {}, signal: signal() })
    expect(tools.schemas()).toEqual(before)
    expect(tools.get('t')).toBeDefined()
  })
})
