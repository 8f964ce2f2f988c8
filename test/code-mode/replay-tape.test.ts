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

// Issue 40, item 2: crypto.getRandomValues is recorded four bytes to a draw, and replayed.
const BYTES_PROGRAM = [
  'const a = crypto.getRandomValues(new Uint8Array(6))',
  'const b = crypto.getRandomValues(new Uint16Array(2))',
  'await tools.mark({})',
  'return [Array.from(a), Array.from(b)]',
].join('\n')

describe.each(RUNTIME_KINDS)('crypto.getRandomValues on the %s runtime (issue 40, item 2)', (kind) => {
  it('reports the bytes with the next call, and a replay returns them', { timeout: 60_000 }, async () => {
    const runtime = makeRuntime(kind)
    const calls: CodeBindingCall[] = []
    const callTool = async (call: CodeBindingCall) => {
      calls.push(call)
      return { ok: true as const, value: null }
    }
    const first = await runtime.run({ code: BYTES_PROGRAM, signal: new AbortController().signal, callTool })
    if (!first.ok) throw new Error(first.message)
    const [a, b] = first.value as number[][]
    expect(a).toHaveLength(6)
    expect(b).toHaveLength(2)
    expect(a.every((x) => Number.isInteger(x) && x >= 0 && x < 256)).toBe(true)
    const values = calls[0].draws?.values ?? []
    // 6 bytes: a 4-byte and a 2-byte draw; 2 x 16 bits: one 4-byte draw; all at most -4.
    expect(values).toHaveLength(3)
    expect(values.every((v) => v <= -4)).toBe(true)
    const word = (bytes: number[]) => bytes.reduce((acc, x) => acc * 256 + x, 0)
    expect(values.slice(0, 2)).toEqual([-4 - word(a.slice(0, 4)), -4 - word(a.slice(4))])
    calls.length = 0
    const replay = await runtime.run({
      code: BYTES_PROGRAM,
      signal: new AbortController().signal,
      callTool,
      replayTape: [...values],
    })
    expect(replay).toEqual(first)
    expect(calls[0].draws).toEqual({ values, overflow: false, mismatch: false })
    // A tape holding a clock reading where the program asks for bytes: reported as a mismatch.
    calls.length = 0
    await runtime.run({ code: BYTES_PROGRAM, signal: new AbortController().signal, callTool, replayTape: [1000] })
    expect(calls[0].draws?.mismatch).toBe(true)
  })

  it('fills only integer typed arrays, at most 65536 bytes, and draws afresh each run', {
    timeout: 60_000,
  }, async () => {
    const runtime = makeRuntime(kind)
    const callTool = async () => ({ ok: true as const, value: null })
    const run = async (code: string) => runtime.run({ code, signal: new AbortController().signal, callTool })
    const refused = await run(
      [
        'const out = []',
        'for (const make of [() => new Float64Array(2), () => [1, 2], () => new DataView(new ArrayBuffer(4)), () => new Uint8Array(65537)])',
        '  try { crypto.getRandomValues(make()); out.push("filled") } catch (e) { out.push(e.name) }',
        'const view = new Uint8Array(new ArrayBuffer(8), 2, 4)',
        'const same = crypto.getRandomValues(view) === view',
        'return { out, same, big: typeof crypto.getRandomValues(new BigUint64Array(1))[0], keys: Object.keys(crypto) }',
      ].join('\n'),
    )
    expect(refused).toMatchObject({
      ok: true,
      value: {
        out: ['TypeError', 'TypeError', 'TypeError', 'RangeError'],
        same: true,
        big: 'bigint',
        keys: ['getRandomValues'],
      },
    })
    const code = 'return Array.from(crypto.getRandomValues(new Uint8Array(16)))'
    const [x, y] = await Promise.all([run(code), run(code)])
    expect(x.ok && y.ok).toBe(true)
    expect(x).not.toEqual(y)
  })
})
