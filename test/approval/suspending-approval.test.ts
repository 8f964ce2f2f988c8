// Issue #14: SuspendingApproval on its own (outside the model loop).
import { describe, expect, it } from 'vitest'
import { createAgent, createToolRuntime, SuspendingApproval } from '../../src/index.js'
import { rawTool, signal } from '../runtime/helpers.js'

async function setup(config?: ConstructorParameters<typeof SuspendingApproval>[1]) {
  const { ctx, tools } = await createToolRuntime()
  let ran = 0
  tools.register(
    rawTool('t', async () => {
      ran++
      return 'ran'
    }),
  )
  await ctx.plugin(SuspendingApproval, config)
  ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'check' }))
  const agent = createAgent(ctx, { id: 'a' })
  const call = (callId: string) => tools.execute({ callId, name: 't', arguments: { n: 1 }, agent, signal: signal() })
  return { call, ran: () => ran }
}

describe('SuspendingApproval (issue #14)', () => {
  it('suspends every ask by default: an APPROVAL_SUSPENDED error result, the body never runs', async () => {
    const env = await setup({ reason: 'a person decides later' })
    const result = await env.call('c1')
    expect(result.isError && result.error.info?.code).toBe('APPROVAL_SUSPENDED')
    expect(result.isError && result.error.message).toMatch(/waiting for approval.*a person decides later/)
    expect(env.ran()).toBe(0)
  })

  it('decide answers what it can; undefined suspends; a throwing decide is a denial', async () => {
    const env = await setup({
      decide: (request) => {
        if (request.callId === 'ok') return { kind: 'allowed-once' }
        if (request.callId === 'boom') throw new Error('policy store down')
        return undefined
      },
    })
    expect((await env.call('ok')).isError).toBe(false)
    const later = await env.call('later')
    expect(later.isError && later.error.info?.code).toBe('APPROVAL_SUSPENDED')
    const boom = await env.call('boom')
    expect(boom.isError && boom.error.info?.code).toBe('TOOL_DENIED')
    expect(boom.isError && boom.error.message).toMatch(/policy store down/)
    expect(env.ran()).toBe(1)
  })

  it('rejects a bad config', async () => {
    const { ctx } = await createToolRuntime()
    await expect(ctx.plugin(SuspendingApproval, { decide: 1 as never })).rejects.toThrow(
      /config\.decide: expected a function/,
    )
    await expect(ctx.plugin(SuspendingApproval, { reason: 2 as never })).rejects.toThrow(
      /config\.reason: expected a string/,
    )
  })
})
