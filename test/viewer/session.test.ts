// Folding journal records into cards: statuses, approvals, nesting, and tolerance of bad lines.
import { describe, expect, it } from 'vitest'
import { parseJournalLine } from '../../src/viewer/journal-line.js'
import { presenterTable } from '../../src/viewer/presenters.js'
import { SessionState } from '../../src/viewer/session.js'
import { sessionFromJournalText } from '../../src/viewer/static.js'

const base = { v: 1, ts: 1000, rootCallId: 'c', parentCallId: null, agentId: 'a', toolName: 'custom' }
const rec = (r: Record<string, unknown>) => JSON.stringify({ ...base, callId: 'c', ...r })
const failure = (code: string) => ({
  isError: true,
  error: { message: `failed with ${code}`, info: { name: 'Error', code } },
  content: [{ type: 'text', text: `failed with ${code}` }],
})

function fold(lines: string[], presenters = presenterTable()) {
  return sessionFromJournalText(lines.join('\n'), presenters).cards()
}

describe('viewer session folding', () => {
  it('maps result codes to statuses', () => {
    const cases: Array<[string, string]> = [
      ['TOOL_DENIED', 'denied'],
      ['TOOL_TIMEOUT', 'timed-out'],
      ['ABORTED', 'aborted'],
      ['ABORTED_BEFORE_DISPATCH', 'aborted'],
      ['INVALID_ARGS', 'error'],
    ]
    for (const [code, kind] of cases) {
      const [card] = fold([
        rec({ type: 'call-started', arguments: {} }),
        rec({ type: 'result', result: failure(code), durationMs: 5 }),
      ])
      expect(card.status).toEqual({ kind, code })
      expect(card.error).toEqual({ message: `failed with ${code}`, code })
      expect(card.durationMs).toBe(5)
    }
    const [ok] = fold([rec({ type: 'result', result: { isError: false, value: 1, content: [] }, durationMs: 1 })])
    expect(ok.status).toEqual({ kind: 'ok' })
    expect(ok.error).toBeNull()
  })

  it('shows a pending approval until it is answered, and keeps the history', () => {
    const asked = [
      rec({ type: 'call-started', arguments: { x: 1 } }),
      rec({ type: 'approval-asked', request: { reason: 'needs a human', arguments: { x: 1 } } }),
    ]
    const [pending] = fold(asked)
    expect(pending.status).toEqual({ kind: 'awaiting-approval' })
    expect(pending.pendingApproval).toEqual({ reason: 'needs a human', decided: null, decidable: false })
    const [suspended] = fold([
      ...asked,
      rec({ type: 'approval-answered', outcome: { kind: 'suspended' }, standing: false }),
    ])
    expect(suspended.status.kind).toBe('awaiting-approval')
    const [answered] = fold([
      ...asked,
      rec({ type: 'approval-answered', outcome: { kind: 'allowed-always', reason: 'ok' }, standing: true }),
    ])
    expect(answered.status).toEqual({ kind: 'running' })
    expect(answered.pendingApproval).toBeNull()
    expect(answered.approvals).toEqual([
      { step: 'asked', ts: 1000, reason: 'needs a human' },
      { step: 'answered', ts: 1000, outcome: 'allowed-always', reason: 'ok', standing: true },
    ])
  })

  it('a suspended call (APPROVAL_SUSPENDED result) awaits approval until a resume moves it on', () => {
    const suspended = [
      rec({ type: 'call-started', arguments: { x: 1 } }),
      rec({ type: 'approval-asked', request: { reason: 'needs a human', arguments: { x: 1 } } }),
      rec({ type: 'approval-answered', outcome: { kind: 'suspended' }, standing: false }),
      rec({ type: 'result', result: failure('APPROVAL_SUSPENDED'), durationMs: 1 }),
    ]
    const [waiting] = fold(suspended)
    expect(waiting.status).toEqual({ kind: 'awaiting-approval' })
    expect(waiting.error).toBeNull()
    expect(waiting.pendingApproval).toEqual({ reason: 'needs a human', decided: null, decidable: false })
    const resumed = [
      ...suspended,
      rec({ type: 'approval-answered', outcome: { kind: 'allowed-once' }, standing: false, source: 'decision' }),
    ]
    expect(fold(resumed)[0].status).toEqual({ kind: 'running' })
    const [done] = fold([...resumed, rec({ type: 'result', result: { isError: false, content: [] }, durationMs: 2 })])
    expect(done.status).toEqual({ kind: 'ok' })
    expect(done.pendingApproval).toBeNull()
    // The state file's board decides where buttons go and shows a recorded decision.
    const session = sessionFromJournalText(suspended.join('\n'), presenterTable())
    expect(session.setDecidable([{ callId: 'c', decided: null }])).toEqual(['c'])
    expect(session.card('c')?.pendingApproval).toEqual({ reason: 'needs a human', decided: null, decidable: true })
    expect(session.setDecidable([{ callId: 'c', decided: null }])).toEqual([])
    expect(session.setDecidable([{ callId: 'c', decided: 'denied' }])).toEqual(['c'])
    expect(session.card('c')?.pendingApproval?.decided).toBe('denied')
  })

  it('skips malformed, foreign and unknown lines without losing the good ones', () => {
    const cards = fold([
      '',
      'not json',
      '{"v":1,"type":"call-started"',
      JSON.stringify({ ...base, v: 2, type: 'call-started', callId: 'future' }),
      JSON.stringify({ ...base, type: 'call-started' }),
      '[1,2]',
      rec({ type: 'something-new', extra: true }),
      rec({ type: 'result', result: 'not a record' }),
      rec({ type: 'call-started', arguments: { ok: true }, unknownField: 1 }),
    ])
    expect(cards.map((c) => [c.id, c.status.kind])).toEqual([['c', 'running']])
    expect(parseJournalLine('{"v":1,"type":"result","callId":"y","ts":"soon"}')?.ts).toBeNull()
    // Unknown types are skipped by the journal's own parser (the one readJournal uses).
    expect(parseJournalLine(rec({ type: 'something-new' }))).toBeUndefined()
  })

  it('nests sub-calls and falls back to code-dispatch records for sub-calls without their own records', () => {
    const cards = fold([
      rec({ type: 'call-started', toolName: 'run_code', arguments: { code: 'return 1', description: 'one' } }),
      JSON.stringify({
        ...base,
        type: 'code-dispatch',
        callId: 'c:code:1',
        parentCallId: 'c',
        record: {
          parentCallId: 'c',
          rootCallId: 'c',
          subCallId: 'c:code:1',
          name: 'grep',
          isError: true,
          content: [{ type: 'text', text: 'bad pattern' }],
        },
      }),
      rec({
        type: 'result',
        toolName: 'run_code',
        result: { isError: false, value: null, content: [] },
        durationMs: 3,
      }),
    ])
    expect(cards.map((c) => [c.id, c.parentId, c.tool, c.status.kind])).toEqual([
      ['c', null, 'run_code', 'ok'],
      ['c:code:1', 'c', 'grep', 'error'],
    ])
    expect(cards[0].program).toBe('return 1')
    expect(cards[0].call).toMatchObject({ card: 'generic', title: 'one' })
    expect(cards[1].result).toMatchObject({ card: 'generic', content: [{ type: 'text', text: 'bad pattern' }] })
  })

  it("replays through the host's own presenters, and a throwing presenter gives the generic card", () => {
    const presenters = presenterTable([
      {
        name: 'custom',
        presentCall: (args) => ({ card: 'generic', title: `custom ${JSON.stringify(args)}` }),
        presentResult: () => {
          throw new Error('presenter bug')
        },
      },
    ])
    const [card] = fold(
      [
        rec({ type: 'call-started', arguments: { n: 1 } }),
        rec({ type: 'result', result: { isError: false, content: [] } }),
      ],
      presenters,
    )
    expect(card.call).toEqual({ card: 'generic', title: 'custom {"n":1}' })
    expect(card.result).toEqual({ card: 'generic', title: 'custom', content: [] })
  })

  it('reports which cards a record changed, and marks diff lines for edit cards', () => {
    const session = new SessionState(presenterTable())
    const started = parseJournalLine(
      JSON.stringify({
        ...base,
        type: 'call-started',
        callId: 'e',
        toolName: 'edit_file',
        arguments: { path: 'a.ts', old_string: 'x', new_string: 'y' },
      }),
    )!
    expect(session.ingest(started)).toEqual(['e'])
    const result = parseJournalLine(
      JSON.stringify({
        ...base,
        type: 'result',
        callId: 'e',
        toolName: 'edit_file',
        result: {
          isError: false,
          value: {},
          content: [],
          meta: { path: 'a.ts', diffs: [{ path: 'a.ts', oldText: 'a\nx\nb\n', newText: 'a\ny\nb\n' }] },
        },
      }),
    )!
    expect(session.ingest(result)).toEqual(['e'])
    const card = session.card('e')!
    expect(card.result).toMatchObject({ card: 'diff', diffs: [{ path: 'a.ts' }] })
    expect(card.diffs.map((d) => d.lines)).toEqual([
      [
        { tag: 'ctx', text: 'a' },
        { tag: 'del', text: 'x' },
        { tag: 'add', text: 'y' },
        { tag: 'ctx', text: 'b' },
      ],
    ])
  })
})
