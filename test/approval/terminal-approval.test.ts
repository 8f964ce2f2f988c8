// terminalApproval({ input, output }) driven through its streams, as a person at a terminal would (issue 25).
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/preset/create.js'
import { terminalApproval } from '../../src/scheduling/terminal-approval.js'
import { defineTool } from '../../src/schema/define-tool.js'

/** A fake terminal: what was written so far, and a way to wait for a prompt before typing. */
function terminal() {
  const input = new PassThrough()
  const output = new PassThrough()
  let text = ''
  const waiters: Array<() => void> = []
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
    for (const wake of waiters.splice(0)) wake()
  })
  /** Resolves once the output has shown `pattern` `count` times (bounded: fails instead of hanging). */
  async function shown(pattern: string, count = 1): Promise<void> {
    const deadline = Date.now() + 10_000
    while (text.split(pattern).length - 1 < count) {
      if (Date.now() > deadline) throw new Error(`never shown: ${pattern}\n--- output ---\n${text}`)
      await new Promise<void>((resolve) => {
        waiters.push(resolve)
        setTimeout(resolve, 200)
      })
    }
  }
  return { input, output, shown, text: () => text, type: (line: string) => input.write(`${line}\n`) }
}

async function runtimeWith(term: ReturnType<typeof terminal>) {
  const runtime = await createToolRuntime({ approval: terminalApproval({ input: term.input, output: term.output }) })
  let writes = 0
  runtime.tools.register(
    defineTool({
      name: 'write_file',
      description: 'Write a file.',
      parameters: { path: { type: 'string', required: true }, content: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      needsApproval: true,
      execute: async ({ path }) => {
        writes++
        return `wrote ${path}`
      },
    }),
  )
  const call = (callId: string, args: { path: string; content: string }) =>
    runtime.tools.execute({ callId, name: 'write_file', arguments: args, signal: new AbortController().signal })
  return { runtime, call, writes: () => writes }
}

describe('terminalApproval (issue 25)', () => {
  it("allows once, then remembers 'always' for later calls without asking again", async () => {
    const term = terminal()
    const { runtime, call, writes } = await runtimeWith(term)
    const first = call('c1', { path: 'a.txt', content: 'x' })
    await term.shown('allow [o]nce, [a]lways, or [d]eny? ')
    term.type('o')
    expect((await first).isError).toBe(false)

    const second = call('c2', { path: 'b.txt', content: 'y' })
    await term.shown('allow [o]nce, [a]lways, or [d]eny? ', 2)
    term.type('always')
    expect((await second).isError).toBe(false)

    // The third call is allowed by the standing rule: no question is shown, nothing is typed.
    const third = await call('c3', { path: 'c.txt', content: 'z' })
    expect(third.isError).toBe(false)
    expect(term.text().split('? approve write_file').length - 1).toBe(2)
    expect(writes()).toBe(3)
    await runtime.dispose()
  })

  it('asks for a reason on deny, and the model-facing error carries it', async () => {
    const term = terminal()
    const { runtime, call, writes } = await runtimeWith(term)
    const pending = call('c1', { path: '/etc/passwd', content: 'root' })
    await term.shown('[d]eny? ')
    term.type('d')
    await term.shown('reason for the model (optional): ')
    term.type('never touch /etc; write under ./out instead')
    const result = await pending
    expect(result.isError).toBe(true)
    if (!result.isError) throw new Error('unreachable')
    expect(result.error.info?.code).toBe('TOOL_DENIED')
    expect(result.error.message).toContain('never touch /etc; write under ./out instead')
    expect(JSON.stringify(result.content)).toContain('never touch /etc; write under ./out instead')
    expect(writes()).toBe(0)
    await runtime.dispose()
  })

  it('shows the arguments folded: long values elided, control characters escaped', async () => {
    const term = terminal()
    const { runtime, call } = await runtimeWith(term)
    const hostile = `\u001b[2J\u001b]0;pwned\u0007\r\u009b31mred${'A'.repeat(5000)}`
    const pending = call('c1', { path: 'evil\u001b[31m.txt', content: hostile })
    await term.shown('[d]eny? ')
    const shown = term.text()
    // No raw control character but the newlines of the layout itself.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding raw control characters is the point
    expect(shown).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    expect(shown).toContain('    path: "evil\\u001b[31m.txt"')
    expect(shown).toContain('\\u001b[2J\\u001b]0;pwned\\u0007\\r\\u009b31mred')
    expect(shown).toMatch(/ {4}content: "[^\n]{100,130}… \(5,022 characters, elided\)\n/)
    term.type('')
    expect((await pending).isError).toBe(true)
    await runtime.dispose()
  })

  it('re-asks on an unknown answer, and denies on an empty one', async () => {
    const term = terminal()
    const { runtime, call } = await runtimeWith(term)
    const pending = call('c1', { path: 'a', content: 'b' })
    await term.shown('[d]eny? ')
    term.type('maybe')
    await term.shown('please answer o (once), a (always) or d (deny): ')
    term.type('')
    const result = await pending
    expect(result.isError && result.error.message).toMatch(/declined at the terminal/)
    await runtime.dispose()
  })

  it('without a terminal, denies at once with a reason and says so on the output', async () => {
    const term = terminal()
    const runtime = await createToolRuntime({
      approval: terminalApproval({ input: term.input, output: term.output, interactive: false }),
    })
    runtime.tools.register(
      defineTool({
        name: 'rm',
        description: 'Remove.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        needsApproval: true,
        execute: async () => 'removed',
      }),
    )
    const result = await runtime.tools.execute({
      callId: 'c1',
      name: 'rm',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.isError && result.error.message).toMatch(/no interactive terminal to ask for approval/)
    await term.shown('approval needed for rm — denied: no interactive terminal')
    await runtime.dispose()
  })

  it('denies what is pending when the input closes', async () => {
    const term = terminal()
    const { runtime, call } = await runtimeWith(term)
    const pending = call('c1', { path: 'a', content: 'b' })
    await term.shown('[d]eny? ')
    term.input.end()
    const result = await pending
    expect(result.isError && result.error.message).toMatch(/the approval input was closed/)
    await runtime.dispose()
  })

  it('checks its options', () => {
    expect(() => terminalApproval({ input: {} as never })).toThrow(/terminalApproval\(options\)\.input/)
    expect(() => terminalApproval({ maxValueChars: 2 })).toThrow(/terminalApproval\(options\)\.maxValueChars/)
  })
})
