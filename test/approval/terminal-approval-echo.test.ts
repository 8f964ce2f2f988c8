// terminalApproval writes each answer read from a pipe after its prompt, as a terminal's own echo
// would show it (issue 25: the coding-agent recipe's transcript, answered through stdin, reads
// "…[d]eny? o" and not "…[d]eny? ← write_file …"). A TTY echoes by itself, so nothing is added there.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { ApprovalOutcome } from '../../src/index.js'
import { terminalApproval } from '../../src/scheduling/terminal-approval.js'

const REQUEST = {
  callId: 'c1',
  rootCallId: 'c1',
  parentCallId: null,
  agentId: 'coder',
  toolName: 'write_file',
  arguments: { path: 'a.txt' },
  reason: null,
}

/** Asks once through `input`/`output`, typing each line once the text before it is on the output. */
async function ask(input: PassThrough, lines: Array<[after: string, line: string]>) {
  const output = new PassThrough()
  let text = ''
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
    while (lines.length > 0 && text.endsWith(lines[0][0])) input.write(`${lines.shift()![1]}\n`)
  })
  const decide = terminalApproval({ input, output })
  const outcome: ApprovalOutcome = await decide(REQUEST, { signal: AbortSignal.timeout(10_000) })
  return { outcome, text }
}

describe('terminalApproval echoes answers read from a pipe', () => {
  it('writes the choice and the reason after their prompts, escaped', async () => {
    const { outcome, text } = await ask(new PassThrough(), [
      ['[d]eny? ', 'x'],
      ['(deny): ', 'd'],
      ['(optional): ', 'not\u001b[31m now'],
    ])
    expect(outcome).toMatchObject({ kind: 'denied', reason: 'declined at the terminal: not\u001b[31m now' })
    expect(text).toContain(
      'allow [o]nce, [a]lways, or [d]eny? x\n  please answer o (once), a (always) or d (deny): d\n',
    )
    expect(text).toContain('  reason for the model (optional): not\\u001b[31m now\n')
  })

  it('adds nothing when the input is a TTY, which echoes by itself', async () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true })
    const { outcome, text } = await ask(tty, [['[d]eny? ', 'o']])
    expect(outcome.kind).toBe('allowed-once')
    expect(text.endsWith('allow [o]nce, [a]lways, or [d]eny? ')).toBe(true)
  })
})
