// A state file holds one turn (issue 36, item 8): its pending calls name that turn, the turn its
// calls' journal records carry, and a decision the page sends for another turn's call with the same
// id (the host wrote the next turn's state meanwhile) is refused, never recorded on this one.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readJournal } from '../../src/index.js'
import { runModelLoop } from '../../src/providers/index.js'
import { stateFileApproval } from '../../src/viewer/approval-state.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-state-turn-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('a state file approval names its turn (issue 36, item 8)', () => {
  it('lists the turn its calls were journaled under and refuses a decision for another turn', async () => {
    const journal = join(dir, 'journal.jsonl')
    const stateFile = join(dir, 'state.json')
    const turn = await setupTurn({ journal, marker: join(dir, 'marker') })
    const result = await runModelLoop({
      tools: turn.tools,
      agent: turn.agent,
      model: scriptedModel(),
      messages: [{ role: 'user', content: 'update the files' }],
      journal,
    })
    expect(result.stopReason).toBe('approval-required')
    await writeFile(stateFile, JSON.stringify(result.state))
    // The turn the journal's records of call_b carry.
    const records = []
    for await (const record of readJournal(journal)) if (record.callId === 'call_b') records.push(record)
    const turnIds = new Set(records.map((r) => r.turnId))
    expect(turnIds.size).toBe(1)
    const [journalTurn] = turnIds
    expect(journalTurn).toMatch(/^turn-/)

    const approval = stateFileApproval(stateFile)
    expect(await approval.pending()).toEqual([
      { callId: 'call_b', turnId: journalTurn, journalTurnId: journalTurn, decided: null },
      { callId: 'call_c', turnId: journalTurn, journalTurnId: journalTurn, decided: null },
    ])
    // Another turn's call_b: refused, nothing written.
    expect(await approval.decide({ callId: 'call_b', turnId: 'turn-other', decision: 'approve' })).toEqual({
      applied: false,
      reason: 'call call_b is not pending in turn turn-other in the state file',
    })
    expect(JSON.parse(await readFile(stateFile, 'utf8')).decisions).toBeUndefined()
    // This turn's: recorded.
    expect(await approval.decide({ callId: 'call_b', turnId: journalTurn, decision: 'approve' })).toEqual({
      applied: true,
    })
    expect(JSON.parse(await readFile(stateFile, 'utf8')).decisions.call_b.kind).toBe('allowed-once')
  })
})
