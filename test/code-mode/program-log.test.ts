// Issue 40, item 2: a host that passes `onProgramLog` gets a running program's replay log after
// each finished sub-call, before the program sees that sub-call's outcome; another process can
// re-run the program from the last log it got (`program: { log, decisions: {} }`), and the
// finished sub-calls answer from it instead of running again (how a gateway instance takes over a
// named program whose instance died).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { JsonValue } from '../../src/contract/json-value.js'
import { setupProgramTurn } from './durable-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-program-log-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const disposers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
})

const CODE = [
  'const a = await tools.step({ n: 1 })',
  'const b = await tools.step({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, b, c }',
].join('\n')
const input = (agent: unknown) => ({
  callId: 'call_p',
  name: 'run_code',
  arguments: { code: CODE, description: 'three steps' },
  agent: agent as never,
  signal: new AbortController().signal,
})
type Log = { calls: { outcome?: unknown }[] }

describe('onProgramLog (issue 40, item 2)', { timeout: 60_000 }, () => {
  it('hands the log after each finished sub-call, before the program goes on; a re-run from it runs only the rest', async () => {
    const marker = join(dir, 'marker')
    writeFileSync(marker, '')
    const ran = () => readFileSync(marker, 'utf8').split('\n').filter(Boolean)
    const first = await setupProgramTurn(marker, 'allow')
    disposers.push(first.dispose)
    const logs: JsonValue[] = []
    const seen: string[][] = []
    const result = await first.tools.execute(input(first.agent), {
      onSuspended: () => {},
      onProgramLog: async (log) => {
        // The program waits for this: no later sub-call has run yet.
        seen.push(ran())
        await new Promise((done) => setImmediate(done))
        logs.push(log)
      },
    })
    expect(result.isError).toBe(false)
    expect(seen).toEqual([['step:1'], ['step:1', 'step:2'], ['step:1', 'step:2', 'step:3']])
    expect(logs.map((log) => (log as unknown as Log).calls.filter((c) => c.outcome !== undefined).length)).toEqual([
      1, 2, 3,
    ])

    // As if the process died after the second step: a fresh runtime continues from its log.
    const again = await setupProgramTurn(marker, 'allow')
    disposers.push(again.dispose)
    const resumed = await again.tools.execute(input(again.agent), {
      onSuspended: () => {},
      program: { log: logs[1], decisions: {} },
    })
    expect(resumed.isError).toBe(false)
    expect(ran()).toEqual(['step:1', 'step:2', 'step:3', 'step:3'])
    const value = resumed.isError === false ? (resumed.value as { result: unknown }).result : undefined
    expect(value).toEqual({ a: 'step 1 done', b: 'step 2 done', c: 'step 3 done' })
  })

  it('a throwing onProgramLog is contained: the program runs on to its result', async () => {
    const marker = join(dir, 'marker-throws')
    writeFileSync(marker, '')
    const setup = await setupProgramTurn(marker, 'allow')
    disposers.push(setup.dispose)
    const result = await setup.tools.execute(input(setup.agent), {
      onSuspended: () => {},
      onProgramLog: () => {
        throw new Error('the store is away')
      },
    })
    expect(result.isError).toBe(false)
    expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean)).toEqual(['step:1', 'step:2', 'step:3'])
  })

  it('a non-function onProgramLog refuses the call before anything runs', async () => {
    const marker = join(dir, 'marker-bad')
    writeFileSync(marker, '')
    const setup = await setupProgramTurn(marker, 'allow')
    disposers.push(setup.dispose)
    const result = await setup.tools.execute(input(setup.agent), { onProgramLog: 42 } as never)
    expect(result.isError && result.error.message).toMatch(/options\.onProgramLog: expected a function/)
    expect(readFileSync(marker, 'utf8')).toBe('')
  })
})
