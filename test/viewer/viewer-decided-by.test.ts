// A decision taken in the viewer by a signed-in person reaches the resumed turn's journal as
// `decidedBy` (issue 24 item 5): the state file keeps it, resumeModelLoop hands it to the pipeline,
// and the journal's approval-answered record names the person.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { stateFileApproval } from '../../src/viewer/approval-state.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-view-decided-by-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('who decided in the viewer (issue 24 item 5)', () => {
  it("is recorded in the state file and in the resumed turn's journal", async () => {
    const journal = join(dir, 'session.jsonl')
    const env = await setupTurn({ marker: join(dir, 'marker'), journal })
    const first = await runModelLoop({
      tools: env.tools,
      agent: env.agent,
      model: scriptedModel(),
      messages: [{ role: 'user', content: 'update the files' }],
    })
    expect(first.stopReason).toBe('approval-required')
    const statePath = join(dir, 'state.json')
    writeFileSync(statePath, JSON.stringify(first.state, null, 2))
    const handler = stateFileApproval(statePath)
    await handler.check()
    expect(await handler.decide({ callId: 'call_b', decision: 'approve', decidedBy: 'alice' })).toEqual({
      applied: true,
    })
    const stored = JSON.parse(readFileSync(statePath, 'utf8'))
    expect(stored.decisions).toEqual({ call_b: { kind: 'allowed-once', decidedBy: 'alice' } })
    await resumeModelLoop({ state: stored, tools: env.tools, agent: env.agent, model: scriptedModel() })
    const answered = readFileSync(journal, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; callId: string; decidedBy?: string; source?: string })
      .filter((r) => r.type === 'approval-answered' && r.callId === 'call_b')
    expect(answered.at(-1)).toMatchObject({ decidedBy: 'alice', source: 'decision' })
  })
})
