import { Context } from 'cordis'
import { describe, expect, it, vi } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/index.js'
import { createAgent, createToolRuntime, ToolRuntime } from '../../src/index.js'
import { coreOf } from '../../src/runtime/service.js'
import { rawTool, signal } from './helpers.js'

describe('R-REG-1 ToolRuntime is the Cordis service `tools`', () => {
  it('is provided as ctx.tools with the configured mode, default native', async () => {
    const ctx = new Context()
    await ctx.plugin(ToolRuntime)
    expect(ctx.tools).toBeInstanceOf(ToolRuntime)
    expect(ctx.tools.config.mode).toBe('native')
    const { tools } = await createToolRuntime({ mode: 'both' })
    expect(tools.config.mode).toBe('both')
  })

  it('rejects an unknown mode', async () => {
    await expect(createToolRuntime({ mode: 'weird' as never })).rejects.toThrow(/config\.mode/)
  })
})

describe('R-REG-2 agent scopes form a chain global → ancestors → agent', () => {
  it('a child agent sees its parent’s tools and shadowing applies nearest first across three levels', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t', async () => 'global'))
    const parent = createAgent(ctx, { id: 'parent' })
    const child = createAgent(parent.ctx, { id: 'child' })
    expect(tools.get('t', child)?.description).toBe('the t tool')
    parent.ctx.tools.register(rawTool('t', async () => 'parent', { description: 'parent t' }))
    expect(tools.get('t', child)?.description).toBe('parent t')
    child.ctx.tools.register(rawTool('t', async () => 'child', { description: 'child t' }))
    expect(tools.get('t', child)?.description).toBe('child t')
    expect(tools.get('t', parent)?.description).toBe('parent t')
    expect(tools.get('t')?.description).toBe('the t tool')
    const result = await tools.execute({ callId: 'c', name: 't', arguments: {}, agent: child, signal: signal() })
    expect(result.isError ? result.error : result.value).toBe('child')
  })

  it('disposing an agent disposes its registrations, restrictions, guards and listeners', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('g'))
    const agent = createAgent(ctx, { id: 'a' })
    agent.ctx.tools.register(rawTool('mine'))
    agent.ctx.tools.restrict({ deny: ['g'] })
    agent.ctx.tools.guard(() => 'no')
    const seen = vi.fn()
    agent.ctx.on('tools/result', seen)
    expect(tools.get('mine', agent)).toBeDefined()
    expect(tools.get('g', agent)).toBeUndefined()
    const scope = tools[coreOf].scopeOfAgent(agent)!
    await agent.dispose()
    expect(scope.own.size).toBe(0)
    expect(scope.restrictions.size).toBe(0)
    expect(scope.guards.size).toBe(0)
    // The disposed agent refuses work (issue 17); the global layer is untouched and its listener is gone.
    expect(() => tools.get('g', agent)).toThrow(/agent "a" was disposed/)
    const refused = await tools.execute({ callId: 'c', name: 'g', arguments: {}, agent, signal: signal() })
    expect(refused.isError && refused.error.info?.code).toBe('AGENT_DISPOSED')
    const result = await tools.execute({ callId: 'c', name: 'g', arguments: {}, signal: signal() })
    expect(result.isError).toBe(false)
    expect(seen).not.toHaveBeenCalled()
  })
})

