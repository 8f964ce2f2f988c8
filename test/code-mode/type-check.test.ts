// Issue 40, item 1: a run_code program is type-checked against exactly the SDK its agent sees
// before anything of it runs. 'refuse' fails the call with CODE_TYPE_ERROR (no sub-call runs, the
// journal keeps the refusal), 'warn' runs it and returns the diagnostics, 'off' skips the check.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { afterEach, describe, expect, it } from 'vitest'
import { type CodeTypeCheckMode, ProgramChecker } from '../../src/code-mode/program-checker.js'
import { createAgent, defineTool, Journal, type JournalRecord, readJournal, ToolRuntime } from '../../src/index.js'

const render = (_args: unknown, value: unknown) => [{ type: 'text' as const, text: JSON.stringify(value) }]
const fibers: { dispose(): unknown }[] = []
afterEach(async () => {
  for (const fiber of fibers.splice(0)) await fiber.dispose()
})

async function setup(typeCheck?: CodeTypeCheckMode, journal?: string) {
  const ctx = new Context()
  const fiber = ctx.plugin(ToolRuntime, {
    mode: 'code',
    codeMode: { runtime: 'inline', ...(typeCheck === undefined ? {} : { typeCheck }) },
  })
  fibers.push(fiber)
  await fiber
  if (journal !== undefined) await ctx.plugin(Journal, { path: journal })
  const ran: string[] = []
  ctx.tools.register(
    defineTool({
      name: 'send_message',
      description: 'Send a message to a channel.',
      parameters: { channel: { type: 'string', required: true }, text: { type: 'string', required: true } },
      output: {
        schema: { type: 'object', properties: { id: { type: 'string', required: true } }, additionalProperties: false },
        render,
      },
      execute: async ({ channel, text }) => {
        ran.push(`send ${channel}: ${text}`)
        return { id: `m${ran.length}` }
      },
    }),
  )
  ctx.tools.register(
    defineTool({
      name: 'count',
      description: 'Count to n.',
      parameters: { n: { type: 'integer', required: true } },
      output: { schema: { type: 'integer' }, render },
      execute: async ({ n }) => {
        ran.push(`count ${n}`)
        return n
      },
    }),
  )
  const agent = createAgent(ctx, { id: 'a1' })
  let calls = 0
  const run = (code: string) =>
    ctx.tools.execute({
      callId: `c${++calls}`,
      name: 'run_code',
      arguments: { code, description: 'test' },
      agent,
      signal: new AbortController().signal,
    })
  return { ctx, agent, ran, run }
}

const BAD = [
  "await tools.send_message({ channel: 'ops', text: 'deploy started' })",
  'const n = await tools.count({ n: 3 })',
  'if (n > 100) {',
  "  await tools.send_mesage({ channel: 'ops', text: 'many' })",
  '}',
  "await tools.send_message({ chanel: 'ops', text: 'done' })",
  'const id: number = (await tools.send_message({ channel: "x", text: "y" })).id',
  'return n',
].join('\n')

