// Issue 21 item 4: a bad option, config value or argument of a toolgate API is a ConfigError (a
// ToolgateError with code INVALID_CONFIG) whose `path` names what to fix, and the API did nothing.
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { createQuickJsRuntime } from '../src/code-mode/index.js'
import { parseConfig } from '../src/gateway/config.js'
import {
  CallbackApproval,
  ConfigError,
  createAgent,
  createBashTool,
  createFsTools,
  createToolRuntime,
  defineTool,
  executeBatch,
  Journal,
  ResultBudget,
  SuspendingApproval,
  TimeoutPolicy,
  ToolgateError,
} from '../src/index.js'
import { connectMcpServer, createMcpServer } from '../src/mcp/index.js'
import { runModelLoop, toProviderTools } from '../src/providers/index.js'
import { rawTool, signal } from './runtime/helpers.js'

async function thrownBy(run: () => unknown): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

function expectConfigError(error: unknown, path: string, problem: RegExp): void {
  expect(error).toBeInstanceOf(ConfigError)
  expect(error).toBeInstanceOf(ToolgateError)
  const configError = error as ConfigError
  expect(configError.name).toBe('ConfigError')
  expect(configError.code).toBe('INVALID_CONFIG')
  expect(configError.path).toBe(path)
  expect(configError.issues.join('\n')).toMatch(problem)
  expect(configError.message.startsWith(`${path}:`)).toBe(true)
}

