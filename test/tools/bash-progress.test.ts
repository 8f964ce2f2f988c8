import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolProgress } from '../../src/contract/execution.js'
import { createToolRuntime } from '../../src/preset/create.js'
import { TimeoutPolicy } from '../../src/scheduling/timeout-policy.js'
import { createBashTool } from '../../src/tools/index.js'
import { OutputProgress } from '../../src/tools/output-progress.js'
import { fakeRunContext, tempDir } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }

beforeEach(async () => {
  ws = await tempDir('bash-progress')
})

afterEach(async () => {
  await ws.cleanup()
})

describe('bash reports its latest output lines as progress', () => {
  it('reports the latest lines while the command runs, throttled', async () => {
    const bash = createBashTool({ cwd: ws.dir, progressIntervalMs: 40 })
    const seen: ToolProgress[] = []
    const args = { command: 'for i in 1 2 3 4 5 6; do echo "line $i"; sleep 0.08; done' }
    const value = (await bash.execute(
      args,
      fakeRunContext('bash', args, undefined, (p) => seen.push(p)),
    )) as { exitCode: number }
    expect(value.exitCode).toBe(0)
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(seen[0]).toEqual({ message: 'line 1' })
    // Each report holds at most the last three lines, in order.
    for (const p of seen) {
      const lines = p.message?.split('\n') ?? []
      expect(lines.length).toBeLessThanOrEqual(3)
      const numbers = lines.map((l) => Number(l.replace('line ', '')))
      expect(numbers).toEqual([...numbers].sort())
    }
    expect(seen.some((p) => p.message?.includes('line 5'))).toBe(true)
  })

  it('a flood of output yields a bounded number of reports', async () => {
    const bash = createBashTool({ cwd: ws.dir, progressIntervalMs: 100 })
    const seen: ToolProgress[] = []
    const args = { command: "seq 1 300000 | sed 's/^/row /'" }
    const started = Date.now()
    const value = (await bash.execute(
      args,
      fakeRunContext('bash', args, undefined, (p) => seen.push(p)),
    )) as { exitCode: number; truncated: boolean }
    const elapsed = Date.now() - started
    expect(value.exitCode).toBe(0)
    expect(value.truncated).toBe(true)
    // The first report comes at once, then at most one per interval.
    expect(seen.length).toBeGreaterThanOrEqual(1)
    expect(seen.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1)
    for (const p of seen) {
      // Complete lines, then possibly the line being written (a prefix of "row N").
      const shown = p.message?.split('\n') ?? []
      for (const line of shown.slice(0, -1)) expect(line).toMatch(/^row \d+$/)
      expect(shown.at(-1)).toMatch(/^(r(o(w( \d*)?)?)?)?$/)
    }
  })

  it('OutputProgress strips control sequences and cuts long lines', () => {
    const seen: ToolProgress[] = []
    const progress = new OutputProgress((p) => seen.push(p), 10_000)
    progress.push(Buffer.from(`\u001b[31mred\u001b[0m text\n${'x'.repeat(500)}\n`))
    progress.close()
    expect(seen).toEqual([{ message: `red text\n${'x'.repeat(200)}…` }])
  })

  it('under TimeoutPolicy, a silent command ends as an idle TOOL_TIMEOUT and a chatty one runs on', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(TimeoutPolicy, {})
    // Unconfined: sandbox start-up on a loaded machine would eat into the idle budget under test, which
    // is 15× the chatty command's longest quiet spell so a loaded machine cannot starve it into a timeout.
    tools.register(
      createBashTool({ cwd: ws.dir, idleTimeoutMs: 1_500, progressIntervalMs: 20, killGraceMs: 200, sandbox: 'none' }),
    )
    const silent = await tools.execute({
      callId: 'silent',
      name: 'bash',
      arguments: { command: 'echo start; sleep 30' },
      signal: new AbortController().signal,
    })
    expect(silent.isError && silent.error.info?.code).toBe('TOOL_TIMEOUT')
    expect(silent.isError && silent.error.message).toBe('Tool "bash" timed out after 1500 ms without progress')
    const chatty = await tools.execute({
      callId: 'chatty',
      name: 'bash',
      // ~3 s in total (twice the idle budget), never quiet for more than 0.1 s.
      arguments: { command: 'for i in $(seq 1 30); do echo "tick $i"; sleep 0.1; done' },
      signal: new AbortController().signal,
    })
    expect(chatty).toMatchObject({ isError: false, value: { exitCode: 0 } })
  })
})
