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