describe('ConfigError: every configuration and argument check names its path (issue 21)', () => {
  it.each<[string, string, RegExp, () => unknown]>([
    [
      'ResultBudget maxBytes below 1024',
      'ResultBudget config.maxBytes',
      />= 1024, got 100/,
      async () => new Context().plugin(ResultBudget, { maxBytes: 100 }),
    ],
    [
      'TimeoutPolicy defaultTimeoutMs -1',
      'TimeoutPolicy config.defaultTimeoutMs',
      /positive finite number, got -1/,
      async () => {
        const ctx = new Context()
        ctx.provide('tools', { get: () => undefined } as unknown as Context['tools'])
        await ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: -1 })
      },
    ],
    [
      'createBashTool with an unknown sandbox',
      'createBashTool(options).sandbox',
      /expected 'auto', 'bwrap' or 'none', got "docker"/,
      () => createBashTool({ cwd: '.', sandbox: 'docker' as 'none' }),
    ],
    [
      'createBashTool with a bad outputCapBytes',
      'createBashTool(options).outputCapBytes',
      /positive integer/,
      () => createBashTool({ cwd: '.', outputCapBytes: 0 }),
    ],
    [
      'createFsTools without a root',
      'createFsTools(options).root',
      /directory path/,
      () => createFsTools({ root: '' }),
    ],
    [
      'createFsTools with an unknown limit',
      'createFsTools(options).limits.nope',
      /unknown limit/,
      () => createFsTools({ root: '.', limits: { nope: 1 } as never }),
    ],
    [
      'createToolRuntime defaultTimeoutMs -1',
      'createToolRuntime(options).defaultTimeoutMs',
      /got -1/,
      () => createToolRuntime({ defaultTimeoutMs: -1 }),
    ],
    [
      'createToolRuntime with an unknown mode',
      'tools config.mode',
      /expected "native", "code" or "both", got weird/,
      () => createToolRuntime({ mode: 'weird' as 'native' }),
    ],
    [
      'executeBatch maxParallel 0',
      'executeBatch(options).maxParallel',
      /positive integer, got 0/,
      () =>
        executeBatch({ execute: async () => ({}), executionMode: () => 'parallel' } as never, [], { maxParallel: 0 }),
    ],
    [
      'CallbackApproval without decide',
      'CallbackApproval config.decide',
      /expected a function/,
      async () => new Context().plugin(CallbackApproval, {} as never),
    ],
    [
      'SuspendingApproval with a non-string reason',
      'SuspendingApproval config.reason',
      /expected a string/,
      async () => new Context().plugin(SuspendingApproval, { reason: 1 as never }),
    ],
    [
      'Journal without a path',
      'Journal config.path',
      /non-empty file path/,
      async () => {
        const { ctx, dispose } = await createToolRuntime()
        try {
          await ctx.plugin(Journal, { path: '' })
        } finally {
          await dispose()
        }
      },
    ],
    [
      'defineTool with an invalid definition',
      'defineTool "x"',
      /description/,
      () => defineTool({ name: 'x', parameters: {}, execute: async () => 1 } as never),
    ],
    [
      'createQuickJsRuntime with a negative limit',
      'createQuickJsRuntime(options).cpuTimeMs',
      /positive finite number, got -1/,
      () => createQuickJsRuntime({ cpuTimeMs: -1 }),
    ],
    [
      'toProviderTools with an unknown format',
      'toProviderTools(format)',
      /expected one of 'openai-chat'/,
      () => toProviderTools('nope' as 'gemini', []),
    ],
    [
      'the command-line config file',
      'toolgate.json',
      /^root: expected a non-empty directory path/,
      () => parseConfig('{ "root": 1 }', 'toolgate.json'),
    ],
  ])('%s', async (_label, path, problem, run) => {
    expectConfigError(await thrownBy(run), path, problem)
  })

  it('tools.restrict() and tools.presentAs() misuse', async () => {
    const { ctx, tools, dispose } = await createToolRuntime()
    try {
      tools.register(rawTool('echo'))
      const agent = createAgent(ctx, { id: 'a' })
      expectConfigError(await thrownBy(() => tools.restrict({ deny: ['echo'] })), 'tools.restrict()', /agent scope/)
      const refused = await thrownBy(() => agent.ctx.tools.restrict({ deny: ['nope'], allow: [] }))
      expectConfigError(refused, 'tools.restrict(filter)', /"nope" is not a registered tool/)
      // every issue is listed, each with its own path
      expect((refused as ConfigError).issues).toEqual([
        expect.stringMatching(/^filter\.allow: an empty list/),
        expect.stringMatching(/^filter\.deny\[0\]: "nope"/),
      ])
      expectConfigError(await thrownBy(() => tools.presentAs('code')), 'tools.presentAs()', /only an agent/)
      expectConfigError(
        await thrownBy(() => agent.ctx.tools.presentAs('fast' as 'code')),
        'tools.presentAs(mode)',
        /got fast/,
      )
      expectConfigError(
        await thrownBy(() => createAgent(ctx, { id: '' })),
        'createAgent(ctx, options).id',
        /non-empty string/,
      )
    } finally {
      await dispose()
    }
  })

  it('the model loop and the MCP entry points', async () => {
    const { ctx, tools, dispose } = await createToolRuntime()
    try {
      const model = { format: 'openai-chat' as const, generate: async () => ({ messages: [], calls: [] }) }
      expectConfigError(
        await thrownBy(() => runModelLoop({ tools, model, messages: [], maxSteps: 0 })),
        'runModelLoop(options).maxSteps',
        /got 0/,
      )
      expectConfigError(
        await thrownBy(() => createMcpServer(ctx, { name: '', version: '1' })),
        'createMcpServer(ctx, options).name',
        /non-empty string/,
      )
      expectConfigError(
        await thrownBy(() => connectMcpServer(new Context(), { command: 'x' }, { prefix: 1 as never })),
        'connectMcpServer(ctx, server, options).prefix',
        /expected a string/,
      )
    } finally {
      await dispose()
    }
  })

  it("a tool body's misuse of exec.progress and exec.deferContext ends the call as INVALID_CONFIG", async () => {
    const { tools, dispose } = await createToolRuntime()
    try {
      tools.register(
        rawTool('bad_progress', async (_args, exec) => {
          exec.progress({ fraction: 2 })
          return 1
        }),
      )
      tools.register(
        rawTool('bad_context', async (_args, exec) => {
          exec.deferContext({ role: 'assistant', content: [] } as never)
          return 1
        }),
      )
      const progress = await tools.execute({ callId: 'p', name: 'bad_progress', arguments: {}, signal: signal() })
      expect(progress.isError && progress.error).toEqual({
        message: 'exec.progress(progress).fraction: expected a number in [0, 1], got 2',
        info: { name: 'ConfigError', code: 'INVALID_CONFIG' },
      })
      const context = await tools.execute({ callId: 'c', name: 'bad_context', arguments: {}, signal: signal() })
      expect(context.isError && context.error).toEqual({
        message: 'exec.deferContext(context).role: expected "user"',
        info: { name: 'ConfigError', code: 'INVALID_CONFIG' },
      })
    } finally {
      await dispose()
    }
  })
})
