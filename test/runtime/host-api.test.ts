// The host API (issue 21): what a feature hands the pipeline beside a call — a resumed decision, a
// per-call approval channel, a suspension callback — and `tools.host`, the surface Code Mode, the
// journal, the model loop and the MCP server plug in through. No hidden channel: a decision or an
// approver reaches exactly the call it was given to (and, for an approver, that call's sub-calls).
import { afterAll, describe, expect, it } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/index.js'
import type { ApprovalOutcome, ApprovalRequest, ApprovalService, ToolExecution } from '../../src/contract/execution.js'
import { createAgent, createToolRuntime, type ToolRuntimeHandle } from '../../src/index.js'
import { rawTool, signal } from './helpers.js'

const handles: ToolRuntimeHandle[] = []
afterAll(async () => {
  await Promise.all(handles.splice(0).map((handle) => handle.dispose()))
})

async function setup(options: Parameters<typeof createToolRuntime>[0] = {}) {
  const handle = await createToolRuntime(options)
  handles.push(handle)
  let runs = 0
  handle.tools.register(
    rawTool(
      'pay',
      async (args) => {
        runs++
        return { paid: args as never }
      },
      { needsApproval: true, isConcurrencySafe: () => true },
    ),
  )
  return { ...handle, runs: () => runs }
}

function approver(outcome: ApprovalOutcome, seen: ApprovalRequest[] = []): ApprovalService {
  return {
    request: async (request) => {
      seen.push(request)
      return outcome
    },
  }
}

const call = (id: string, name = 'pay', args: unknown = { amount: 1 }) => ({
  callId: id,
  name,
  arguments: args,
  signal: signal(),
})

describe('tools.execute(input, options)', () => {
  it('a decision answers the call it was given to, once, before any service', async () => {
    const asked: ApprovalRequest[] = []
    const env = await setup({
      approval: async (request) => {
        asked.push(request)
        return { kind: 'denied' }
      },
    })
    const sources: string[] = []
    env.ctx.on('tools/approval-answered', (_request, _outcome, source) => {
      sources.push(source)
    })
    const decided = await env.tools.execute(call('c1'), { decision: { kind: 'allowed-once' } })
    expect(decided.isError).toBe(false)
    expect(sources).toEqual(['decision'])
    expect(asked).toEqual([])
    // The same input without the decision goes to the service: nothing is remembered between calls.
    const plain = await env.tools.execute(call('c1'))
    expect(plain.isError && plain.error.info?.code).toBe('TOOL_DENIED')
    expect(asked.map((request) => request.callId)).toEqual(['c1'])
    expect(env.runs()).toBe(1)
  })

  it('a per-call approval service answers instead of the context’s, for that call only', async () => {
    const env = await setup({ approval: async () => ({ kind: 'denied', reason: 'context service' }) })
    const seen: ApprovalRequest[] = []
    const mine = await env.tools.execute(call('c1'), { approval: approver({ kind: 'allowed-once' }, seen) })
    expect(mine.isError).toBe(false)
    expect(seen.map((request) => request.callId)).toEqual(['c1'])
    const other = await env.tools.execute(call('c2'))
    expect(other.isError && other.error.message).toMatch(/context service/)
  })

  it('Code Mode sub-calls ask their run_code’s approval channel, and carry parentCallId', async () => {
    const env = await setup({ mode: 'code', codeMode: { runtime: 'inline' } })
    const seen: ApprovalRequest[] = []
    const execs: ToolExecution[] = []
    env.ctx.on('tools/call', (exec) => {
      execs.push(exec)
    })
    const result = await env.tools.execute(
      call('outer', RUN_CODE_NAME, { code: 'return await tools.pay({ amount: 7 })', description: 'pay' }),
      { approval: approver({ kind: 'allowed-once' }, seen) },
    )
    expect(result.isError ? result.error.message : result.value).toMatchObject({ result: { paid: { amount: 7 } } })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ toolName: 'pay', parentCallId: 'outer', rootCallId: 'outer' })
    const sub = execs.find((exec) => exec.name === 'pay')
    expect(sub?.parentCallId).toBe('outer')
    expect(execs.find((exec) => exec.name === RUN_CODE_NAME)?.parentCallId).toBeNull()
  })

  it('a decision is not inherited by sub-calls', async () => {
    const env = await setup({ mode: 'code', codeMode: { runtime: 'inline' } })
    const result = await env.tools.execute(
      call('outer', RUN_CODE_NAME, { code: 'return await tools.pay({ amount: 7 })', description: 'pay' }),
      { decision: { kind: 'allowed-once' } },
    )
    // run_code itself needs no approval; its sub-call finds no service and is denied, not approved.
    expect(JSON.stringify(result)).toMatch(/no approval service is available/)
    expect(env.runs()).toBe(0)
  })

  it('onSuspended reports the pipeline’s own suspension, never a tool that fakes the code', async () => {
    const env = await setup()
    const suspended: ApprovalRequest[] = []
    const result = await env.tools.execute(call('c1'), {
      approval: approver({ kind: 'suspended', reason: 'ask a human later' }),
      onSuspended: (request) => suspended.push(request),
    })
    expect(result.isError && result.error.info?.code).toBe('APPROVAL_SUSPENDED')
    expect(suspended).toEqual([
      {
        callId: 'c1',
        rootCallId: 'c1',
        parentCallId: null,
        agentId: null,
        toolName: 'pay',
        arguments: { amount: 1 },
        reason: null,
      },
    ])
    env.tools.register(
      rawTool('faker', async () => {
        throw Object.assign(new Error('pretending'), { code: 'APPROVAL_SUSPENDED' })
      }),
    )
    const fakes: ApprovalRequest[] = []
    const faked = await env.tools.execute(call('c2', 'faker'), { onSuspended: (request) => fakes.push(request) })
    expect(faked.isError).toBe(true)
    expect(fakes).toEqual([])
  })

  it('a throwing onSuspended is contained: the call still ends with its one result', async () => {
    const env = await setup()
    const result = await env.tools.execute(call('c1'), {
      approval: approver({ kind: 'suspended' }),
      onSuspended: () => {
        throw new Error('callback broke')
      },
    })
    expect(result.isError && result.error.info?.code).toBe('APPROVAL_SUSPENDED')
  })

  it.each([
    ['a string', 'nope', /options: expected an object/],
    ['a bad decision', { decision: 'allowed-once' }, /options\.decision/],
    ['a bad approval', { approval: { ask: () => {} } }, /options\.approval/],
    ['a bad onSuspended', { onSuspended: 42 }, /options\.onSuspended/],
    [
      'a throwing getter',
      Object.defineProperty({}, 'decision', {
        get() {
          throw new Error('trap')
        },
        enumerable: true,
      }),
      /could not be read/,
    ],
  ])('malformed options (%s) refuse the call before anything runs', async (_label, options, message) => {
    const env = await setup()
    const result = await env.tools.execute(call('c1'), options as never)
    expect(result.isError && result.error.info?.code).toBe('INVALID_INPUT')
    expect(result.isError && result.error.message).toMatch(message)
    expect(env.runs()).toBe(0)
  })
})

