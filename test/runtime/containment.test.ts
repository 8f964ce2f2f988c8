import { spawnSync } from 'node:child_process'
import { getEventListeners } from 'node:events'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/index.js'
import {
  createAgent,
  createToolRuntime,
  type JsonObject,
  TimeoutPolicy,
  type ToolExecutionResult,
  ToolRegistrationError,
} from '../../src/index.js'
import { MAX_SCHEMA_DEPTH } from '../../src/runtime/definition-check.js'
import { attachedCount } from '../../src/runtime/signal-fusion.js'
import { isDeepFrozen, rawTool, signal } from './helpers.js'

// #11: nothing a tool, listener, input or definition does reaches the host as a rejection.
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

/** A Proxy that throws from every trap, including the ones `instanceof`, `String()` and `JSON.stringify` use. */
function explodingProxy(): object {
  const boom = () => {
    throw new Error('trap')
  }
  return new Proxy(
    {},
    {
      get: boom,
      has: boom,
      ownKeys: boom,
      getOwnPropertyDescriptor: boom,
      getPrototypeOf: boom,
      defineProperty: boom,
      set: boom,
      apply: boom,
    },
  )
}

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

function errorWithThrowingMessage(): Error {
  const error = new Error('hidden')
  Object.defineProperty(error, 'message', {
    get() {
      throw explodingProxy()
    },
  })
  return error
}

function errorWithThrowingName(): Error {
  const error = new Error('named')
  Object.defineProperty(error, 'name', {
    get() {
      throw new Error('name getter')
    },
  })
  return error
}

function unprintable(): object {
  return {
    toJSON() {
      throw new Error('toJSON')
    },
    toString() {
      throw new Error('toString')
    },
    [Symbol.toPrimitive]() {
      throw new Error('toPrimitive')
    },
  }
}

const hostileValues: Array<[string, () => unknown]> = [
  ['a Proxy throwing from every trap', explodingProxy],
  ['a revoked Proxy', revokedProxy],
  ['an Error whose message getter throws', errorWithThrowingMessage],
  ['an Error whose name getter throws', errorWithThrowingName],
  ['an object whose toJSON/toString/toPrimitive throw', unprintable],
  ['a Symbol', () => Symbol('thrown')],
  ['a BigInt', () => 10n],
]

type Phase = 'body' | 'guard' | 'pre-execute' | 'execute' | 'post-execute' | 'finalizeContent' | 'render' | 'meta'
const phases: Phase[] = ['body', 'guard', 'pre-execute', 'execute', 'post-execute', 'finalizeContent', 'render', 'meta']

async function runThrowing(phase: Phase, thrown: () => unknown) {
  const { ctx, tools } = await createToolRuntime()
  const raise = (): never => {
    throw thrown()
  }
  tools.register(
    rawTool(
      't',
      async () => {
        if (phase === 'body') raise()
        return { ok: true }
      },
      {
        output: {
          schema: {},
          render: () => (phase === 'render' ? raise() : [{ type: 'text', text: 'ok' }]),
          presentationMeta: phase === 'meta' ? raise : undefined,
        },
        finalizeContent: phase === 'finalizeContent' ? raise : undefined,
      },
    ),
  )
  if (phase === 'guard') tools.guard(raise)
  if (phase === 'pre-execute') ctx.on('tools/pre-execute', async () => raise())
  if (phase === 'execute') ctx.on('tools/execute', async () => raise())
  if (phase === 'post-execute') ctx.on('tools/post-execute', async () => raise())
  const seen: ToolExecutionResult[] = []
  ctx.on('tools/result', (_exec, result) => {
    seen.push(result)
  })
  const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
  return { result, seen }
}

