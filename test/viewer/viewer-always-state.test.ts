// "Always" with a state file (`toolgate view --approve --state FILE`, issue 26): the choice is recorded
// as `allowed-always` / `denied-always` in the state, and the runtime that resumes the turn applies it
// as a standing rule (in its memory, having no standing store), so its later calls of that tool by
// that agent are answered without asking.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { ApprovalAnswerSource } from '../../src/index.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { stateFileApproval, VIEWER_DENIAL_REASON } from '../../src/viewer/approval-state.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'
import { signal } from '../runtime/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-viewer-always-state-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('"always" recorded in a state file (issue 26)', { timeout: 60_000 }, () => {
  it('records allowed-always and denied-always (with the typed reason); the resume installs the rule', async () => {
    const marker = join(dir, 'marker')
    const journal = join(dir, 'session.jsonl')
    writeFileSync(journal, '')
    const turn = await setupTurn({ marker, journal })
    const first = await runModelLoop({
      tools: turn.tools,
      agent: turn.agent,
      model: scriptedModel(),
      messages: [{ role: 'user', content: 'go' }],
    })
    expect(first.stopReason).toBe('approval-required')
    const stateFile = join(dir, 'state.json')
    writeFileSync(stateFile, JSON.stringify(first.state))
    const approval = stateFileApproval(stateFile)
    expect(await approval.decide({ callId: 'call_b', decision: 'approve-always', decidedBy: 'ann' })).toEqual({
      applied: true,
    })
    expect(await approval.decide({ callId: 'call_c', decision: 'deny-always', reason: 'not c' })).toEqual({
      applied: true,
    })
    // The race semantics hold for the new kinds: a second decision is refused.
    expect(await approval.decide({ callId: 'call_b', decision: 'deny-always' })).toEqual({
      applied: false,
      reason: 'call call_b was already decided (allowed-always)',
    })
    const state = JSON.parse(readFileSync(stateFile, 'utf8'))
    expect(state.decisions).toEqual({
      call_b: { kind: 'allowed-always', decidedBy: 'ann' },
      call_c: { kind: 'denied-always', reason: `${VIEWER_DENIAL_REASON}: not c` },
    })

    // The resume applies both, installing the (last) rule for agent-1's write in its runtime.
    const resumed = await resumeModelLoop({
      state,
      tools: turn.tools,
      agent: turn.agent,
      model: scriptedModel(),
      journal,
    })
    expect(resumed.stopReason).toBe('done')
    expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean)).toEqual(['read:a.txt', 'write:b.txt'])
    const rules = turn.tools.standingApprovals(turn.agent)
    expect(rules.map((r) => [r.toolName, r.kind])).toEqual([['write', 'denied-always']])
    const sources: ApprovalAnswerSource[] = []
    turn.ctx.on('tools/approval-answered', (_r, _o, source) => void sources.push(source))
    const later = await turn.tools.execute({
      callId: 'later',
      name: 'write',
      arguments: { path: 'later.txt', text: 'x' },
      agent: turn.agent,
      signal: signal(),
    })
    expect(later.isError && later.error.message).toMatch(/a standing rule denies every call of this tool/)
    expect(sources).toEqual(['standing'])
  })
})
