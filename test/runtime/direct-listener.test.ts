// Listeners marked with directListener are called by the registry itself, not through the Proxy
// Cordis wraps every `ctx.on` listener in; unmarked listeners still go through it. Either way each
// phase's contract holds (R-EXEC-1 order, R-EXEC-11 tools/result only observes).
import { describe, expect, it } from 'vitest'
import type { ToolExecution, ToolExecutionResult } from '../../src/contract/execution.js'
import { createToolRuntime } from '../../src/index.js'
import { directListener } from '../../src/runtime/index.js'
import { admitted } from '../../src/runtime/waterfall.js'
import { rawTool, signal } from './helpers.js'

describe('direct listeners', () => {
  it('the registry calls a marked listener itself, and an unmarked one through Cordis', async () => {
    const { ctx, tools } = await createToolRuntime()
    const marked = directListener((_exec: ToolExecution, next: () => Promise<ToolExecutionResult>) => next())
    const plain = (_exec: ToolExecution, next: () => Promise<ToolExecutionResult>) => next()
    ctx.on('tools/execute', marked)
    ctx.on('tools/execute', plain)
    const hooks = (ctx as unknown as { events: { _hooks: Parameters<typeof admitted>[0] } }).events._hooks
    // The last two registered: the preset's own listeners (its timeouts) come first.
    const [first, second] = admitted(hooks, {}, 'tools/execute').slice(-2)
    expect(first).toBe(marked)
    expect(second).not.toBe(plain)
    expect(typeof second).toBe('function')
    const result = await tools.execute({ callId: 'c', name: 'missing', arguments: {}, signal: signal() })
    expect(result.isError).toBe(true)
  })

  it('marked and unmarked listeners of every phase run in order, with the same this and arguments', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t', async () => ({ ok: true })))
    const seen: string[] = []
    const thisOf: unknown[] = []
    const unmarked = <F extends (...args: never[]) => unknown>(listener: F): F => listener
    for (const [label, wrap] of [
      ['direct', directListener],
      ['proxied', unmarked],
    ] as const) {
      for (const [event, step] of [
        ['tools/pre-execute', 'pre'],
        ['tools/execute', 'execute'],
      ] as const)
        ctx.on(
          event,
          wrap(function (this: unknown, exec: { name: string }, next: () => Promise<unknown>) {
            seen.push(`${label} ${step} ${exec.name}`)
            thisOf.push(this)
            return next()
          }) as never,
        )
      ctx.on(
        'tools/result',
        wrap(function (this: unknown, exec: ToolExecution, result: ToolExecutionResult) {
          seen.push(`${label} result ${exec.name} ${result.isError}`)
          thisOf.push(this)
        }) as never,
      )
    }
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    expect(result.isError).toBe(false)
    expect(seen).toEqual([
      'direct pre t',
      'proxied pre t',
      'direct execute t',
      'proxied execute t',
      'direct result t false',
      'proxied result t false',
    ])
    // One dispatch `this` per phase for both kinds.
    for (let i = 0; i < thisOf.length; i += 2) expect(thisOf[i]).toBe(thisOf[i + 1])
  })

  it('an asynchronous tools/result listener is awaited; one that throws or rejects stops no other', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    const order: string[] = []
    ctx.on(
      'tools/result',
      directListener(() => {
        throw new Error('sync')
      }),
    )
    ctx.on(
      'tools/result',
      directListener(async () => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        order.push('slow listener done')
      }),
    )
    ctx.on('tools/result', () => Promise.reject(new Error('async')))
    ctx.on('tools/result', () => {
      order.push('last listener ran')
    })
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, signal: signal() })
    order.push('call resolved')
    expect(result.isError).toBe(false)
    expect(order).toEqual(['last listener ran', 'slow listener done', 'call resolved'])
  })
})