describe('tools.host', () => {
  it('visibleTools follows the scope’s view and keeps its identity until the view changes', async () => {
    const env = await setup()
    const agent = createAgent(env.ctx, { id: 'a' })
    const before = env.tools.host.visibleTools(agent)
    expect([...before.keys()]).toEqual(['pay'])
    expect(env.tools.host.visibleTools(agent)).toBe(before)
    agent.ctx.tools.register(rawTool('mine'))
    const after = env.tools.host.visibleTools(agent)
    expect(after).not.toBe(before)
    expect([...after.keys()].sort()).toEqual(['mine', 'pay'])
    expect([...env.tools.host.visibleTools().keys()]).toEqual(['pay'])
    expect(() => env.tools.host.visibleTools({ id: 'x', ctx: env.ctx })).toThrow(/createAgent/)
  })

  it('emit and waterfall are scope-filtered; a failing emit listener is contained', async () => {
    const env = await setup()
    const a = createAgent(env.ctx, { id: 'a' })
    const b = createAgent(env.ctx, { id: 'b' })
    const heard: string[] = []
    type Loose = { on(event: string, listener: (...args: unknown[]) => unknown): () => void }
    ;(a.ctx as unknown as Loose).on('feature/thing', (what) => {
      heard.push(`a:${String(what)}`)
    })
    ;(b.ctx as unknown as Loose).on('feature/thing', () => {
      throw new Error('listener broke')
    })
    await env.tools.host.emit('feature/thing', a, ['one'])
    await expect(env.tools.host.emit('feature/thing', b, ['two'])).resolves.toBeUndefined()
    expect(heard).toEqual(['a:one'])
    ;(a.ctx as unknown as Loose).on(
      'feature/pick',
      async (value, next) => `${String(value)}+${await (next as () => Promise<string>)()}`,
    )
    expect(await env.tools.host.waterfall('feature/pick', a, ['x'], async () => 'inner')).toBe('x+inner')
    expect(await env.tools.host.waterfall('feature/pick', b, ['x'], async () => 'inner')).toBe('inner')
    expect(env.tools.host.hasListeners('feature/pick')).toBe(true)
    expect(env.tools.host.hasListeners('feature/none')).toBe(false)
  })

  it('halt refuses work and settled waits for the calls in flight', async () => {
    const handle = await createToolRuntime()
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    handle.tools.register(
      rawTool('slow', async (_args, exec) => {
        await Promise.race([gate, new Promise((resolve) => exec.signal.addEventListener('abort', resolve))])
        return 'done'
      }),
    )
    const running = handle.tools.execute(call('s1', 'slow'))
    handle.tools.host.halt()
    const refused = await handle.tools.execute(call('s2', 'slow'))
    expect(refused.isError && refused.error.info?.code).toBe('RUNTIME_DISPOSED')
    await handle.tools.host.settled()
    const first = await running
    expect(first.isError && first.error.info?.code).toBe('ABORTED')
    release()
    await handle.dispose()
  })
})