describe('#11 containment: hostile thrown values from every phase never reject', () => {
  for (const phase of phases) {
    it.each(hostileValues)(`${phase}: %s becomes one frozen error result`, async (_label, thrown) => {
      const { result, seen } = await runThrowing(phase, thrown)
      expect(result.isError).toBe(true)
      expect(isDeepFrozen(result)).toBe(true)
      expect(seen).toEqual([result])
      expect(seen[0]).toBe(result)
      if (result.isError) {
        expect(typeof result.error.message).toBe('string')
        expect(result.error.message.length).toBeGreaterThan(0)
      }
    })
  }

  it('says so when the thrown value could not be read', async () => {
    const { result } = await runThrowing('body', errorWithThrowingMessage)
    expect(result.isError && result.error.message).toMatch(/could not be read.*message/)
    const proxied = await runThrowing('body', explodingProxy)
    expect(proxied.result.isError && proxied.result.error.message).toMatch(/could not be read/)
  })

  it('reads a thrown Error once: a message getter runs once and its answer is kept', async () => {
    let reads = 0
    const error = new Error('x')
    Object.defineProperty(error, 'message', {
      get() {
        reads++
        return reads === 1 ? 'first answer' : 'second answer'
      },
    })
    const { result } = await runThrowing('body', () => error)
    expect(result.isError && result.error.message).toBe('first answer')
    expect(reads).toBe(1)
  })

  it('contains a hostile tools/result listener and a hostile approval service', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    ctx.on('tools/result', () => {
      throw explodingProxy()
    })
    ctx.on('tools/result', async () => {
      throw errorWithThrowingMessage()
    })
    const ok = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(ok.isError).toBe(false)

    const agent = createAgent(ctx, { id: 'a' })
    ctx.provide('approval')
    ctx.set('approval', {
      request: async () => {
        throw revokedProxy()
      },
    })
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'check' }))
    const asked = await tools.execute({ callId: 'c2', name: 't', arguments: {}, agent, signal: signal() })
    expect(asked.isError && asked.error.info?.code).toBe('TOOL_DENIED')
  })
})

describe('#11 containment: hostile listener returns', () => {
  const decisions: Array<[string, () => unknown]> = [
    ['a Proxy throwing from every trap', explodingProxy],
    ['a revoked Proxy', revokedProxy],
    [
      'a decision whose kind getter throws',
      () =>
        Object.defineProperty({}, 'kind', {
          get() {
            throw new Error('kind')
          },
        }),
    ],
    ['an unprintable object', unprintable],
  ]

  it.each(decisions)('pre-execute returning %s is an invalid decision', async (_label, make) => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    ctx.on('tools/pre-execute', async () => make() as never)
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    // A Proxy already throws when the listener's promise resolves with it (its `then` is read).
    expect(['INVALID_DECISION', 'POLICY_ERROR']).toContain(result.isError && result.error.info?.code)
  })

  it.each(decisions)('post-execute returning %s is an invalid decision', async (_label, make) => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    ctx.on('tools/post-execute', async () => make() as never)
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    // A Proxy already throws when the listener's promise resolves with it (its `then` is read).
    expect(['INVALID_DECISION', 'POLICY_ERROR']).toContain(result.isError && result.error.info?.code)
  })

  it.each(decisions)('a tools/execute wrapper returning %s is an invalid result', async (_label, make) => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    ctx.on('tools/execute', async () => make() as never)
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(['INVALID_RESULT', 'POLICY_ERROR']).toContain(result.isError && result.error.info?.code)
  })

  it('a post-execute decision whose fields answer differently per read is read once', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    let reads = 0
    ctx.on(
      'tools/post-execute',
      async () =>
        ({
          kind: 'accept',
          get content() {
            reads++
            return reads === 1 ? [{ type: 'text', text: 'first' }] : 42
          },
        }) as never,
    )
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(result.content).toEqual([{ type: 'text', text: 'first' }])
    expect(reads).toBe(1)
  })
})

