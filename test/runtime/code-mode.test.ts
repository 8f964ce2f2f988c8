import { afterAll, describe, expect, it } from 'vitest'
import { type CodeDispatchRecord, RUN_CODE_NAME } from '../../src/code-mode/index.js'
import type { ToolExecution } from '../../src/contract/execution.js'
import { createAgent, createToolRuntime, defineTool } from '../../src/index.js'
import { RUNTIME_KINDS } from '../code-mode/runtimes.js'
import { signal } from './helpers.js'

const add = defineTool({
  name: 'add',
  description: 'Add two integers.',
  parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
  output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
  execute: async ({ a, b }) => a + b,
  isConcurrencySafe: () => true,
})

// Issue 10: the same contract holds on both built-in runtimes.
describe.each(RUNTIME_KINDS)('%s runtime', (kind) => {
  const handles: Array<{ dispose(): Promise<void> }> = []
  afterAll(async () => {
    await Promise.all(handles.splice(0).map((handle) => handle.dispose()))
  })

  async function setup(mode: 'native' | 'code' | 'both' = 'code') {
    const handle = await createToolRuntime({ mode, codeMode: { runtime: kind } })
    handles.push(handle)
    handle.tools.register(add)
    return { ctx: handle.ctx, tools: handle.tools }
  }

  describe('R-CODE-1 run_code is a reserved transport with a generated SDK', () => {
    it('under code the model sees only run_code, whose description carries the scope’s SDK', async () => {
      const { tools } = await setup('code')
      const schemas = tools.schemas()
      expect(schemas.map((s) => s.name)).toEqual([RUN_CODE_NAME])
      expect(schemas[0].description).toContain('add(args: ToolArgsMap["add"]')
      expect(tools.sdk()).toContain('interface ToolArgsMap')
      expect(tools.sdk()).not.toContain(RUN_CODE_NAME)
      expect(schemas[0].parameters).toMatchObject({ required: ['code', 'description'] })
    })

    it('under both the model sees native tools and run_code; under native no run_code', async () => {
      expect((await setup('both')).tools.schemas().map((s) => s.name)).toEqual(['add', RUN_CODE_NAME])
      const native = await setup('native')
      expect(native.tools.schemas().map((s) => s.name)).toEqual(['add'])
      const r = await native.tools.execute({
        callId: 'c',
        name: RUN_CODE_NAME,
        arguments: { code: 'return 1', description: 'x' },
        signal: signal(),
      })
      expect(r.isError && r.error.info?.code).toBe('UNKNOWN_TOOL')
    })

    it('presentAs per agent overrides the config default, and the SDK follows the agent’s visibility', async () => {
      const { ctx, tools } = await setup('native')
      tools.register({ ...add, name: 'secret' })
      const agent = createAgent(ctx, { id: 'a' })
      agent.ctx.tools.presentAs('code')
      agent.ctx.tools.restrict({ deny: ['secret'] })
      expect(tools.schemas(agent).map((s) => s.name)).toEqual([RUN_CODE_NAME])
      expect(tools.sdk(agent)).not.toContain('secret')
      expect(tools.sdk()).toContain('secret')
    })
  })

  describe('R-CODE-2 each binding call is a sub-dispatch through the full pipeline', () => {
    it('carries parent, deterministic ids, the same agent and rootCallId', async () => {
      const { ctx, tools } = await setup('code')
      const agent = createAgent(ctx, { id: 'coder' })
      const seen: ToolExecution[] = []
      let outerToken: symbol | undefined
      ctx.on('tools/pre-execute', async (exec, next) => {
        if (exec.name === RUN_CODE_NAME) outerToken = exec.token
        else seen.push(exec)
        return next()
      })
      const result = await tools.execute({
        callId: 'call-7',
        name: RUN_CODE_NAME,
        arguments: {
          description: 'adds numbers with two tool calls',
          code: 'const x = await tools.add({ a: 1, b: 2 }); console.log("x", x); return await tools.add({ a: x, b: 10 })',
        },
        agent,
        signal: signal(),
      })
      expect(result.isError ? result.error : result.value).toEqual({ result: 13, logs: ['x 3'] })
      expect(seen.map((e) => e.callId)).toEqual(['call-7:code:1', 'call-7:code:2'])
      expect(seen.every((e) => e.parent === outerToken && e.agent === agent && e.rootCallId === 'call-7')).toBe(true)
    })

    it('a denied sub-call rejects in the program with ToolCallError { toolName, message } only', async () => {
      const { ctx, tools } = await setup('code')
      ctx.on('tools/pre-execute', async (exec, next) =>
        exec.name === 'add' ? { kind: 'deny', reason: 'no adding' } : next(),
      )
      const result = await tools.execute({
        callId: 'c',
        name: RUN_CODE_NAME,
        arguments: {
          description: 'shows what a denied call looks like',
          code: 'try { await tools.add({ a: 1, b: 2 }) } catch (e) { return { name: e.name, keys: Object.keys(e).sort(), toolName: e.toolName, message: e.message } }',
        },
        signal: signal(),
      })
      expect(result.isError ? result.error : result.value).toMatchObject({
        result: { name: 'ToolCallError', keys: ['message', 'toolName'], toolName: 'add' },
      })
      const value = result.isError ? undefined : (result.value as { result: { message: string } })
      expect(value?.result.message).toMatch(/no adding/)
    })
  })

  describe('R-CODE-4 tools/code-dispatch-log and the durable record', () => {
    it('may replace only the logged content; a throwing listener falls back to the original', async () => {
      const { ctx, tools } = await setup('code')
      const records: CodeDispatchRecord[] = []
      ctx.on('tools/code-dispatch', (record) => {
        records.push(record)
      })
      let calls = 0
      ctx.on('tools/code-dispatch-log', async (_log, next) => {
        calls++
        if (calls === 2) throw new Error('log listener bug')
        await next()
        return [{ type: 'text', text: 'spilled' }]
      })
      const result = await tools.execute({
        callId: 'p',
        name: RUN_CODE_NAME,
        arguments: {
          description: 'two adds for the log',
          code: 'return [await tools.add({ a: 1, b: 1 }), await tools.add({ a: 2, b: 2 })]',
        },
        signal: signal(),
      })
      expect(result.isError ? result.error : result.value).toEqual({ result: [2, 4], logs: [] })
      expect(records.map((r) => [r.subCallId, r.name, r.isError, r.content])).toEqual([
        ['p:code:1', 'add', false, [{ type: 'text', text: 'spilled' }]],
        ['p:code:2', 'add', false, [{ type: 'text', text: '4' }]],
      ])
    })
  })

  describe('R-CODE-5 under code, model-direct native calls are UNKNOWN_TOOL before any policy', () => {
    it('names the way back; under both the native call works', async () => {
      const { ctx, tools } = await setup('code')
      let policies = 0
      ctx.on('tools/pre-execute', async (_e, next) => {
        policies++
        return next()
      })
      const direct = await tools.execute({ callId: 'c', name: 'add', arguments: { a: 1, b: 2 }, signal: signal() })
      expect(direct.isError && direct.error.info?.code).toBe('UNKNOWN_TOOL')
      expect(direct.isError && direct.error.message).toMatch(/run_code/)
      expect(policies).toBe(0)
      const both = await setup('both')
      const native = await both.tools.execute({ callId: 'c', name: 'add', arguments: { a: 1, b: 2 }, signal: signal() })
      expect(native.isError ? native.error : native.value).toBe(3)
    })
  })
})
