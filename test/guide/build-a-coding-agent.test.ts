// Issue 25, "done when": the coding-agent recipe's code, taken from the page itself (its `ts` blocks
// in order, unmodified), runs as a user runs it: a separate Node process (tsx) in a fresh directory
// whose node_modules holds toolgate (the built package, through its `exports`) and `openai`, after
// the page's setup block made its workspace. The test answers the terminal approval on the
// program's stdin once the question is shown, and checks what really happened: the file was
// written after the approval, bash ran under bubblewrap inside the Code Mode program, the journal
// has every call, and the page's printed output is what the program printed.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { pageBlocks, ROOT } from '../../scripts/sync-guide.js'
import {
  type ApprovalOutcome,
  createAgent,
  createToolRuntime,
  defineTool,
  type JournalRecord,
  readJournal,
} from '../../src/index.js'

const PAGE = 'docs/guide/recipes/build-a-coding-agent.md'
const page = readFileSync(join(ROOT, PAGE), 'utf8')
const program = pageBlocks(PAGE, 'ts').join('\n')
const tsx = join(ROOT, 'node_modules/tsx/dist/cli.mjs')
const PROMPT = 'allow [o]nce, [a]lways, or [d]eny? '
const ORIGINAL = 'echo "Hello, $NAME!"\n'
const FIXED = 'echo "Hello, $1!"\n'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A fresh project directory as the page's "Set up" leaves it: the packages, agent.ts, the workspace. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-coding-agent-'))
  dirs.push(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'coding-agent', private: true, type: 'module' }))
  mkdirSync(join(dir, 'node_modules'))
  // 'toolgate' resolves through its package.json `exports` to dist/, as an installed tarball does.
  symlinkSync(ROOT, join(dir, 'node_modules/toolgate'), 'dir')
  // TOOLGATE_SDK_MAJOR=next: the program runs with `openai` 7, the npm alias `openai7` (issue 42).
  const openai = process.env.TOOLGATE_SDK_MAJOR === 'next' ? 'openai7' : 'openai'
  symlinkSync(join(ROOT, 'node_modules', openai), join(dir, 'node_modules/openai'), 'dir')
  writeFileSync(join(dir, 'agent.ts'), program)
  const setup = /<!-- the test runs this block -->\n```sh\n([\s\S]*?)^```$/m.exec(page)?.[1]
  if (setup === undefined) throw new Error(`${PAGE}: no setup block`)
  execFileSync('bash', ['-e', '-c', setup], { cwd: dir })
  return dir
}

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** A line to type once `after` appears on stdout (after what the previous answer waited for). */
interface Answer {
  readonly after: string
  readonly line: string
}

/**
 * Runs `npx tsx agent.ts` in `dir`, typing each answer on its stdin once its prompt is shown, as a
 * person at the terminal would. Bounded: a run that hangs is killed and fails the test.
 */
function runAgent(dir: string, answers: readonly Answer[]): Promise<Run> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [tsx, 'agent.ts'], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1' },
  })
  let stdout = ''
  let stderr = ''
  let seen = 0
  const pending = [...answers]
  child.stdout.setEncoding('utf8')
  child.stderr.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk
    while (pending.length > 0) {
      const at = stdout.indexOf(pending[0].after, seen)
      if (at < 0) break
      const answer = pending.shift()!
      child.stdin.write(`${answer.line}\n`)
      seen = at + answer.after.length
    }
  })
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk
  })
  // An agent that exits right after its prompt closes its stdin, and the typed answer then fails
  // with EPIPE: kept for the run's report (its code and output tell), not thrown at the whole run.
  child.stdin.on('error', (error) => {
    stderr += `\n[the test's typing failed: ${error.message}]`
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`agent.ts did not finish in 120 s\n--- stdout\n${stdout}\n--- stderr\n${stderr}`))
    }, 120_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

