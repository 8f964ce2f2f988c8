// Issue 40, item 2: both runtimes record what a program draws from the clock and Math.random with
// its next tool call, and a replay tape hands the same values back, in order.
import { describe, expect, it } from 'vitest'
import type { CodeBindingCall } from '../../src/code-mode/code-runtime.js'
import { makeRuntime, RUNTIME_KINDS } from './runtimes.js'

const PROGRAM = [
  'const t = Date.now()',
  'const r = Math.random()',
  'const d = new Date().getTime()',
  'await tools.mark({})',
  'return [t, r, d, Math.random()]',
].join('\n')

describe.each(RUNTIME_KINDS)('the replay tape on the %s runtime (issue 40, item 2)', (kind) => {
  it('reports the draws with the next call, and a replay returns them', { timeout: 60_000 }, async () => {
    const runtime = makeRuntime(kind)
    const calls: CodeBindingCall[] = []
    const callTool = async (call: CodeBindingCall) => {
      calls.push(call)
      return { ok: true as const, value: null }
    }
    const first = await runtime.run({ code: PROGRAM, signal: new AbortController().signal, callTool })
    if (!first.ok) throw new Error(first.message)
    const [t, r, d] = first.value as number[]
    expect(calls[0].draws).toEqual({ values: [t, -2 - r, d], overflow: false, mismatch: false })
    // The replay gets the recorded values; past the tape it draws afresh.
    calls.length = 0
    const replay = await runtime.run({
      code: PROGRAM,
      signal: new AbortController().signal,
      callTool,
      replayTape: [1000, -2.25, 2000],
    })
    expect(replay.ok && (replay.value as number[]).slice(0, 3)).toEqual([1000, 0.25, 2000])
    expect(calls[0].draws?.mismatch).toBe(false)
    // A tape whose first value is a random number, read as the clock: reported as a mismatch.
    calls.length = 0
    await runtime.run({ code: PROGRAM, signal: new AbortController().signal, callTool, replayTape: [-2.5] })
    expect(calls[0].draws?.mismatch).toBe(true)
  })
})
