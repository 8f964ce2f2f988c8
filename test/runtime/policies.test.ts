// Policies without Cordis idioms (issue 17): `defineTool({ needsApproval })` asks through the approval
// service with no listener; `createToolRuntime({ approval, defaultTimeoutMs })` installs the service
// and the timeout policy.
import { describe, expect, it } from 'vitest'
import {
  type ApprovalRequest,
  createAgent,
  createToolRuntime,
  defineTool,
  type ToolExecutionResult,
  ToolRegistrationError,
} from '../../src/index.js'
import { rawTool, signal } from './helpers.js'

function codeOf(result: ToolExecutionResult): unknown {
  return result.isError ? result.error.info?.code : undefined
}

function deleteTool(runs: string[], needsApproval: boolean | ((args: { path: string }) => boolean | string)) {
  return defineTool({
    name: 'delete_file',
    description: 'Delete a file.',
    parameters: { path: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
    needsApproval,
    execute: async ({ path }) => {
      runs.push(path)
      return `deleted ${path}`
    },
  })
}

describe('defineTool({ needsApproval })', () => {
  it('true asks the approval service before every call; only an allow runs the body', async () => {
    const asked: ApprovalRequest[] = []
    let answer: 'allowed-once' | 'denied' = 'allowed-once'
    const runs: string[] = []
    const { tools } = await createToolRuntime({
      approval: (request) => {
        asked.push(request)
        return answer === 'denied' ? { kind: 'denied', reason: 'not today' } : { kind: answer }
      },
    })
    tools.register(deleteTool(runs, true))
    const ok = await tools.execute({
      callId: 'c1',
      name: 'delete_file',
      arguments: { path: 'a.txt' },
      signal: signal(),
    })
    expect(ok).toMatchObject({ isError: false, value: 'deleted a.txt' })
    answer = 'denied'
    const no = await tools.execute({
      callId: 'c2',
      name: 'delete_file',
      arguments: { path: 'b.txt' },
      signal: signal(),
    })
    expect(codeOf(no)).toBe('TOOL_DENIED')
    expect(no.isError && no.error.message).toMatch(/not today/)
    expect(runs).toEqual(['a.txt'])
    // Calls without an agent are asked like any other (agentId null).
    expect(asked.map((r) => [r.toolName, r.arguments, r.reason, r.agentId])).toEqual([
      ['delete_file', { path: 'a.txt' }, null, null],
      ['delete_file', { path: 'b.txt' }, null, null],
    ])
  })

  it('a predicate asks with its reason string, and false proceeds without asking', async () => {
    const reasons: Array<string | null> = []
    const runs: string[] = []
    const { ctx, tools } = await createToolRuntime({
      approval: (request) => {
        reasons.push(request.reason)
        return { kind: 'allowed-once' }
      },
    })
    tools.register(deleteTool(runs, ({ path }) => (path.startsWith('/etc') ? `${path} is a system file` : false)))
    const agent = createAgent(ctx, { id: 'main' })
    for (const path of ['notes.txt', '/etc/passwd']) {
      const r = await tools.execute({ callId: path, name: 'delete_file', arguments: { path }, agent, signal: signal() })
      expect(r.isError).toBe(false)
    }
    expect(reasons).toEqual(['/etc/passwd is a system file'])
    expect(runs).toEqual(['notes.txt', '/etc/passwd'])
  })

  it('does not ask about arguments that fail validation: the call fails INVALID_ARGS without running', async () => {
    let asked = 0
    const runs: string[] = []
    const { tools } = await createToolRuntime({
      approval: () => {
        asked++
        return { kind: 'allowed-once' }
      },
    })
    tools.register(deleteTool(runs, () => true))
    const r = await tools.execute({ callId: 'c', name: 'delete_file', arguments: { path: 7 }, signal: signal() })
    expect(codeOf(r)).toBe('INVALID_ARGS')
    expect(asked).toBe(0)
    expect(runs).toEqual([])
  })

  it('asks once when a tools/pre-execute listener already asked for the same call', async () => {
    let asked = 0
    const { ctx, tools } = await createToolRuntime({
      approval: () => {
        asked++
        return { kind: 'allowed-once' }
      },
    })
    tools.register(deleteTool([], true))
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'listener' }))
    const r = await tools.execute({ callId: 'c', name: 'delete_file', arguments: { path: 'x' }, signal: signal() })
    expect(r.isError).toBe(false)
    expect(asked).toBe(1)
  })

  it('without an approval service the ask is denied with a reason', async () => {
    const { tools } = await createToolRuntime()
    tools.register(deleteTool([], true))
    const r = await tools.execute({ callId: 'c', name: 'delete_file', arguments: { path: 'x' }, signal: signal() })
    expect(codeOf(r)).toBe('TOOL_DENIED')
    expect(r.isError && r.error.message).toMatch(/no approval service is available/)
  })

  it('a throwing predicate fails the call (POLICY_ERROR); a malformed answer is INVALID_DECISION', async () => {
    const runs: string[] = []
    const { tools } = await createToolRuntime({ approval: () => ({ kind: 'allowed-once' }) })
    tools.register(
      rawTool('boom', async () => runs.push('boom'), {
        needsApproval: () => {
          throw new Error('cannot tell')
        },
      }),
    )
    tools.register(
      rawTool('odd', async () => runs.push('odd'), { needsApproval: (() => 42) as unknown as () => boolean }),
    )
    const boom = await tools.execute({ callId: 'c', name: 'boom', arguments: {}, signal: signal() })
    expect(codeOf(boom)).toBe('POLICY_ERROR')
    expect(boom.isError && boom.error.message).toMatch(/needsApproval failed: cannot tell/)
    const odd = await tools.execute({ callId: 'c', name: 'odd', arguments: {}, signal: signal() })
    expect(codeOf(odd)).toBe('INVALID_DECISION')
    expect(runs).toEqual([])
  })

  it('registration refuses a needsApproval that is neither a boolean nor a function', async () => {
    const { tools } = await createToolRuntime()
    expect(() => tools.register(rawTool('bad', undefined, { needsApproval: 'yes' as unknown as boolean }))).toThrow(
      ToolRegistrationError,
    )
    expect(() =>
      defineTool({
        name: 'bad',
        description: 'x',
        parameters: {},
        output: { schema: { type: 'null' }, render: () => [] },
        needsApproval: 'yes' as unknown as boolean,
        execute: async () => null,
      }),
    ).toThrow(/needsApproval: must be a function/)
  })
})