async function journal(dir: string): Promise<JournalRecord[]> {
  const records: JournalRecord[] = []
  for await (const record of readJournal(join(dir, 'session.jsonl'))) records.push(record)
  return records
}

/** The output block the page shows under "Run it". */
function shownOutput(): string[] {
  const run = page.slice(page.indexOf('## Run it'))
  const block = /```text\n([\s\S]*?)^```$/m.exec(run)?.[1]
  if (block === undefined) throw new Error(`${PAGE}: no output block under "Run it"`)
  return block.trimEnd().split('\n')
}

describe(`${PAGE} (issue 25)`, () => {
  it('the page holds the whole program, imports only toolgate and openai, and is examples/coding-agent.ts', () => {
    expect(program).toContain('await using runtime = await createToolRuntime(')
    const imported = [...program.matchAll(/^import .* from '([^']+)'$/gm)].map(([, from]) => from)
    expect(imported.length).toBeGreaterThan(0)
    for (const from of imported) expect(from).toMatch(/^(toolgate(\/[\w/-]+)?|openai)$/)
    // Every line of the example is on the page (the guide test checks each block against its region).
    const code = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.trim() !== '' && !/^\/\/ #(end)?region /.test(line.trim()))
        .join('\n')
    const example = readFileSync(join(ROOT, 'examples/coding-agent.ts'), 'utf8')
    expect(code(program)).toBe(code(example.slice(example.indexOf('// #region imports'))))
  })

  it('runs as shown: the write waits for "o" on stdin, bash runs sandboxed in Code Mode, the journal has it all', async () => {
    const dir = project()
    expect(readFileSync(join(dir, 'workspace/greet.sh'), 'utf8')).toBe(ORIGINAL)
    const run = await runAgent(dir, [{ after: PROMPT, line: 'o' }])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)

    // The file was written, after the question was shown.
    expect(readFileSync(join(dir, 'workspace/greet.sh'), 'utf8')).toBe(FIXED)
    const asked = run.stdout.indexOf(PROMPT)
    expect(asked).toBeGreaterThan(0)
    expect(run.stdout.indexOf('← write_file: Wrote greet.sh')).toBeGreaterThan(asked)

    // What the page shows is what it printed: the same lines (the "o" read from the pipe is echoed
    // as a terminal would show it; the two parallel results may come in either order).
    const printed = run.stdout.trimEnd().split('\n')
    expect([...printed].sort()).toEqual([...shownOutput()].sort())
    expect(printed.at(-8)).toBe(
      'answer: Fixed: greet.sh now greets the name it is given (it read $NAME, which is never set).',
    )

    // The journal: every call, the approval before the write ran, bash under bubblewrap inside run_code.
    const records = await journal(dir)
    const started = records.filter((record) => record.type === 'call-started').map((record) => record.toolName)
    expect(started).toEqual(['list_dir', 'read_file', 'write_file', 'run_code', 'bash', 'bash'])
    const write = records.filter((record) => record.toolName === 'write_file').map((record) => record.type)
    expect(write).toEqual(['call-started', 'approval-asked', 'approval-answered', 'result'])
    const answered = records.find((record) => record.type === 'approval-answered')
    expect(answered).toMatchObject({ outcome: { kind: 'allowed-once' }, source: 'service', standing: false })
    const results = records.flatMap((record) => (record.type === 'result' ? [record] : []))
    expect(results.every((record) => !record.result.isError)).toBe(true)
    const runCode = results.find((record) => record.toolName === 'run_code')!
    const bash = results.filter((record) => record.toolName === 'bash')
    expect(bash.map((record) => [record.parentCallId, record.result.value])).toEqual([
      [runCode.callId, expect.objectContaining({ command: 'bash greet.sh Ada', sandbox: 'bwrap', exitCode: 0 })],
      [runCode.callId, expect.objectContaining({ command: 'bash greet.sh Grace', sandbox: 'bwrap', exitCode: 0 })],
    ])
    expect(bash.map((record) => (record.result.value as { output: string }).output)).toEqual([
      'Hello, Ada!\n',
      'Hello, Grace!\n',
    ])
    // The Code Mode program's result is what the model read.
    expect(runCode.result.value).toMatchObject({
      result: ['Hello, Ada! (sandbox: bwrap)', 'Hello, Grace! (sandbox: bwrap)'],
    })
  })

  it('answering "d" and a reason leaves the file as it was, and the model reads the reason', async () => {
    const dir = project()
    const run = await runAgent(dir, [
      { after: PROMPT, line: 'd' },
      { after: 'reason for the model (optional): ', line: 'the script is fine' },
    ])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(readFileSync(join(dir, 'workspace/greet.sh'), 'utf8')).toBe(ORIGINAL)
    expect(run.stdout).toContain(
      `${PROMPT}d\n  reason for the model (optional): the script is fine\n← write_file TOOL_DENIED: Tool "write_file" was denied`,
    )
    expect(run.stdout).toContain('journal: write_file denied\n')
    const records = await journal(dir)
    const result = records.find((record) => record.type === 'result' && record.toolName === 'write_file')
    expect(result).toMatchObject({ result: { isError: true, error: { info: { code: 'TOOL_DENIED' } } } })
    const denial =
      result?.type === 'result' && result.result.content.map((block) => block.type === 'text' && block.text)
    expect(denial).toEqual([expect.stringContaining('declined at the terminal: the script is fine')])
    // The script carried on: the unfixed script ran, still in the sandbox.
    expect(run.stdout).toContain('← run_code: Result: [ "Hello, ! (sandbox: bwrap)", "Hello, ! (sandbox: bwrap)" ]')
  })
})

