// Decisions and claims are keyed by turn and call (issue 36, item 8): two open turns that both have
// a call `call_b` are two calls. A viewer decision goes to the turn it names (an ambiguous one is
// refused, never recorded on the wrong turn), and a later turn that reuses a call id claims it anew.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JsonValue } from '../../src/contract/json-value.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { createPostgresStore } from '../../src/store/index.js'
import { storeApproval } from '../../src/viewer/store-source.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
const dir = mkdtempSync(join(tmpdir(), 'toolgate-turn-keys-'))
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => {
  server?.destroy()
  rmSync(dir, { recursive: true, force: true })
})
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])

describe('decisions and claims by turn and call (issue 36, item 8)', { timeout: 180_000 }, () => {
  it('two open turns with the same call ids: the viewer decides the turn named, and each turn runs its own call', async () => {
    const store = await createPostgresStore({ connectionString: server.createDatabase('turnkeys') })
    const marker = join(dir, 'marker')
    try {
      const turn = await setupTurn({ marker, store })
      // The same script twice: both turns suspend with call_b and call_c pending.
      for (const id of ['turn-1', 'turn-2']) {
        const result = await runModelLoop({
          tools: turn.tools,
          agent: turn.agent,
          model: scriptedModel(),
          messages: [{ role: 'user', content: 'update the files' }],
        })
        expect(result.stopReason).toBe('approval-required')
        await store.saveTurn(id, result.state as unknown as JsonValue)
      }
      const viewer = storeApproval(store)
      // Without a turn, call_b could mean either: refused, nothing recorded.
      const ambiguous = await viewer.decide({ callId: 'call_b', decision: 'approve' })
      expect(ambiguous).toEqual({
        applied: false,
        reason: 'call call_b is pending in 2 turns (turn-1, turn-2): name the turn',
      })
      expect((await store.loadTurn('turn-1'))?.decisions).toEqual({})
      // Named: recorded on that turn only.
      expect(await viewer.decide({ callId: 'call_b', turnId: 'turn-2', decision: 'deny' })).toEqual({ applied: true })
      expect((await store.loadTurn('turn-1'))?.decisions).toEqual({})
      expect((await store.loadTurn('turn-2'))?.decisions.call_b?.kind).toBe('denied')
      expect(await viewer.decide({ callId: 'call_b', turnId: 'turn-1', decision: 'approve' })).toEqual({
        applied: true,
      })
      for (const id of ['turn-1', 'turn-2'])
        expect(await viewer.decide({ callId: 'call_c', turnId: id, decision: 'approve' })).toEqual({ applied: true })

      // turn-1 resumes: both of its calls run, and turn-2's calls are still pending, undecided by it.
      const resumed = await resumeModelLoop({
        state: (await store.loadTurn('turn-1'))?.state,
        tools: turn.tools,
        agent: turn.agent,
        model: scriptedModel(),
        store,
        turnId: 'turn-1',
      })
      expect(resumed.alreadyRun).toEqual([])
      expect(lines(marker).filter((l) => l.startsWith('write:'))).toEqual(['write:b.txt', 'write:c.txt'])
      expect((await store.pendingCalls()).map((c) => `${c.turnId}/${c.callId}`)).toEqual([
        'turn-2/call_b',
        'turn-2/call_c',
      ])
    } finally {
      await store.close()
    }
  })

  it("a turn's crash evidence is its own: a turn reusing call ids another turn ran resumes and runs them", async () => {
    const store = await createPostgresStore({ connectionString: server.createDatabase('evidencekeys') })
    const marker = join(dir, 'marker-evidence')
    try {
      const turn = await setupTurn({ marker, store })
      // Both turns suspend with call_b and call_c pending, each writing its own files.
      const suffixes = { 'turn-1': '-1', 'turn-2': '-2' }
      for (const [id, suffix] of Object.entries(suffixes)) {
        const result = await runModelLoop({
          tools: turn.tools,
          agent: turn.agent,
          model: scriptedModel({ suffix }),
          messages: [{ role: 'user', content: 'update the files' }],
        })
        expect(result.stopReason).toBe('approval-required')
        await store.saveTurn(id, result.state as unknown as JsonValue)
      }
      const viewer = storeApproval(store)
      for (const id of Object.keys(suffixes))
        for (const callId of ['call_b', 'call_c'])
          expect(await viewer.decide({ callId, turnId: id, decision: 'approve' })).toEqual({ applied: true })
      const resume = async (id: 'turn-1' | 'turn-2') =>
        resumeModelLoop({
          state: (await store.loadTurn(id))?.state,
          tools: turn.tools,
          agent: turn.agent,
          model: scriptedModel({ suffix: suffixes[id] }),
          store,
          turnId: id,
        })
      // turn-1 first: the journal's latest requests for these ids are turn-2's, with other arguments.
      const first = await resume('turn-1')
      expect(first.stopReason).toBe('done')
      expect([first.alreadyRun, first.unproven]).toEqual([[], []])
      // turn-2 next: turn-1's results for call_b and call_c are in the journal after turn-2's suspension.
      const second = await resume('turn-2')
      expect(second.stopReason).toBe('done')
      expect([second.alreadyRun, second.unproven]).toEqual([[], []])
      expect(lines(marker).filter((l) => l.startsWith('write:'))).toEqual([
        'write:b-1.txt',
        'write:c-1.txt',
        'write:b-2.txt',
        'write:c-2.txt',
      ])
      // Each turn's model was answered with its own call's result.
      const toolTexts = (messages: readonly unknown[]) =>
        messages.flatMap((m) => {
          const message = m as { role?: string; content?: unknown }
          return message.role === 'tool' ? [String(message.content)] : []
        })
      expect(toolTexts(second.messages).filter((t) => t.includes('wrote'))).toEqual([
        expect.stringContaining('wrote b-2.txt'),
        expect.stringContaining('wrote c-2.txt'),
      ])
      // The resumes' call records name their stored turn.
      const started: string[] = []
      for await (const { record } of store.read())
        if (record.type === 'call-started' && record.toolName === 'write')
          started.push(`${record.storedTurnId ?? '-'}/${record.callId}`)
      expect(started).toEqual([
        '-/call_b',
        '-/call_c',
        '-/call_b',
        '-/call_c',
        'turn-1/call_b',
        'turn-1/call_c',
        'turn-2/call_b',
        'turn-2/call_c',
      ])
    } finally {
      await store.close()
    }
  })

  it('a claim is keyed by turn and call: a later turn reusing a call id wins its own claim', async () => {
    const store = await createPostgresStore({ connectionString: server.createDatabase('claimkeys') })
    try {
      const call = { agentId: 'agent-1', callId: 'call_c', toolName: 'write', arguments: { path: 'c.txt' } }
      const first = await store.claim({ ...call, turnId: 'turn-1' })
      expect(first.won).toBe(true)
      // The same turn's call again (another resume of it): refused, it ran already.
      expect((await store.claim({ ...call, turnId: 'turn-1' })).won).toBe(false)
      // Another turn whose model reused the id: its own call, its own claim.
      expect((await store.claim({ ...call, turnId: 'turn-2' })).won).toBe(true)
      // A claim without a turn keeps the key claims always had.
      expect((await store.claim(call)).won).toBe(true)
      expect((await store.claim(call)).won).toBe(false)
    } finally {
      await store.close()
    }
  })
})
