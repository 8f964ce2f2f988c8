// The gateway policy hides denied tools from listings after a burst of registrations, in one pass
// (a pass per change made an upstream's N tools cost N passes over N names, at start and at close),
// while its guard refuses a denied tool's call on its own, without waiting for that pass.
import { describe, expect, it } from 'vitest'
import { configDecider, enforcePolicy } from '../../src/gateway/policy.js'
import { createAgent, createToolRuntime, defineTool } from '../../src/index.js'

const tool = (name: string) =>
  defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: {},
    output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
    execute: async () => 'ok',
  })

describe('enforcePolicy: hiding denied tools', () => {
  it('hides after a burst in one pass, refuses calls before it, and does nothing once disposed', async () => {
    const { ctx, tools } = await createToolRuntime()
    const agent = createAgent(ctx, { id: 'gw' })
    let passes = 0
    const registered: string[] = []
    const names = () => {
      passes++
      return registered
    }
    enforcePolicy(agent, configDecider({ deny: ['secret_*'] }), names)
    const call = (name: string) =>
      agent.ctx.tools.execute({ callId: `c-${name}`, name, arguments: {}, agent, signal: new AbortController().signal })
    const before = passes
    for (let i = 0; i < 200; i++) {
      const name = i % 2 === 0 ? `secret_${i}` : `plain_${i}`
      registered.push(name)
      tools.register(tool(name))
    }
    // The guard refuses the call on its own, whatever the listing shows (it does not wait for a pass).
    const refused = await call('secret_0')
    expect(refused.isError).toBe(true)
    expect(refused.error?.message).toContain('the gateway policy denies "secret_0"')
    await Promise.resolve()
    // One pass for the burst (and at most one more for the restriction it installed).
    expect(passes - before).toBeGreaterThanOrEqual(1)
    expect(passes - before).toBeLessThanOrEqual(2)
    const listed = agent.ctx.tools.schemas(agent).map((schema) => schema.name)
    expect(listed).toContain('plain_1')
    expect(listed.filter((name) => name.startsWith('secret_'))).toEqual([])
    const ok = await call('plain_1')
    expect(ok.isError).toBe(false)
    // Disposed with a pass still queued: that pass meets a disposed agent and ends quietly (an
    // AGENT_DISPOSED thrown from the microtask would be an uncaught error here), and no change after
    // the dispose starts another.
    registered.push('secret_late')
    tools.register(tool('secret_late'))
    await agent.dispose()
    await new Promise((resolve) => setTimeout(resolve, 0))
    const afterDispose = passes
    tools.register(tool('secret_later'))
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(passes).toBe(afterDispose)
  })
})
