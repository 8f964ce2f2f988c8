// Issue 40, item 2, and issue 35, item 4: the turns a stdio `serve` keeps a 2026-07-28 client's
// run_code programs in when no store keeps them. The store's contract for one process (a decision
// recorded once, a claim won once, only on the recorded decision, watchers told of each change) and
// its bounds (open turns refused past the limit, the oldest closed turns dropped).
import { describe, expect, it } from 'vitest'
import { MAX_CLOSED_TURNS, MAX_OPEN_TURNS, memoryTurns } from '../../src/gateway/memory-turns.js'

/** A kept program's state as the keeper saves it: `pending.calls[i]` waits while `pending.requests[i]` is set. */
const paused = (callId: string) => ({
  kind: 'gateway-program',
  agentId: null,
  pending: { calls: [{ callId, name: 'guarded', arguments: {} }], requests: [{ callId }] },
})
const call = (turnId: string, callId: string) => ({ turnId, agentId: null, callId, toolName: 'guarded', arguments: {} })

describe('memoryTurns', () => {
  it('records a decision once, lists pending calls of open turns, and tells watchers of every change', async () => {
    const turns = memoryTurns()
    let changes = 0
    const stop = turns.watchTurns?.(() => changes++)
    await turns.saveTurn('t1', paused('c1'))
    expect(await turns.pendingCalls()).toEqual([{ turnId: 't1', callId: 'c1', toolName: 'guarded', agentId: null }])
    expect(await turns.decide('t1', 'c1', { kind: 'allowed-once' })).toEqual({ applied: true })
    expect(await turns.decide('t1', 'c1', { kind: 'denied', reason: 'no' })).toMatchObject({
      applied: false,
      existing: { kind: 'allowed-once' },
    })
    expect(await turns.decide('t1', 'other', { kind: 'allowed-once' })).toMatchObject({ applied: false })
    expect(await turns.decide('nope', 'c1', { kind: 'allowed-once' })).toMatchObject({ applied: false })
    // A loaded turn is a copy: changing it changes nothing kept.
    const loaded = await turns.loadTurn('t1')
    expect(loaded).toMatchObject({ id: 't1', closed: false, decisions: { c1: { kind: 'allowed-once' } } })
    ;(loaded?.state as { agentId: unknown }).agentId = 'changed'
    expect((await turns.loadTurn('t1'))?.state).toMatchObject({ agentId: null })
    await turns.closeTurn('t1')
    expect(await turns.pendingCalls()).toEqual([])
    expect(await turns.decide('t1', 'c1', { kind: 'allowed-once' })).toMatchObject({ applied: false })
    await new Promise((resolve) => setImmediate(resolve))
    expect(changes).toBe(3)
    stop?.()
    await turns.saveTurn('t2', paused('c2'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(changes).toBe(3)
  })

  it('creates a turn once, and wins a claim once, only on the decision recorded in an open turn', async () => {
    const turns = memoryTurns()
    expect(await turns.createTurn('t', paused('c'))).toBe(true)
    expect(await turns.createTurn('t', paused('c'))).toBe(false)
    const decision = { turnId: 't', kind: 'allowed-once' as const }
    expect((await turns.claim(call('t', 'c'), decision)).won).toBe(false)
    await turns.decide('t', 'c', { kind: 'denied', reason: 'no' })
    expect((await turns.claim(call('t', 'c'), decision)).won).toBe(false)
    expect((await turns.claim(call('t', 'c'), { turnId: 't', kind: 'denied' })).won).toBe(true)
    expect((await turns.claim(call('t', 'c'), { turnId: 't', kind: 'denied' })).won).toBe(false)
  })

  it(`refuses a new open turn past ${MAX_OPEN_TURNS}, and keeps only the ${MAX_CLOSED_TURNS} newest closed ones`, async () => {
    const turns = memoryTurns()
    for (let i = 0; i < MAX_OPEN_TURNS; i++) await turns.saveTurn(`t${i}`, paused('c'))
    await expect(turns.saveTurn('one-more', paused('c'))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    // An open turn is saved again (the program paused anew) within the bound.
    await turns.saveTurn('t0', paused('c'))
    for (let i = 0; i <= MAX_CLOSED_TURNS; i++) await turns.closeTurn(`t${i}`)
    expect(await turns.loadTurn('t0')).toBeUndefined()
    expect(await turns.loadTurn('t1')).toMatchObject({ closed: true })
    expect(await turns.saveTurn('one-more', paused('c'))).toBeUndefined()
    expect((await turns.pendingCalls()).length).toBe(MAX_OPEN_TURNS - MAX_CLOSED_TURNS)
  })
})
