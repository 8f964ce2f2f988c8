// terminalApproval writes each answer read from a pipe after its prompt, as a terminal's own echo
// would show it (issue 25: the coding-agent recipe's transcript, answered through stdin, reads
// "…[d]eny? o" and not "…[d]eny? ← write_file …"). A TTY echoes by itself, so nothing is added there.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/preset/create.js'
import { terminalApproval } from '../../src/scheduling/terminal-approval.js'
import { defineTool } from '../../src/schema/define-tool.js'

/** Runs one call that needs approval, typing each line once the text before it ends the output. */
async function ask(input: PassThrough, lines: Array<[after: string, line: string]>) {
  const output = new PassThrough()
  let text = ''
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
    while (lines.length > 0 && text.endsWith(lines[0][0])) input.write(`${lines.shift()![1]}\n`)
  })
  await using runtime = await createToolRuntime({ approval: terminalApproval({ input, output }) })
  runtime.tools.register(
    defineTool({
      name: 'write_file',
      description: 'Write a file.',
      parameters: { path: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_args, path) => [{ type: 'text', text: path }] },
      needsApproval: true,
      execute: async ({ path }) => path,
    }),
  )
  const result = await runtime.tools.execute({
    callId: 'c1',
    name: 'write_file',
    arguments: { path: 'a.txt' },
    signal: AbortSignal.timeout(10_000),
  })
  return { result, text }
}

describe('terminalApproval echoes answers read from a pipe', () => {
  it('writes the choice and the reason after their prompts, escaped', async () => {
    const { result, text } = await ask(new PassThrough(), [
      ['[d]eny? ', 'x'],
      ['(deny): ', 'd'],
      ['(optional): ', 'not\u001b[31m now'],
    ])
    expect(result.isError && result.error.message).toContain('declined at the terminal: not\u001b[31m now')
    expect(text).toContain(
      'allow [o]nce, [a]lways, or [d]eny? x\n  please answer o (once), a (always) or d (deny): d\n',
    )
    expect(text).toContain('  reason for the model (optional): not\\u001b[31m now\n')
  })

  it('adds nothing when the input is a TTY, which echoes by itself', async () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true })
    const { result, text } = await ask(tty, [['[d]eny? ', 'o']])
    expect(result).toMatchObject({ isError: false, value: 'a.txt' })
    expect(text.endsWith('allow [o]nce, [a]lways, or [d]eny? ')).toBe(true)
  })
})
