import { PassThrough } from 'node:stream'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import '../../src/runtime/events.js'
import type {
  Agent,
  ApprovalContext,
  ApprovalOutcome,
  ApprovalRequest,
  ToolExecution,
  ToolExecutionToken,
} from '../../src/contract/execution.js'
import { CallbackApproval, normalizeApprovalOutcome, TerminalApproval } from '../../src/scheduling/approval.js'
import { flush, until } from './fakes.js'

function request(name: string, args: unknown = { path: 'notes.txt' }, signal = new AbortController().signal) {
  const ctx = new Context()
  const agent: Agent = { id: 'agent-7', ctx }
  const execution = {
    callId: `call-${name}`,
    rootCallId: `call-${name}`,
    name,
    arguments: args,
    agent,
    signal,
    token: Symbol('t') as ToolExecutionToken,
  } as ToolExecution
  const request: ApprovalRequest = {
    callId: execution.callId,
    rootCallId: execution.rootCallId,
    parentCallId: null,
    agentId: agent.id,
    toolName: name,
    arguments: args as ToolExecution['arguments'],
    reason: `${name} modifies the workspace`,
  }
  contexts.set(request, { signal, agent, execution })
  return request
}

const contexts = new WeakMap<ApprovalRequest, ApprovalContext>()

/** The service, asked the way the pipeline asks: the plain request plus its context beside it. */
function approvalOf(ctx: Context): { request(request: ApprovalRequest): Promise<ApprovalOutcome> } {
  const service = ctx.get('approval')
  if (!service) throw new Error('no approval service')
  return {
    request(request) {
      const context = contexts.get(request)
      if (!context) throw new Error('request() built no context')
      return service.request(request, context)
    },
  }
}

describe('R-SCHED-3 normalizeApprovalOutcome', () => {
  it('keeps the contract kinds and denies everything else', () => {
    expect(normalizeApprovalOutcome({ kind: 'allowed-once', extra: 1 })).toEqual({ kind: 'allowed-once' })
    expect(normalizeApprovalOutcome({ kind: 'denied', reason: 'no' })).toEqual({ kind: 'denied', reason: 'no' })
    expect(normalizeApprovalOutcome({ kind: 'cancelled', reason: 7 })).toEqual({ kind: 'cancelled' })
    expect(normalizeApprovalOutcome({ kind: 'allowed-always', extra: 1 })).toEqual({ kind: 'allowed-always' })
    expect(normalizeApprovalOutcome({ kind: 'denied-always', reason: 'r' })).toEqual({
      kind: 'denied-always',
      reason: 'r',
    })
    expect(normalizeApprovalOutcome({ kind: 'allowed-once', arguments: { a: 1 } })).toEqual({
      kind: 'allowed-once',
      arguments: { a: 1 },
    })
    expect(normalizeApprovalOutcome({ kind: 'allowed-forever' })).toEqual({
      kind: 'denied',
      reason: 'unsupported approval outcome "allowed-forever"',
    })
    expect(normalizeApprovalOutcome(true)).toEqual({
      kind: 'denied',
      reason: 'the approval service returned no outcome',
    })
    expect(normalizeApprovalOutcome(undefined).kind).toBe('denied')
  })
})

describe('R-SCHED-3 CallbackApproval', () => {
  it('provides the approval service and passes the request to decide()', async () => {
    const ctx = new Context()
    const seen: ApprovalRequest[] = []
    await ctx.plugin(CallbackApproval, {
      decide(req) {
        seen.push(req)
        return { kind: 'allowed-once' }
      },
    })
    const req = request('write_file')
    expect(await approvalOf(ctx).request(req)).toEqual({ kind: 'allowed-once' })
    expect(seen).toEqual([req])
  })

  it.each<[string, () => ApprovalOutcome | Promise<ApprovalOutcome>, ApprovalOutcome]>([
    ['a sync denial', () => ({ kind: 'denied', reason: 'policy' }), { kind: 'denied', reason: 'policy' }],
    ['an async cancellation', async () => ({ kind: 'cancelled' }), { kind: 'cancelled' }],
    [
      'an unknown kind',
      () => ({ kind: 'allowed-forever' }) as unknown as ApprovalOutcome,
      { kind: 'denied', reason: 'unsupported approval outcome "allowed-forever"' },
    ],
    [
      'a throwing decider',
      () => {
        throw new Error('db down')
      },
      { kind: 'denied', reason: 'the approval callback failed: db down' },
    ],
    [
      'a rejecting decider',
      () => Promise.reject(new Error('timeout')),
      { kind: 'denied', reason: 'the approval callback failed: timeout' },
    ],
  ])('answers %s with a well-formed outcome and never rejects', async (_, decide, expected) => {
    const ctx = new Context()
    await ctx.plugin(CallbackApproval, { decide })
    expect(await approvalOf(ctx).request(request('write_file'))).toEqual(expected)
  })

  it('rejects a config without decide()', async () => {
    const ctx = new Context()
    await expect(ctx.plugin(CallbackApproval, {} as never)).rejects.toThrow(
      /^CallbackApproval config\.decide: expected a function/,
    )
  })

  it('is withdrawn with its fiber', async () => {
    const ctx = new Context()
    const fiber = await ctx.plugin(CallbackApproval, { decide: () => ({ kind: 'allowed-once' }) })
    expect(ctx.get('approval')).toBeDefined()
    await fiber.dispose()
    expect(ctx.get('approval')).toBeUndefined()
  })
})

/** Fake terminal streams; `tty` marks the input as a TTY like `process.stdin` on a terminal. */
function terminal(tty: boolean) {
  const input = new PassThrough()
  const output = new PassThrough()
  if (tty) Object.assign(input, { isTTY: true })
  let text = ''
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
  })
  return { input, output, text: () => text }
}