describe('#11 containment: hostile inputs never reject', () => {
  const throwing = (field: string) => () =>
    Object.defineProperty({ callId: 'c', name: 't', arguments: {}, signal: signal() }, field, {
      get() {
        throw explodingProxy()
      },
      enumerable: true,
    })
  const inputs: Array<[string, () => unknown]> = [
    ['a Proxy input throwing from every trap', explodingProxy],
    ['a revoked Proxy input', revokedProxy],
    ['a throwing agent getter', throwing('agent')],
    ['a throwing rootCallId getter', throwing('rootCallId')],
    ['a throwing parent getter', throwing('parent')],
    ['a throwing callId getter', throwing('callId')],
    ['a throwing signal getter', throwing('signal')],
    ['a throwing arguments getter', throwing('arguments')],
    ['a callId whose toString throws', () => ({ callId: unprintable(), name: 't', arguments: {}, signal: signal() })],
    ['a rootCallId whose toString throws', () => ({ ...base(), rootCallId: unprintable() })],
    ['a parent that is not a token', () => ({ ...base(), parent: unprintable() })],
    ['an agent Proxy', () => ({ ...base(), agent: explodingProxy() })],
    ['an agent whose ctx getter throws', () => ({ ...base(), agent: throwing('ctx')() })],
    ['a signal-shaped Proxy', () => ({ ...base(), signal: new Proxy(signal(), {}) })],
    ['an object inheriting from AbortSignal', () => ({ ...base(), signal: Object.create(AbortSignal.prototype) })],
  ]
  function base() {
    return { callId: 'c', name: 't', arguments: {}, signal: signal() }
  }

  it.each(inputs)('%s gives one frozen INVALID_INPUT or INVALID_ARGS result', async (_label, make) => {
    const { tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    const result = await tools.execute(make() as never)
    expect(result.isError).toBe(true)
    expect(['INVALID_INPUT', 'INVALID_ARGS']).toContain(result.isError && result.error.info?.code)
    expect(isDeepFrozen(result)).toBe(true)
  })

  it('reads each input field exactly once: a shape-shifting name cannot switch tools mid-call', async () => {
    const { tools } = await createToolRuntime()
    const ran: string[] = []
    tools.register(rawTool('safe', async () => ran.push('safe')))
    tools.register(rawTool('other', async () => ran.push('other')))
    const reads: Record<string, number> = {}
    const answers: Record<string, unknown[]> = {
      callId: ['c', 'd'],
      name: ['safe', 'other'],
      arguments: [{}, { x: 1 }],
      signal: [signal(), 'not a signal'],
    }
    const input = {}
    for (const [key, values] of Object.entries(answers)) {
      Object.defineProperty(input, key, {
        enumerable: true,
        get() {
          reads[key] = (reads[key] ?? 0) + 1
          return values[Math.min(reads[key] - 1, values.length - 1)]
        },
      })
    }
    const result = await tools.execute(input as never)
    expect(result.isError).toBe(false)
    expect(ran).toEqual(['safe'])
    expect(reads).toEqual({ callId: 1, name: 1, arguments: 1, signal: 1 })
  })

  it('a signal with a planted throwing `aborted` property still runs the pipeline', async () => {
    const { tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    const planted = signal()
    Object.defineProperty(planted, 'aborted', {
      get() {
        throw new Error('planted')
      },
    })
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: planted })
    expect(result.isError).toBe(false)
  })
})

describe('#11 definitions are snapshotted once at registration', () => {
  it('a shape-shifting name getter cannot take over run_code', async () => {
    const { ctx, tools } = await createToolRuntime({ mode: 'code' })
    let reads = 0
    const definition = rawTool('placeholder')
    const shifting = {
      ...definition,
      get name() {
        reads++
        return reads === 1 ? 'innocent' : RUN_CODE_NAME
      },
    }
    tools.register(shifting)
    expect(reads).toBe(1)
    const agent = createAgent(ctx, { id: 'a' })
    expect(tools.get(RUN_CODE_NAME, agent)?.execute).not.toBe(definition.execute)
    expect(tools.get('innocent')?.name).toBe('innocent')
    expect(tools.schemas(agent).map((s) => s.name)).toEqual([RUN_CODE_NAME])
    expect(tools.sdk(agent)).toContain('innocent')
    expect(reads).toBe(1)
  })

  it('reads every field exactly once, inherited members included', async () => {
    const { tools } = await createToolRuntime()
    const counts: Record<string, number> = {}
    const source = rawTool('counted', undefined, { timeoutMs: 100, isConcurrencySafe: () => true })
    const proto = {}
    for (const [key, value] of Object.entries(source)) {
      Object.defineProperty(proto, key, {
        get() {
          counts[key] = (counts[key] ?? 0) + 1
          return value
        },
      })
    }
    tools.register(Object.create(proto))
    expect(Object.values(counts).every((n) => n === 1)).toBe(true)
    expect(Object.keys(counts).sort()).toEqual(Object.keys(source).sort())
    const result = await tools.execute({ callId: 'c', name: 'counted', arguments: { a: 1 }, signal: signal() })
    expect(result.isError).toBe(false)
    expect(Object.values(counts).every((n) => n === 1)).toBe(true)
  })

  it('a definition getter that throws is a registration error naming the field', async () => {
    const { tools } = await createToolRuntime()
    const definition = Object.defineProperty({ ...rawTool('t') }, 'description', {
      get() {
        throw explodingProxy()
      },
    })
    expect(() => tools.register(definition)).toThrow(/definition\.description: could not be read/)
    expect(tools.get('t')).toBeUndefined()
  })

  it('mutating the parameters object after registration changes nothing the model sees', async () => {
    const { tools } = await createToolRuntime()
    const definition = rawTool('t')
    const parameters = { type: 'object', properties: { a: { type: 'string' } } }
    tools.register({ ...definition, parameters })
    parameters.properties.a.type = 'number'
    expect(tools.schemas()[0].parameters).toEqual({ type: 'object', properties: { a: { type: 'string' } } })
  })
})

