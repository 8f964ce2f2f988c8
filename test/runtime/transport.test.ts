// The core's transport slot: the core knows "the transport", the Code Mode plugin fills it (issue #10).
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import * as codeMode from '../../src/code-mode/index.js'
import { CodeMode, RUN_CODE_NAME } from '../../src/code-mode/index.js'
import { createAgent, ToolRuntime, ToolRuntimeCore } from '../../src/index.js'
import { rawTool, signal } from './helpers.js'

async function core(mode: 'native' | 'code' | 'both' = 'both') {
  const ctx = new Context()
  await ctx.plugin(ToolRuntimeCore, { mode })
  return { ctx, tools: ctx.tools as unknown as ToolRuntimeCore }
}

const runCode = (code: string) => ({
  callId: 'c',
  name: RUN_CODE_NAME,
  arguments: { code, description: 'a test program' },
  signal: signal(),
})

describe('the runtime core without a transport', () => {
  it('has no run_code, and the name is an ordinary tool name', async () => {
    const { tools } = await core('both')
    tools.register(rawTool('echo'))
    expect(tools.schemas().map((s) => s.name)).toEqual(['echo'])
    const missing = await tools.execute(runCode('return 1'))
    expect(missing.isError && missing.error.info?.code).toBe('UNKNOWN_TOOL')
    const dispose = tools.register(rawTool(RUN_CODE_NAME))
    expect(tools.schemas().map((s) => s.name)).toEqual(['echo', RUN_CODE_NAME])
    dispose()
  })
})

describe('Code Mode as a Cordis plugin on the core', () => {
  it('installs run_code with its SDK, reserves the name, and uninstalls with its fiber', async () => {
    const { ctx, tools } = await core('both')
    tools.register(rawTool('echo'))
    const fiber = ctx.plugin(CodeMode, {})
    await fiber
    const schemas = tools.schemas()
    expect(schemas.map((s) => s.name)).toEqual(['echo', RUN_CODE_NAME])
    expect(schemas[1].description).toContain('echo(args: ToolArgsMap["echo"]')
    expect(() => tools.register(rawTool(RUN_CODE_NAME))).toThrow(/reserved/)
    const agent = createAgent(ctx, { id: 'a' })
    expect(() => agent.ctx.tools.restrict({ deny: [RUN_CODE_NAME] })).toThrow(/reserved transport/)
    const result = await tools.execute(runCode('return await tools.echo({ n: 1 })'))
    expect(result.isError ? result.error : result.value).toEqual({ result: { echo: { n: 1 } }, logs: [] })
    await fiber.dispose()
    expect(tools.schemas().map((s) => s.name)).toEqual(['echo'])
    const after = await tools.execute(runCode('return 1'))
    expect(after.isError && after.error.info?.code).toBe('UNKNOWN_TOOL')
  })

  it('refuses a second transport and a name already registered', async () => {
    const { ctx, tools } = await core('code')
    const preset = new Context()
    await preset.plugin(ToolRuntime, { mode: 'code' })
    await expect(async () => (await preset.plugin(CodeMode, {})).dispose()).rejects.toThrow(/already installed/)
    tools.register(rawTool(RUN_CODE_NAME))
    await expect(async () => (await ctx.plugin(CodeMode, {})).dispose()).rejects.toThrow(/already holds/)
  })

  it('under code on the core, a direct call of a hidden tool names the way back only through the installed transport', async () => {
    const { ctx, tools } = await core('code')
    tools.register(rawTool('echo'))
    const plain = await tools.execute({ callId: 'd', name: 'echo', arguments: {}, signal: signal() })
    expect(plain.isError && plain.error.message).not.toMatch(/run_code/)
    await ctx.plugin(CodeMode, {})
    const redirected = await tools.execute({ callId: 'd', name: 'echo', arguments: {}, signal: signal() })
    expect(redirected.isError && redirected.error.message).toMatch(/from inside a run_code program/)
  })

  it('an agent under native below a code-mode parent does not inherit run_code', async () => {
    const { ctx, tools } = await core('code')
    await ctx.plugin(CodeMode, {})
    tools.register(rawTool('echo'))
    const agent = createAgent(ctx, { id: 'native' })
    agent.ctx.tools.presentAs('native')
    expect(tools.schemas(agent).map((s) => s.name)).toEqual(['echo'])
    expect(tools.get(RUN_CODE_NAME, agent)).toBeUndefined()
  })
})

describe('the toolgate/code-mode subpath', () => {
  it('carries Code Mode’s public names', () => {
    for (const name of [
      'CodeMode',
      'installCodeMode',
      'createQuickJsRuntime',
      'QuickJsCodeRuntime',
      'createRunCodeDefinition',
      'renderToolsSdk',
      'jsonSchemaToTs',
      'CodeRunFailedError',
      'ToolCallError',
    ] as const) {
      expect(codeMode[name]).toBeDefined()
    }
    expect(codeMode.RUN_CODE_NAME).toBe('run_code')
  })
})