describe('R-REG-3 register()', () => {
  it('registers globally from a plain context and in the agent scope from agent.ctx', async () => {
    const { ctx, tools } = await createToolRuntime()
    const agent = createAgent(ctx, { id: 'a' })
    const other = createAgent(ctx, { id: 'b' })
    agent.ctx.tools.register(rawTool('scoped'))
    tools.register(rawTool('global'))
    expect(tools.get('scoped')).toBeUndefined()
    expect(tools.get('scoped', agent)?.name).toBe('scoped')
    expect(tools.get('scoped', other)).toBeUndefined()
    expect(tools.get('global', other)?.name).toBe('global')
  })

  it('returns the exact, idempotent disposer and also disposes with the calling plugin', async () => {
    const { ctx, tools } = await createToolRuntime()
    const definition = rawTool('x')
    const dispose = tools.register(definition)
    // The registry keeps a frozen snapshot of the definition (#11): same fields, same callbacks.
    expect(tools.get('x')).toEqual(definition)
    expect(tools.get('x')?.execute).toBe(definition.execute)
    expect(Object.isFrozen(tools.get('x'))).toBe(true)
    dispose()
    dispose()
    expect(tools.get('x')).toBeUndefined()
    const again = tools.register(definition)
    expect(tools.get('x')?.execute).toBe(definition.execute)
    again()
    const fiber = ctx.inject(['tools'], (c) => {
      c.tools.register(rawTool('plugin-owned'))
    })
    await fiber
    expect(tools.get('plugin-owned')).toBeDefined()
    await fiber.dispose()
    expect(tools.get('plugin-owned')).toBeUndefined()
  })

  it.each([
    ['duplicate name in one layer', () => rawTool('dup'), /already registered in the global layer/],
    ['the reserved run_code name', () => rawTool(RUN_CODE_NAME), /reserved/],
    ['missing output', () => ({ ...rawTool('o'), output: undefined as never }), /definition\.output: required/],
    ['output without render', () => ({ ...rawTool('o'), output: { schema: {} } as never }), /output\.render/],
    [
      'unsupported output schema',
      () => ({ ...rawTool('o'), output: { schema: { type: 'string', minLength: 2 } as never, render: () => [] } }),
      /minLength/,
    ],
    ['zero timeoutMs', () => rawTool('t', undefined, { timeoutMs: 0 }), /timeoutMs/],
    ['infinite timeoutMs', () => rawTool('t', undefined, { timeoutMs: Number.POSITIVE_INFINITY }), /timeoutMs/],
    [
      'non-JSON parameters',
      () => ({ ...rawTool('p'), parameters: { when: new Date() } as never }),
      /definition\.parameters\.when/,
    ],
    ['missing execute', () => ({ ...rawTool('e'), execute: undefined as never }), /definition\.execute/],
  ])('refuses %s and leaves the registry exactly as it was', async (_label, make, message) => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('dup'))
    const changes = vi.fn()
    ctx.on('tools/change', changes)
    const before = tools.schemas()
    expect(() => tools.register(make())).toThrow(message)
    expect(tools.schemas()).toEqual(before)
    expect(changes).not.toHaveBeenCalled()
  })

  it('accepts free-form raw parameters (an MCP input schema with format, pattern, anyOf)', async () => {
    const { tools } = await createToolRuntime()
    const parameters = {
      type: 'object',
      properties: { a: { type: 'string', format: 'uri', pattern: '^h' }, b: { anyOf: [{}, {}] } },
    }
    tools.register({ ...rawTool('mcp'), parameters })
    expect(tools.schemas()[0].parameters).toEqual(parameters)
  })

  it('lists every problem of a bad definition at once', async () => {
    const { tools } = await createToolRuntime()
    const bad = { name: 'bad', description: 3, parameters: {}, execute: 1, timeoutMs: -1 }
    expect(() => tools.register(bad as never)).toThrow(/description[\s\S]*execute[\s\S]*output[\s\S]*timeoutMs/)
  })
})

