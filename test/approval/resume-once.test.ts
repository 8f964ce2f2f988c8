// Issue 22: two resumes of one state run each approved call at most once — in one process, and in
// two processes on one machine — through a claim beside the journal taken before the call runs.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type ResumeModelLoopResult, resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { scriptedModel, setupTurn } from './loop-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-once-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const file = (name: string) => join(dir, `${n++}-${name}`)
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])
const count = (path: string, line: string) => lines(path).filter((l) => l === line).length

type Message = { role?: string; tool_call_id?: string; content?: unknown }

/** How many tool messages answer each call id. */
function answers(result: { messages: unknown[] }): Record<string, number> {
  const out: Record<string, number> = {}
  for (const m of result.messages as Message[])
    if (m.role === 'tool' && typeof m.tool_call_id === 'string') out[m.tool_call_id] = (out[m.tool_call_id] ?? 0) + 1
  return out
}

const DECISIONS = { call_b: { kind: 'allowed-once' as const }, call_c: { kind: 'allowed-once' as const } }

async function suspendTurn(journal: string) {
  const marker = file('marker')
  const env = await setupTurn({ marker, journal })
  const first = await runModelLoop({
    tools: env.tools,
    agent: env.agent,
    model: scriptedModel(),
    messages: [{ role: 'user', content: 'update the files' }],
  })
  expect(first.stopReason).toBe('approval-required')
  return { ...env, marker, first }
}

function child(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'resume-child.ts'), ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    proc.on('error', reject)
    proc.on('close', (code, signal) => resolve({ code, signal, stderr }))
  })
}

describe('at most once across resumes of one state (issue 22)', { timeout: 180_000 }, () => {
  it('two resumes at once in one process: each approved call runs once; the other answers ALREADY_RUN', async () => {
    // On a loaded machine one resume can finish before the other starts: the second then answers
    // from the journal (also once). Fresh turns are raced until the resumes overlap, at most 8 times;
    // every attempt must run each call once.
    let overlapped = false
    for (let attempt = 0; attempt < 8 && !overlapped; attempt++) {
      const journal = file('journal.jsonl')
      const { first, marker, tools, agent } = await suspendTurn(journal)
      const resume = () =>
        resumeModelLoop({
          state: JSON.parse(JSON.stringify(first.state)),
          decisions: DECISIONS,
          tools,
          agent,
          model: scriptedModel(),
          journal,
        })
      const both = await Promise.all([resume(), resume()])
      expect(count(marker, 'write:b.txt')).toBe(1)
      expect(count(marker, 'write:c.txt')).toBe(1)
      for (const result of both) {
        expect(result.stopReason).toBe('done')
        expect(answers(result)).toEqual({ call_a: 1, call_b: 1, call_c: 1 })
      }
      const skipped = both.flatMap((r) => r.alreadyRun.map((c) => c.callId)).sort()
      if (skipped.length === 0) continue
      overlapped = true
      expect(skipped).toEqual(['call_b', 'call_c'])
      const loser = both.find((r) => r.alreadyRun.length > 0) as ResumeModelLoopResult
      const text = JSON.stringify(
        loser.messages.filter((m) => (m as Message).tool_call_id === loser.alreadyRun[0].callId),
      )
      expect(text).toContain('Error (ALREADY_RUN)')
      expect(text).toContain('was already run by another resume of this turn')
      // The claims sit beside the journal, one per call that ran.
      expect(readdirSync(`${journal}.claims`)).toHaveLength(2)
      // A later resume of the same state runs nothing again either (the journal has the results).
      const later = await resume()
      expect(later.stopReason).toBe('done')
      expect(count(marker, 'write:b.txt') + count(marker, 'write:c.txt')).toBe(2)
    }
    expect(overlapped, 'two resumes started together overlapped in one of 8 attempts').toBe(true)
  })

  it('two child processes resuming one state at the same moment: every side effect happens once', async () => {
    const journal = file('journal.jsonl')
    const { first, marker } = await suspendTurn(journal)
    const statePath = file('state.json')
    writeFileSync(statePath, JSON.stringify(first.state))
    const rendezvous = file('rendezvous')
    const outs = [file('out-1.json'), file('out-2.json')]
    const runs = await Promise.all(
      outs.map((out) => child([statePath, JSON.stringify(DECISIONS), marker, out, journal, '', rendezvous])),
    )
    for (const run of runs) {
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
    }
    // Both processes were inside a write body at the same time, yet each write happened once.
    expect(readdirSync(rendezvous)).toHaveLength(2)
    expect(count(marker, 'write:b.txt')).toBe(1)
    expect(count(marker, 'write:c.txt')).toBe(1)
    const results = outs.map((out) => JSON.parse(readFileSync(out, 'utf8')) as ResumeModelLoopResult)
    for (const result of results) {
      expect(result.stopReason).toBe('done')
      expect(answers(result)).toEqual({ call_a: 1, call_b: 1, call_c: 1 })
    }
    // What one process did not run, it reports: claimed by the other, or (for a call the other had
    // started when this one read the journal) an outcome it could not prove.
    const reported = results.flatMap((r) => [...r.alreadyRun, ...r.unproven].map((c) => c.callId)).sort()
    expect(reported).toEqual(['call_b', 'call_c'])
    expect(results.some((r) => r.alreadyRun.length > 0)).toBe(true)
  })
})