describe('#11 no registry poisoning by a deep raw schema', () => {
  function deep(levels: number): JsonObject {
    let schema: JsonObject = { type: 'string' }
    for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { x: schema } }
    return schema
  }

  it('refuses a 100,000-deep raw schema at registration; schemas(), sdk() and other tools keep working', async () => {
    const { ctx, tools } = await createToolRuntime({ mode: 'both' })
    tools.register(rawTool('ordinary'))
    const agent = createAgent(ctx, { id: 'a' })
    let error: unknown
    try {
      tools.register(rawTool('abyss', undefined, { parameters: deep(100_000) }))
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ToolRegistrationError)
    expect((error as Error).message).toMatch(
      new RegExp(`definition\\.parameters: nests deeper than ${MAX_SCHEMA_DEPTH} levels`),
    )
    expect(tools.schemas().map((s) => s.name)).toEqual(['ordinary', RUN_CODE_NAME])
    expect(tools.sdk(agent)).toContain('ordinary')
    const result = await tools.execute({ callId: 'c', name: 'ordinary', arguments: {}, signal: signal() })
    expect(result.isError).toBe(false)
  })

  it('refuses a deep output schema the same way, and serves a schema at the bound', async () => {
    const { tools } = await createToolRuntime()
    expect(() =>
      tools.register(rawTool('deep-out', undefined, { output: { schema: deep(100_000) as never, render: () => [] } })),
    ).toThrow(/definition\.output\.schema: nests deeper than/)
    // Each schema level is two containers deep (the node and its `properties`).
    const atBound = deep(MAX_SCHEMA_DEPTH / 2 - 1)
    tools.register(rawTool('at-bound', undefined, { parameters: atBound }))
    expect(tools.schemas()[0].parameters).toEqual(atBound)
    expect(tools.sdk()).toContain('at-bound')
  })
})

describe('#11 no per-call growth on a long-lived caller signal', () => {
  async function calls(mode: 'timeout' | 'wrapper', count: number) {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t', async (_args, exec) => ({ aborted: exec.signal.aborted }), { timeoutMs: 60_000 }))
    if (mode === 'timeout') {
      ctx.plugin(TimeoutPolicy, {})
      await new Promise((r) => setTimeout(r, 0))
    } else
      ctx.on('tools/execute', (exec, next) => {
        exec.signal = new AbortController().signal
        return next()
      })
    const controller = new AbortController()
    const longLived = controller.signal
    for (let i = 0; i < count; i++) {
      const result = await tools.execute({ callId: `c${i}`, name: 't', arguments: {}, signal: longLived })
      expect(result.isError).toBe(false)
    }
    return { tools, controller, longLived }
  }

  it.each(['timeout', 'wrapper'] as const)('under %s, every fusion is released when its call settles', async (mode) => {
    const { tools, controller, longLived } = await calls(mode, 500)
    expect(attachedCount(longLived)).toBe(0)
    expect(getEventListeners(longLived, 'abort').length).toBeLessThanOrEqual(1)
    // Caller cancellation still reaches a body while its call runs.
    tools.register(
      rawTool(
        'waits',
        (_args, exec) => new Promise((resolve) => exec.signal.addEventListener('abort', () => resolve(null))),
        { timeoutMs: 60_000 },
      ),
    )
    const pending = tools.execute({ callId: 'w', name: 'waits', arguments: {}, signal: longLived })
    await new Promise((r) => setTimeout(r, 10))
    expect(attachedCount(longLived)).toBeGreaterThan(0)
    controller.abort()
    const result = await pending
    expect(result.isError && result.error.info?.code).toBe('ABORTED')
    expect(attachedCount(longLived)).toBe(0)
  })

  it('heap stays flat after warm-up over many calls on one signal (child process with --expose-gc)', () => {
    const probe = fileURLToPath(new URL('./fixtures/heap-probe.mts', import.meta.url))
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', probe, '60000'], {
      encoding: 'utf8',
      timeout: 240_000,
    })
    expect(child.status, child.stderr).toBe(0)
    const report = JSON.parse(child.stdout.trim().split('\n').pop() as string) as Record<string, number>
    // Fusing with AbortSignal.any (what #11 replaced) grows this to ~10 MB (timeout) and ~8 MB
    // (wrapper) on Node 20, ~100 MB and ~50 MB on Node 24 and 26. Without a leak it stays near zero
    // after the probe's full-length warm-up; with a short one, code the optimizer finished late (on a
    // busy machine, 4.7 MB on Node 26) counted as growth.
    expect(report.timeout).toBeLessThan(4_000_000)
    expect(report.wrapper).toBeLessThan(4_000_000)
    // The probe takes ~12 s alone and well over 30 s beside another suite on the 2 cores: the bound
    // is the child's own, which only a hang reaches.
  }, 250_000)
})