describe('R-REG-4 restrict()', () => {
  async function setup() {
    const { ctx, tools } = await createToolRuntime()
    for (const name of ['a', 'b', 'c']) tools.register(rawTool(name))
    const agent = createAgent(ctx, { id: 'agent' })
    const names = () =>
      tools
        .schemas(agent)
        .map((s) => s.name)
        .sort()
    return { ctx, tools, agent, names }
  }

  it('restrictions intersect', async () => {
    const { agent, names } = await setup()
    agent.ctx.tools.restrict({ allow: ['a', 'b'] })
    agent.ctx.tools.restrict({ deny: ['b'] })
    expect(names()).toEqual(['a'])
    agent.ctx.tools.restrict({ allow: ['c'] })
    expect(names()).toEqual([])
  })

  it('deny-only admits later globals; an allow list excludes them', async () => {
    const { ctx, tools, agent, names } = await setup()
    const other = createAgent(ctx, { id: 'other' })
    agent.ctx.tools.restrict({ deny: ['a'] })
    other.ctx.tools.restrict({ allow: ['a'] })
    tools.register(rawTool('late'))
    expect(names()).toEqual(['b', 'c', 'late'])
    expect(tools.schemas(other).map((s) => s.name)).toEqual(['a'])
  })

  it('never hides the scope’s own registrations, and is live as registrations change', async () => {
    const { tools, agent, names } = await setup()
    agent.ctx.tools.register(rawTool('own'))
    agent.ctx.tools.restrict({ allow: ['a'] })
    expect(names()).toEqual(['a', 'own'])
    const disposeLate = tools.register(rawTool('d'))
    expect(names()).toEqual(['a', 'own'])
    disposeLate()
    expect(tools.get('a', agent)).toBeDefined()
  })

  it('applies to a child agent through its parent’s view', async () => {
    const { agent } = await setup()
    agent.ctx.tools.restrict({ deny: ['a'] })
    const child = createAgent(agent.ctx, { id: 'child' })
    expect(child.ctx.tools.get('a', child)).toBeUndefined()
    expect(child.ctx.tools.get('b', child)).toBeDefined()
  })

  it.each([
    ['an empty filter', {}, /give allow and\/or deny/],
    ['an empty allow list', { allow: [] }, /empty list/],
    ['an unknown name', { deny: ['nope'] }, /"nope" is not a registered tool/],
    ['the reserved name', { deny: [RUN_CODE_NAME] }, /reserved/],
    ['a scope-local name', { deny: ['own'] }, /own scope/],
  ])('refuses %s without changing anything', async (_label, filter, message) => {
    const { ctx, agent, names } = await setup()
    agent.ctx.tools.register(rawTool('own'))
    const changes = vi.fn()
    ctx.on('tools/change', changes)
    const before = names()
    expect(() => agent.ctx.tools.restrict(filter)).toThrow(message)
    expect(names()).toEqual(before)
    expect(changes).not.toHaveBeenCalled()
  })

  it('is refused from a plain context', async () => {
    const { tools } = await setup()
    expect(() => tools.restrict({ deny: ['a'] })).toThrow(/agent scope/)
  })

  it('has an idempotent disposer that lifts only itself', async () => {
    const { agent, names } = await setup()
    const lift = agent.ctx.tools.restrict({ deny: ['a'] })
    agent.ctx.tools.restrict({ deny: ['b'] })
    lift()
    lift()
    expect(names()).toEqual(['a', 'c'])
  })
})

describe('R-REG-5 guard()', () => {
  it('a plain-context guard is global; an agent guard applies only to that agent', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    const a = createAgent(ctx, { id: 'a' })
    const b = createAgent(ctx, { id: 'b' })
    a.ctx.tools.guard((exec) => (exec.name === 't' ? 'a says no' : undefined))
    const ra = await tools.execute({ callId: '1', name: 't', arguments: {}, agent: a, signal: signal() })
    const rb = await tools.execute({ callId: '2', name: 't', arguments: {}, agent: b, signal: signal() })
    expect(ra.isError && ra.error.message).toMatch(/a says no/)
    expect(rb.isError).toBe(false)
    const dispose = tools.guard(() => 'global no')
    const rb2 = await tools.execute({ callId: '3', name: 't', arguments: {}, agent: b, signal: signal() })
    expect(rb2.isError && rb2.error.message).toMatch(/global no/)
    dispose()
    dispose()
    const rb3 = await tools.execute({ callId: '4', name: 't', arguments: {}, agent: b, signal: signal() })
    expect(rb3.isError).toBe(false)
  })
})

describe('R-REG-6 get() and schemas()', () => {
  it('schemas() are deep-cloned allow-list projections free of callbacks and host-only fields', async () => {
    const { tools } = await createToolRuntime()
    tools.register(
      rawTool('t', undefined, {
        timeoutMs: 1000,
        isConcurrencySafe: () => true,
        presentCall: () => undefined,
        finalizeContent: () => undefined,
        parameters: { type: 'object', properties: { x: { type: 'string' } } },
      }),
    )
    const [schema] = tools.schemas()
    expect(Object.keys(schema).sort()).toEqual(['description', 'name', 'parameters'])
    expect(JSON.stringify(schema)).not.toMatch(/timeoutMs|output|execute/)
    ;(schema.parameters as { type: string }).type = 'mutated'
    expect((tools.schemas()[0].parameters as { type: string }).type).toBe('object')
    expect(tools.schemas()).not.toBe(tools.schemas())
  })

  it('a restricted-away global reads as absent', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('t'))
    const agent = createAgent(ctx, { id: 'a' })
    agent.ctx.tools.restrict({ deny: ['t'] })
    expect(tools.get('t', agent)).toBeUndefined()
    expect(tools.get('t')).toBeDefined()
    const result = await tools.execute({ callId: '1', name: 't', arguments: {}, agent, signal: signal() })
    expect(result.isError && result.error.info?.code).toBe('UNKNOWN_TOOL')
  })

  it('rejects a scope that is not an agent', async () => {
    const { tools } = await createToolRuntime()
    expect(() => tools.schemas({ id: 'x', ctx: {} } as never)).toThrow(/createAgent/)
  })
})

