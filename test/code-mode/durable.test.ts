// Issue 40, item 2: a run_code program whose sub-call waits for approval pauses as a whole; the
// model loop ends 'approval-required' and resumeModelLoop, here or in a fresh process, re-runs it
// against its sealed replay log: finished sub-calls answer from the log, the approved one runs,
// a denied one rejects inside the program, and a program that diverges runs nothing new.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { MAX_RECORDED_DRAWS } from '../../src/code-mode/prelude.js'
import { type ModelLoopResult, resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { stateSeal } from '../../src/providers/state-seal.js'
import { programModel, STATE_KEY, setupProgramTurn } from './durable-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-durable-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const disposers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
})

let n = 0
async function turn(code: string, guardedAlone = false) {
  const marker = join(dir, `marker-${++n}`)
  writeFileSync(marker, '')
  const setup = await setupProgramTurn(marker, 'suspend', guardedAlone)
  disposers.push(setup.dispose)
  const model = programModel(code)
  const ran = () => readFileSync(marker, 'utf8').split('\n').filter(Boolean)
  const run = () => runModelLoop({ tools: setup.tools, agent: setup.agent, model, messages: [], stateKey: STATE_KEY })
  const resume = async (state: unknown, decisions: Record<string, unknown> = {}) => {
    const again = await setupProgramTurn(marker, 'suspend', guardedAlone)
    disposers.push(again.dispose)
    return resumeModelLoop({
      state,
      decisions: decisions as never,
      tools: again.tools,
      agent: again.agent,
      model,
      stateKey: STATE_KEY,
    })
  }
  return { marker, ran, run, resume }
}

/** The run_code call's result in a finished loop. */
function programResult(result: ModelLoopResult) {
  const step = result.steps.find((s) => s.calls.some((c) => c.name === 'run_code'))
  return step?.results[0]?.result
}