// The page's claims about deadlines and asks, checked in-process against the source.
describe(`${PAGE}: deadlines and approval`, () => {
  /** A runtime whose approver answers "allowed-once" after `delayMs`, and whose default deadline is `deadlineMs`. */
  async function slowApprover(delayMs: number, deadlineMs = 200) {
    const runtime = await createToolRuntime({
      approval: (_request, { signal }) =>
        new Promise<ApprovalOutcome>((resolve) => {
          const timer = setTimeout(() => resolve({ kind: 'allowed-once' }), delayMs)
          signal.addEventListener('abort', () => {
            clearTimeout(timer)
            resolve({ kind: 'cancelled' })
          })
        }),
      defaultTimeoutMs: deadlineMs,
    })
    runtime.tools.register(
      defineTool({
        name: 'poke',
        description: 'Needs a yes.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
        needsApproval: true,
        execute: async () => 'poked',
      }),
    )
    const agent = createAgent(runtime.ctx, { id: 'coder' })
    agent.ctx.tools.presentAs('both')
    return { ...runtime, agent }
  }

  it("the time a call waits for its answer does not count against the call's deadline", async () => {
    await using runtime = await slowApprover(600)
    const result = await runtime.tools.execute({
      callId: 'c1',
      name: 'poke',
      arguments: {},
      agent: runtime.agent,
      signal: AbortSignal.timeout(60_000),
    })
    expect(result).toMatchObject({ isError: false, value: 'poked' })
  })

  it("a Code Mode program's deadline does not count the time its asks wait for an answer", async () => {
    // The answer takes twice the program's whole deadline; the deadline is generous beside the
    // program's own running time (the sandbox is warmed up first).
    await using runtime = await slowApprover(2_000, 1_000)
    const runCode = (callId: string, code: string) =>
      runtime.tools.execute({
        callId,
        name: 'run_code',
        arguments: { code, description: 'Poke' },
        agent: runtime.agent,
        signal: AbortSignal.timeout(60_000),
      })
    await runCode('warm-up', 'return 1')
    const result = await runCode('c2', 'return await tools.poke({})')
    expect(result).toMatchObject({ isError: false, value: { result: 'poked' } })
  }, 30_000)
})