describe('R-REG-7 executionMode() fails closed', () => {
  it('is parallel only for an exact true', async () => {
    const { tools } = await createToolRuntime()
    const answers: Record<string, () => unknown> = {
      yes: () => true,
      truthy: () => 1,
      throws: () => {
        throw new Error('x')
      },
      no: () => false,
    }
    for (const [name, answer] of Object.entries(answers)) {
      tools.register(rawTool(name, undefined, { isConcurrencySafe: answer as () => boolean }))
    }
    tools.register(rawTool('undeclared'))
    const mode = (name: string) => tools.executionMode({ callId: 'c', name, arguments: {}, signal: signal() }).kind
    expect(mode('yes')).toBe('parallel')
    expect(mode('truthy')).toBe('exclusive')
    expect(mode('throws')).toBe('exclusive')
    expect(mode('no')).toBe('exclusive')
    expect(mode('undeclared')).toBe('exclusive')
    expect(mode('unknown')).toBe('exclusive')
  })

  it('is exclusive for a tool hidden from the calling agent', async () => {
    const { ctx, tools } = await createToolRuntime()
    tools.register(rawTool('yes', undefined, { isConcurrencySafe: () => true }))
    const agent = createAgent(ctx, { id: 'a' })
    agent.ctx.tools.restrict({ deny: ['yes'] })
    expect(tools.executionMode({ callId: 'c', name: 'yes', arguments: {}, agent, signal: signal() }).kind).toBe(
      'exclusive',
    )
  })
})

describe('R-REG-8 presentAs()', () => {
  it('is agent-only, once per scope, nearest scope wins, and the disposer restores the default', async () => {
    const { ctx, tools } = await createToolRuntime({ mode: 'native' })
    tools.register(rawTool('t'))
    expect(() => tools.presentAs('code')).toThrow(/only an agent/)
    const parent = createAgent(ctx, { id: 'p' })
    const child = createAgent(parent.ctx, { id: 'c' })
    const dispose = parent.ctx.tools.presentAs('both')
    expect(() => parent.ctx.tools.presentAs('code')).toThrow(/already declared/)
    expect(() => child.ctx.tools.presentAs('nope' as never)).toThrow(/expected "native"/)
    child.ctx.tools.presentAs('code')
    expect(tools.schemas(parent).map((s) => s.name)).toEqual(['t', RUN_CODE_NAME])
    expect(tools.schemas(child).map((s) => s.name)).toEqual([RUN_CODE_NAME])
    dispose()
    expect(tools.schemas(parent).map((s) => s.name)).toEqual(['t'])
  })
})

describe('R-REG-9 tools/change', () => {
  it('fires on every visible change and not on failed calls', async () => {
    const { ctx, tools } = await createToolRuntime()
    const changes = vi.fn()
    ctx.on('tools/change', changes)
    const dispose = tools.register(rawTool('t'))
    expect(changes).toHaveBeenCalledTimes(1)
    const agent = createAgent(ctx, { id: 'a' })
    agent.ctx.tools.register(rawTool('own'))
    expect(changes).toHaveBeenCalledTimes(2)
    const lift = agent.ctx.tools.restrict({ deny: ['t'] })
    expect(changes).toHaveBeenCalledTimes(3)
    lift()
    expect(changes).toHaveBeenCalledTimes(4)
    dispose()
    dispose()
    expect(changes).toHaveBeenCalledTimes(5)
    expect(() => tools.register(rawTool(RUN_CODE_NAME))).toThrow()
    expect(changes).toHaveBeenCalledTimes(5)
  })

  it('reaches agent-scoped listeners too (unfiltered) and a throwing listener never reaches register()', async () => {
    const { ctx, tools } = await createToolRuntime()
    const agent = createAgent(ctx, { id: 'a' })
    const scoped = vi.fn()
    agent.ctx.on('tools/change', scoped)
    ctx.on('tools/change', () => {
      throw new Error('listener bug')
    })
    const after = vi.fn()
    ctx.on('tools/change', after)
    expect(() => tools.register(rawTool('t'))).not.toThrow()
    expect(scoped).toHaveBeenCalledTimes(1)
    expect(after).toHaveBeenCalledTimes(1)
  })
})