function resumeInChild(state: unknown, decisions: unknown, marker: string): Promise<ModelLoopResult> {
  const statePath = join(dir, `state-${++n}.json`)
  const outPath = join(dir, `out-${n}.json`)
  writeFileSync(statePath, JSON.stringify(state))
  const child = join(import.meta.dirname, 'durable-child.ts')
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', child, statePath, JSON.stringify(decisions), marker, outPath],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    let stderr = ''
    proc.stderr.on('data', (chunk) => {
      stderr += String(chunk)
    })
    proc.on('error', reject)
    proc.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the child exited ${code}: ${stderr}`))
      else resolve(JSON.parse(readFileSync(outPath, 'utf8')))
    })
  })
}

const ABC = [
  'const a = await tools.step({ n: 1 })',
  'const stamp = Date.now()',
  'const coin = Math.random()',
  'const b = await tools.guarded({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, b, c, stamp, coin }',
].join('\n')

describe('durable Code Mode programs (issue 40, item 2)', { timeout: 120_000 }, () => {
  it('A, B (approval), C: paused in one process, resumed in a fresh one, each runs once', async () => {
    const { run, ran, marker } = await turn(ABC)
    const first = await run()
    expect(first.stopReason).toBe('approval-required')
    expect(first.pending).toEqual([
      expect.objectContaining({
        callId: 'call_p:code:2',
        parentCallId: 'call_p',
        toolName: 'guarded',
        arguments: { n: 2 },
      }),
    ])
    expect(first.state?.pending?.calls[0]).toMatchObject({ callId: 'call_p', name: 'run_code' })
    expect(ran()).toEqual(['step:1'])
    const resumed = await resumeInChild(first.state, { 'call_p:code:2': { kind: 'allowed-once' } }, marker)
    expect(resumed.stopReason).toBe('done')
    expect(ran()).toEqual(['step:1', 'guarded:2', 'step:3'])
    const result = programResult(resumed)
    expect(result?.isError).toBe(false)
    const value = result?.isError === false ? (result.value as { result: Record<string, unknown> }).result : {}
    expect(value).toMatchObject({ a: 'step 1 done', b: 'guarded 2 done', c: 'step 3 done' })
    // The clock and the coin the first run drew are what the resumed run saw.
    const log = (first.state?.pending?.programs?.[0]?.log ?? {}) as { calls: { draws: number[] }[] }
    expect(log.calls[1].draws).toEqual([value.stamp, -2 - (value.coin as number)])
  })

  it('the resumed result is what an uninterrupted run returns (clock and coin aside)', async () => {
    const { run, marker } = await turn(ABC)
    const first = await run()
    const resumed = await resumeInChild(first.state, { 'call_p:code:2': { kind: 'allowed-once' } }, marker)
    const other = join(dir, 'uninterrupted')
    writeFileSync(other, '')
    const live = await setupProgramTurn(other, 'allow')
    disposers.push(live.dispose)
    const direct = await runModelLoop({ tools: live.tools, agent: live.agent, model: programModel(ABC), messages: [] })
    expect(direct.stopReason).toBe('done')
    const strip = (result: ReturnType<typeof programResult>) => {
      if (result?.isError !== false) return result
      const { stamp: _s, coin: _c, ...rest } = (result.value as { result: Record<string, unknown> }).result
      return rest
    }
    expect(strip(programResult(resumed))).toEqual(strip(programResult(direct)))
    expect(strip(programResult(direct))).toEqual({ a: 'step 1 done', b: 'guarded 2 done', c: 'step 3 done' })
    expect(readFileSync(marker, 'utf8')).toBe(readFileSync(other, 'utf8'))
  })

  it('two approvals in Promise.all: both wait, each runs exactly once after its decision', async () => {
    const code = [
      'const first = await tools.step({ n: 1 })',
      'const [x, y, z] = await Promise.all([tools.guarded({ n: 2 }), tools.guarded({ n: 3 }), tools.step({ n: 4 })])',
      'const last = await tools.step({ n: 5 })',
      'return [first, x, y, z, last]',
    ].join('\n')
    const { run, ran, resume } = await turn(code)
    const first = await run()
    expect(first.stopReason).toBe('approval-required')
    expect(first.pending?.map((r) => r.callId)).toEqual(['call_p:code:2', 'call_p:code:3'])
    expect(ran().sort()).toEqual(['step:1', 'step:4'])
    // One decision: the other still waits, and nothing runs twice.
    const half = await resume(first.state, { 'call_p:code:2': { kind: 'allowed-once' } })
    expect(half.stopReason).toBe('approval-required')
    expect(half.pending?.map((r) => r.callId)).toEqual(['call_p:code:3'])
    expect(ran().sort()).toEqual(['guarded:2', 'step:1', 'step:4'])
    const done = await resume(half.state, { 'call_p:code:3': { kind: 'allowed-once' } })
    expect(done.stopReason).toBe('done')
    expect(ran().sort()).toEqual(['guarded:2', 'guarded:3', 'step:1', 'step:4', 'step:5'])
    const result = programResult(done)
    expect(result?.isError === false && (result.value as { result: unknown }).result).toEqual([
      'step 1 done',
      'guarded 2 done',
      'guarded 3 done',
      'step 4 done',
      'step 5 done',
    ])
  })

  it('a denial rejects inside the program with the denial', async () => {
    const code = [
      'await tools.step({ n: 1 })',
      'try { await tools.guarded({ n: 2 }) } catch (e) { return "denied: " + e.message }',
      'return "ran"',
    ].join('\n')
    const { run, ran, resume } = await turn(code)
    const first = await run()
    const done = await resume(first.state, { 'call_p:code:2': { kind: 'denied', reason: 'not today' } })
    expect(done.stopReason).toBe('done')
    const result = programResult(done)
    expect(result?.isError === false && (result.value as { result: string }).result).toMatch(/^denied: .*not today/)
    expect(ran()).toEqual(['step:1'])
  })

  it('a program that diverges on replay fails with CODE_REPLAY_DIVERGED and runs nothing new', async () => {
    const code = ['await tools.step({ n: 1 })', 'await tools.guarded({ n: 2 })', 'await tools.step({ n: 3 })'].join(
      '\n',
    )
    const { run, ran, resume } = await turn(code)
    const first = await run()
    expect(first.stopReason).toBe('approval-required')
    // Edit the log's first sub-call (re-sealed, as a host with the key could): the program asks
    // for step(1), the log says step(7).
    const state = structuredClone(first.state) as unknown as Record<string, unknown> & {
      pending: { programs: { log: { calls: { args: unknown }[] } }[] }
    }
    state.pending.programs[0].log.calls[0].args = { n: 7 }
    delete state.seal
    state.seal = stateSeal(state, new TextEncoder().encode(STATE_KEY))
    const done = await resume(state, { 'call_p:code:2': { kind: 'allowed-once' } })
    const result = programResult(done)
    expect(result?.isError && result.error.info).toMatchObject({ code: 'CODE_REPLAY_DIVERGED' })
    expect(result?.isError && result.error.message).toContain(
      'tools.step({"n":1}) where the log has tools.step({"n":7})',
    )
    expect(ran()).toEqual(['step:1'])
  })

  it('a tampered or truncated log, a log from another program, and a skipped approval are refused', async () => {
    const { run, ran, resume } = await turn(ABC)
    const first = await run()
    // biome-ignore lint/suspicious/noExplicitAny: the test edits the stored JSON freely
    type Stored = any
    const tamper = (edit: (state: Stored) => void) => {
      const copy = structuredClone(first.state) as Stored
      edit(copy)
      return copy
    }
    const allow = { 'call_p:code:2': { kind: 'allowed-once' } }
    // Sealed: any edit of the log (here: B marked finished with a made-up result) fails the seal.
    await expect(
      resume(
        tamper((s) => {
          const entry = s.pending.programs[0].log.calls[1]
          delete entry.waiting
          entry.outcome = { ok: true, value: 'forged' }
          entry.order = 1
        }),
        allow,
      ),
    ).rejects.toMatchObject({ code: 'INVALID_RESUME' })
    // A truncated log, re-sealed with the key: refused for its shape.
    const truncated = tamper((s) => {
      s.pending.programs[0].log.calls.length = 1
      delete s.seal
      s.seal = stateSeal(s, new TextEncoder().encode(STATE_KEY))
    })
    await expect(resume(truncated, allow)).rejects.toThrow(/not a waiting sub-call of the log|no sub-call waits/)
    // Another program's log (the program text changed, re-sealed): bound to the text, refused.
    const other = tamper((s) => {
      s.pending.programs[0].log.program = '0'.repeat(64)
      delete s.seal
      s.seal = stateSeal(s, new TextEncoder().encode(STATE_KEY))
    })
    await expect(resume(other, allow)).rejects.toThrow(/written by another program/)
    // Deciding the program call instead of its waiting sub-call is refused; no decision keeps it waiting.
    await expect(resume(first.state, { call_p: { kind: 'allowed-once' } })).rejects.toThrow(
      /decide its waiting sub-calls/,
    )
    const still = await resume(first.state, {})
    expect(still.stopReason).toBe('approval-required')
    expect(ran()).toEqual(['step:1'])
  })

  it('a program that reads the clock in a loop keeps a bounded log, and cannot pause', async () => {
    const code = [
      'let last = 0',
      `for (let i = 0; i < ${MAX_RECORDED_DRAWS * 3}; i++) last = Date.now()`,
      'await tools.step({ n: 1 })',
      'try { await tools.guarded({ n: 2 }) } catch (e) { return "refused: " + e.message }',
      'return "ran"',
    ].join('\n')
    const { run, ran } = await turn(code)
    const result = await run()
    expect(result.stopReason).toBe('done')
    const value = programResult(result)
    expect(value?.isError === false && (value.value as { result: string }).result).toMatch(
      /^refused: .*read the clock or random numbers more than 4096 times/,
    )
    expect(ran()).toEqual(['step:1'])
  })

  it('crypto.getRandomValues before and after an approval: a fresh process replays the bytes drawn before', async () => {
    const code = [
      'const hex = (a) => Array.from(a, (x) => x.toString(16).padStart(2, "0")).join("")',
      'const before = hex(crypto.getRandomValues(new Uint8Array(16)))',
      'const a = await tools.step({ n: before.length })',
      'const id = hex(new Uint8Array(crypto.getRandomValues(new Uint32Array(3)).buffer))',
      'const b = await tools.guarded({ n: id.length })',
      'const after = hex(crypto.getRandomValues(new Uint8Array(8)))',
      'const c = await tools.step({ n: after.length })',
      'return { a, b, c, before, id, after }',
    ].join('\n')
    const { run, ran, marker } = await turn(code)
    const first = await run()
    expect(first.stopReason).toBe('approval-required')
    const log = (first.state?.pending?.programs?.[0]?.log ?? {}) as { calls: { draws: number[] }[] }
    const resumed = await resumeInChild(first.state, { 'call_p:code:2': { kind: 'allowed-once' } }, marker)
    expect(resumed.stopReason).toBe('done')
    expect(ran()).toEqual(['step:32', 'guarded:24', 'step:16'])
    const result = programResult(resumed)
    const value = (
      result?.isError === false ? (result.value as { result: Record<string, string> }).result : {}
    ) as Record<string, string>
    // The bytes drawn before the pause are those of the first run (as its log recorded them).
    const word = (hex: string) => Array.from(hex.match(/.{8}/g) ?? [], (w) => -4 - Number.parseInt(w, 16))
    expect(log.calls[0].draws).toEqual(word(value.before))
    expect(log.calls[1].draws).toEqual(word(value.id))
    expect(value.after).toMatch(/^[0-9a-f]{16}$/)
    // An uninterrupted run returns the same, random bytes aside.
    const other = join(dir, 'uninterrupted-bytes')
    writeFileSync(other, '')
    const live = await setupProgramTurn(other, 'allow')
    disposers.push(live.dispose)
    const direct = await runModelLoop({ tools: live.tools, agent: live.agent, model: programModel(code), messages: [] })
    const strip = (r: ReturnType<typeof programResult>) => {
      if (r?.isError !== false) return r
      const { before, id, after, ...rest } = (r.value as { result: Record<string, string> }).result
      return { ...rest, lengths: [before.length, id.length, after.length] }
    }
    expect(strip(programResult(resumed))).toEqual(strip(programResult(direct)))
    expect(readFileSync(marker, 'utf8')).toBe(readFileSync(other, 'utf8'))
  })

  it('a program that draws random bytes in a loop keeps a bounded log, and cannot pause', async () => {
    const code = [
      `for (let i = 0; i < ${MAX_RECORDED_DRAWS}; i++) crypto.getRandomValues(new Uint8Array(16))`,
      'await tools.step({ n: 1 })',
      'try { await tools.guarded({ n: 2 }) } catch (e) { return "refused: " + e.message }',
      'return "ran"',
    ].join('\n')
    const { run, ran } = await turn(code)
    const result = await run()
    expect(result.stopReason).toBe('done')
    const value = programResult(result)
    expect(value?.isError === false && (value.value as { result: string }).result).toMatch(
      /^refused: .*more than 4096 times/,
    )
    expect(ran()).toEqual(['step:1'])
  })
  // Issue 40, item 2 ("approvals inside Promise.all branches work, each exactly once"): the two
  // guarded branches run one at a time, so the first run waits for B only, and the second (B
  // approved) for D; B's approval must not be lost to D's pause, and each sub-call runs once.
  it('two approvals in Promise.all branches that run one at a time: both honoured, each runs once', async () => {
    const code = [
      'const a = await tools.step({ n: 1 })',
      'const [b, d] = await Promise.all([tools.guarded({ n: 2 }), tools.guarded({ n: 4 })])',
      'const c = await tools.step({ n: 3 })',
      'return { a, b, d, c }',
    ].join('\n')
    const { run, resume, ran } = await turn(code, true)
    let result = await run()
    const approved: string[] = []
    for (let round = 0; result.stopReason === 'approval-required' && round < 4; round++) {
      const decisions = Object.fromEntries((result.pending ?? []).map((p) => [p.callId, { kind: 'allowed-once' }]))
      approved.push(...Object.keys(decisions))
      result = await resume(result.state, decisions)
    }
    expect(result.stopReason).toBe('done')
    expect(approved.sort()).toEqual(['call_p:code:2', 'call_p:code:3'])
    const outcome = programResult(result)
    expect(outcome?.isError, JSON.stringify(outcome)).toBe(false)
    const value = outcome?.isError === false ? (outcome.value as { result: Record<string, unknown> }).result : {}
    expect(value).toEqual({ a: 'step 1 done', b: 'guarded 2 done', d: 'guarded 4 done', c: 'step 3 done' })
    expect(ran().sort()).toEqual(['guarded:2', 'guarded:4', 'step:1', 'step:3'])
  })
})