describe('createToolRuntime({ approval, defaultTimeoutMs })', () => {
  const slow = (ms: number, extra = {}) =>
    rawTool(
      `slow${ms}`,
      (_args, exec) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve('done'), ms)
          exec.signal.addEventListener('abort', () => {
            clearTimeout(timer)
            reject(exec.signal.reason)
          })
        }),
      extra,
    )

  it('defaultTimeoutMs bounds tools that declare no timeoutMs', async () => {
    const { tools } = await createToolRuntime({ defaultTimeoutMs: 30 })
    tools.register(slow(5_000))
    const r = await tools.execute({ callId: 'c', name: 'slow5000', arguments: {}, signal: signal() })
    expect(codeOf(r)).toBe('TOOL_TIMEOUT')
    expect(r.isError && r.error.message).toMatch(/timed out after 30 ms/)
  })

  it("a tool's own timeoutMs is enforced without any option", async () => {
    const { tools } = await createToolRuntime()
    tools.register(slow(5_000, { timeoutMs: 30 }))
    tools.register(slow(1))
    expect(codeOf(await tools.execute({ callId: 'c', name: 'slow5000', arguments: {}, signal: signal() }))).toBe(
      'TOOL_TIMEOUT',
    )
    expect((await tools.execute({ callId: 'c', name: 'slow1', arguments: {}, signal: signal() })).isError).toBe(false)
  })

  it("approval: 'terminal' installs the terminal service (without a TTY it denies, saying why)", async () => {
    const { tools, ctx } = await createToolRuntime({ approval: 'terminal' })
    expect(ctx.get('approval')).toBeDefined()
    tools.register(deleteTool([], true))
    const r = await tools.execute({ callId: 'c', name: 'delete_file', arguments: { path: 'x' }, signal: signal() })
    if (process.stdin.isTTY) return // an interactive run would wait for a human
    expect(codeOf(r)).toBe('TOOL_DENIED')
    expect(r.isError && r.error.message).toMatch(/no interactive terminal/)
  })

  it('refuses malformed options with a clear error', async () => {
    await expect(createToolRuntime({ defaultTimeoutMs: -1 })).rejects.toThrow(
      /options\)\.defaultTimeoutMs: expected a positive finite number/,
    )
    await expect(createToolRuntime({ approval: 'yes' as 'terminal' })).rejects.toThrow(
      /options\)\.approval: expected a decide\(request, context\) function or 'terminal', got "yes"/,
    )
  })
})