describe('codeMode.typeCheck (issue 40, item 1)', { timeout: 60_000 }, () => {
  it("'refuse': errors on the program's own lines, and nothing of it runs", async () => {
    const { run, ran } = await setup('refuse')
    const result = await run(BAD)
    expect(result.isError).toBe(true)
    if (!result.isError) return
    expect(result.error.info).toMatchObject({ name: 'CodeTypeError', code: 'CODE_TYPE_ERROR' })
    const text = result.error.message
    // A misspelled tool in a branch that would not be taken, a wrong argument name, a wrong result type.
    expect(text).toMatch(/^4:15: Property 'send_mesage' does not exist on type .*\(TS2551\)$/m)
    expect(text).toMatch(
      /^6:26: Argument of type '\{ chanel: string; text: string; \}' is not assignable .* Property 'channel' is missing .*\(TS2345\)$/m,
    )
    expect(text).toMatch(/^7:7: Type 'string' is not assignable to type 'number'\. \(TS2322\)$/m)
    expect(text).toContain('against the SDK declarations above (TypeScript 5.')
    expect(ran).toEqual([])
  })

  it("a correct program runs, and 'any'-typed escapes are TypeScript's business, not stricter", async () => {
    const { run, ran } = await setup('refuse')
    const result = await run(
      [
        "const { id } = await tools.send_message({ channel: 'ops', text: 'hi' })",
        'const loose: any = { n: 2 }',
        'const two = await tools.count(loose)',
        'return { id, two }',
      ].join('\n'),
    )
    expect(result.isError).toBe(false)
    expect(result.isError === false && result.value).toEqual({ result: { id: 'm1', two: 2 }, logs: [] })
    expect(ran).toEqual(['send ops: hi', 'count 2'])
  })

  it("'warn' runs the program and returns the diagnostics beside the result", async () => {
    const { run, ran } = await setup('warn')
    const result = await run('const n: string = await tools.count({ n: 1 })\nreturn n')
    expect(result.isError).toBe(false)
    if (result.isError) return
    expect(result.value).toEqual({
      result: 1,
      logs: [],
      diagnostics: ["1:7: Type 'number' is not assignable to type 'string'. (TS2322)"],
    })
    expect(result.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('Type errors (the program ran anyway)'),
    })
    expect(ran).toEqual(['count 1'])
  })

  it("'off' (the default) runs what does not check, as before", async () => {
    const { run, ran } = await setup()
    const result = await run("const label: number = 'three'\nawait tools.count({ n: 3 })\nreturn label")
    expect(result.isError === false && result.value).toEqual({ result: 'three', logs: [] })
    expect(ran).toEqual(['count 3'])
  })

  it('at most 20 diagnostics, and a program error at the end is reported at the end', async () => {
    const { run } = await setup('refuse')
    const lines = Array.from({ length: 25 }, (_, i) => `const v${i}: number = 'x'`)
    const result = await run(lines.join('\n'))
    if (!result.isError) throw new Error('expected a refusal')
    const diagnostics = result.error.message.split('\n').filter((line) => /^\d+:\d+: /.test(line))
    expect(diagnostics).toHaveLength(20)
    expect(result.error.message).toContain('… and more (only the first 20 are shown)')
  })

  it('checks against the agent’s own view: a tool it may not see does not check', async () => {
    const { ctx, run } = await setup('refuse')
    const narrow = createAgent(ctx, { id: 'narrow' })
    narrow.ctx.tools.restrict({ deny: ['send_message'] })
    const result = await ctx.tools.execute({
      callId: 'n1',
      name: 'run_code',
      arguments: { code: "await tools.send_message({ channel: 'a', text: 'b' })", description: 'x' },
      agent: narrow,
      signal: new AbortController().signal,
    })
    expect(result.isError && result.error.message).toContain("Property 'send_message' does not exist")
    // The same program checks for the agent that sees the tool.
    const wide = await run("await tools.send_message({ channel: 'a', text: 'b' })")
    expect(wide.isError ? wide.error.message : 'ran').toBe('ran')
  })

  it('a missing required field and a wrong type in a branch that is not taken are refused', async () => {
    const { run, ran } = await setup('refuse')
    const result = await run(
      [
        'const n = await tools.count({ n: 2 })',
        "await tools.send_message({ channel: 'ops' })",
        'if (n < 0) {',
        "  await tools.count({ n: 'minus' })",
        '}',
        'return n',
      ].join('\n'),
    )
    if (!result.isError) throw new Error('expected a refusal')
    expect(result.error.info).toMatchObject({ code: 'CODE_TYPE_ERROR' })
    const lines = result.error.message.split('\n').filter((line) => /^\d+:\d+: /.test(line))
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^2:26: .*Property 'text' is missing in type '\{ channel: string; \}'.*\(TS2345\)$/)
    expect(lines[1]).toMatch(/^4:23: Type 'string' is not assignable to type 'number'\. \(TS2322\)$/)
    // The count before the bad send did not run either: the program is refused as a whole.
    expect(ran).toEqual([])
  })

  it('an unknown tool on a line that would run is refused before the calls above it', async () => {
    const { run, ran } = await setup('refuse')
    const result = await run("await tools.send_message({ channel: 'a', text: 'b' })\nreturn await tools.delete_all({})")
    expect(result.isError && result.error.message).toMatch(/^2:20: Property 'delete_all' does not exist on type /m)
    expect(ran).toEqual([])
  })

  it('the journal records the refusal as the call’s result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-typecheck-'))
    try {
      const path = join(dir, 'journal.jsonl')
      const { run, ran } = await setup('refuse', path)
      const result = await run("await tools.count({ n: 'x' })")
      expect(result.isError).toBe(true)
      const records: JournalRecord[] = []
      for await (const record of readJournal(path)) records.push(record)
      const final = records.find((r) => r.type === 'result' && r.toolName === 'run_code')
      expect(final?.type === 'result' && final.result.isError && final.result.error.info).toMatchObject({
        code: 'CODE_TYPE_ERROR',
      })
      expect(final?.type === 'result' && final.result.isError && final.result.error.message).toContain(
        "1:21: Type 'string' is not assignable to type 'number'. (TS2322)",
      )
      expect(records.some((r) => r.type === 'code-dispatch' || r.toolName === 'count')).toBe(false)
      expect(ran).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the checker warms when a runtime with codeMode.typeCheck on is created (issue 40, item 1: speed)', {
  timeout: 180_000,
}, () => {
  const SDK = [
    'interface ToolArgsMap {\n  count: {\n    n: number\n  }\n}',
    'interface ToolOutputMap {\n  count: number\n}',
    'declare const tools: {\n  count(args: ToolArgsMap["count"]): Promise<ToolOutputMap["count"]>\n}',
  ].join('\n')
  const PROGRAM = "const a = await tools.count({ n: 1 })\nconst b: string = await tools.count({ n: 'x' })\nreturn a"

  it('a warmed checker reports exactly what a cold one does, and warming twice is one warm-up', async () => {
    const cold = new ProgramChecker()
    const warmed = new ProgramChecker()
    try {
      const expected = await cold.check(SDK, PROGRAM)
      expect(expected?.diagnostics.map((d) => d.line)).toEqual([2, 2])
      const first = warmed.warm()
      expect(warmed.warm()).toBe(first)
      await first
      expect(await warmed.check(SDK, PROGRAM)).toEqual(expected)
    } finally {
      await cold.dispose()
      await warmed.dispose()
    }
  })

  it('a check sent while the thread warms is answered, and the same as a cold one', async () => {
    const cold = new ProgramChecker()
    const warmed = new ProgramChecker()
    try {
      const expected = await cold.check(SDK, PROGRAM)
      const warming = warmed.warm()
      const during = await warmed.check(SDK, PROGRAM)
      await warming
      expect(during).toEqual(expected)
    } finally {
      await cold.dispose()
      await warmed.dispose()
    }
  })
})
