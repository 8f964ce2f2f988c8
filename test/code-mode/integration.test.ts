import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { createAgent, defineTool, ToolRuntime } from '../../src/index.js'
import { RUNTIME_KINDS } from './runtimes.js'

describe.each(RUNTIME_KINDS)('R-CODE-2 run_code through the real registry pipeline (%s runtime)', (kind) => {
  it('dispatches SDK bindings as nested pipeline calls and returns the program value', async () => {
    const ctx = new Context()
    // A budget far above this program's needs: the first run also pays QuickJS's compilation.
    const fiber = ctx.plugin(ToolRuntime, { mode: 'code', codeMode: { runtime: kind, limits: { cpuTimeMs: 2_000 } } })
    await fiber
    const tools = ctx.tools
    tools.register(
      defineTool({
        name: 'add',
        description: 'Add two integers.',
        parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
        output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
        isConcurrencySafe: () => true,
        execute: async ({ a, b }) => a + b,
      }),
    )
    const agent = createAgent(ctx, { id: 'a1' })
    const seen: string[] = []
    ctx.on('tools/result', (exec) => {
      seen.push(`${exec.callId}${exec.parent ? ' (nested)' : ''}`)
    })
    expect(tools.sdk(agent)).toContain('add(args: ToolArgsMap["add"]): Promise<ToolOutputMap["add"]>')
    const result = await tools.execute({
      callId: 'c1',
      name: 'run_code',
      arguments: {
        code: 'const [x, y] = await Promise.all([tools.add({ a: 1, b: 2 }), tools.add({ a: 3, b: 4 })]); console.log(x, y); try { await tools.add({ a: "no" }) } catch (e) { console.log(e.name) } return x + y',
        description: 'Add some numbers',
      },
      agent,
      signal: new AbortController().signal,
    })
    expect(result.isError).toBe(false)
    expect(result.value).toEqual({ result: 10, logs: ['3 7', 'ToolCallError'] })
    expect(seen).toEqual(['c1:code:1 (nested)', 'c1:code:2 (nested)', 'c1:code:3 (nested)', 'c1'])
    const failed = await tools.execute({
      callId: 'c2',
      name: 'run_code',
      arguments: { code: 'while (true) {}', description: 'Spin' },
      agent,
      signal: new AbortController().signal,
    })
    expect(failed.isError && failed.error.info).toMatchObject({
      name: 'CodeRunFailedError',
      code: 'CODE_RUN_FAILED',
    })
    expect(failed.isError && failed.error.message).toMatch(/exceeded its CPU budget of 2000 ms/)
    await fiber.dispose()
  })
})