describe('R-SCHED-3 TerminalApproval', () => {
  it('denies with a reason when there is no TTY, and says so on the output', async () => {
    const ctx = new Context()
    const term = terminal(false)
    await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    const outcome = await approvalOf(ctx).request(request('write_file'))
    expect(outcome).toEqual({ kind: 'denied', reason: 'no interactive terminal to ask for approval' })
    await flush()
    expect(term.text()).toContain('approval needed for write_file (write_file modifies the workspace)')
    expect(term.text()).toContain('denied: no interactive terminal')
  })

  it('on a TTY shows the tool, agent, reason and JSON arguments and allows once on "y"', async () => {
    const ctx = new Context()
    const term = terminal(true)
    await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    const pending = approvalOf(ctx).request(request('write_file', { path: 'a.txt', text: 'hi "there"' }))
    await until(() => term.text().includes('[y/N]'), 'the prompt')
    expect(term.text()).toContain('approve write_file (call call-write_file, agent agent-7)')
    expect(term.text()).toContain('reason:    write_file modifies the workspace')
    expect(term.text()).toContain('arguments: {"path":"a.txt","text":"hi \\"there\\""}')
    term.input.write('y\n')
    expect(await pending).toEqual({ kind: 'allowed-once' })
  })

  it.each(['n', '', 'maybe', 'yess'])('treats %j as a denial', async (answer) => {
    const ctx = new Context()
    const term = terminal(true)
    await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    const pending = approvalOf(ctx).request(request('delete'))
    await until(() => term.text().includes('[y/N]'), 'the prompt')
    term.input.write(`${answer}\n`)
    expect(await pending).toEqual({ kind: 'denied', reason: 'declined at the terminal' })
  })

  it('asks one question at a time, in order, and type-ahead never answers an unseen question', async () => {
    const ctx = new Context()
    const term = terminal(true)
    await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    const approval = approvalOf(ctx)
    const first = approval.request(request('first'))
    const second = approval.request(request('second'))
    await until(() => term.text().includes('[y/N]'), 'the first prompt')
    await flush()
    expect(term.text()).toContain('approve first')
    expect(term.text()).not.toContain('approve second')
    term.input.write('YES\ny\n') // the second "y" was typed before the second question was shown
    expect(await first).toEqual({ kind: 'allowed-once' })
    await until(() => term.text().includes('approve second'), 'the second prompt')
    await flush()
    let settled = false
    void second.then(() => {
      settled = true
    })
    await flush()
    expect(settled).toBe(false)
    term.input.write('n\n')
    expect(await second).toEqual({ kind: 'denied', reason: 'declined at the terminal' })
  })

  it('observes the signal: cancelling the shown or a queued question answers cancelled', async () => {
    const ctx = new Context()
    const term = terminal(true)
    await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    const approval = approvalOf(ctx)
    const shown = new AbortController()
    const queued = new AbortController()
    const a = approval.request(request('shown', {}, shown.signal))
    const b = approval.request(request('queued', {}, queued.signal))
    const c = approval.request(request('later'))
    await until(() => term.text().includes('approve shown'), 'the first prompt')
    queued.abort()
    expect(await b).toMatchObject({ kind: 'cancelled' })
    shown.abort()
    expect(await a).toMatchObject({ kind: 'cancelled' })
    await until(() => term.text().includes('approve later'), 'the next prompt')
    expect(term.text()).not.toContain('approve queued')
    term.input.write('y\n')
    expect(await c).toEqual({ kind: 'allowed-once' })
    expect(await approval.request(request('pre-aborted', {}, AbortSignal.abort()))).toMatchObject({ kind: 'cancelled' })
  })

  it('closed input denies what is pending and everything after', async () => {
    const ctx = new Context()
    const term = terminal(true)
    await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    const approval = approvalOf(ctx)
    const a = approval.request(request('a'))
    const b = approval.request(request('b'))
    await until(() => term.text().includes('[y/N]'), 'the prompt')
    term.input.end()
    const closed = { kind: 'denied', reason: 'the approval input was closed' }
    expect(await a).toEqual(closed)
    expect(await b).toEqual(closed)
    expect(await approval.request(request('c'))).toEqual(closed)
  })

  it('disposing the plugin denies pending questions', async () => {
    const ctx = new Context()
    const term = terminal(true)
    const fiber = await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    const pending = approvalOf(ctx).request(request('a'))
    await until(() => term.text().includes('[y/N]'), 'the prompt')
    await fiber.dispose()
    expect(await pending).toEqual({ kind: 'denied', reason: 'the approval service was disposed' })
  })

  it('previews huge and deeply nested arguments without overflowing', async () => {
    const ctx = new Context()
    const term = terminal(true)
    await ctx.plugin(TerminalApproval, { input: term.input, output: term.output })
    let deep: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) deep = { d: deep }
    const pending = approvalOf(ctx).request(request('deep', deep))
    await until(() => term.text().includes('[y/N]'), 'the prompt')
    const line =
      term
        .text()
        .split('\n')
        .find((l) => l.includes('arguments:')) ?? ''
    expect(line.startsWith('  arguments: {"d":{"d":')).toBe(true)
    expect(line.endsWith('…')).toBe(true)
    expect(line.length).toBeLessThan(1100)
    term.input.write('n\n')
    await pending
  })

  it('rejects streams that are not streams', async () => {
    const ctx = new Context()
    await expect(ctx.plugin(TerminalApproval, { input: {} as NodeJS.ReadableStream })).rejects.toThrow(
      /^TerminalApproval config\.input: expected a readable stream/,
    )
  })
})
