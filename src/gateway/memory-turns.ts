// The turns of Code Mode programs kept in the process's memory, for `serve` over stdio without a
// store that keeps them: a stdio process lives exactly as long as its one client's session, so a
// program paused for that client's approval needs to outlive only that session. The same contract
// as the store's turns (src/journal/store.ts), for one process: a decision is recorded once, a
// claim is won once, and every change wakes the watchers at once (nothing polls).
import type { ApprovalOutcome } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import { type PendingCall, pendingCallsOf, type StoreClaim, type StoredTurn } from '../journal/store.js'
import { StoreError } from '../journal/store-error.js'
import type { ProgramTurns } from './program-keeper.js'

/** Open turns kept at most: a client that leaves this many programs waiting gets the next one refused. */
export const MAX_OPEN_TURNS = 1000
/** Closed turns (a finished program's result, for a retry or a named call that comes later) kept at most. */
export const MAX_CLOSED_TURNS = 256

interface MemoryTurn {
  state: JsonValue
  readonly decisions: Map<string, ApprovalOutcome>
  closed: boolean
}

/** Kept turns in this process's memory, bounded by {@link MAX_OPEN_TURNS} and {@link MAX_CLOSED_TURNS}. */
export function memoryTurns(): ProgramTurns {
  // Insertion order is age order: the oldest closed turns go first.
  const turns = new Map<string, MemoryTurn>()
  const claims = new Set<string>()
  const watchers = new Set<() => void>()
  const changed = () => {
    for (const watcher of [...watchers]) queueMicrotask(watcher)
  }
  const copy = (state: JsonValue): JsonValue => structuredClone(state)
  const claimKey = (turnId: string | undefined, callId: string) => JSON.stringify([turnId ?? null, callId])

  function make(id: string, state: JsonValue): void {
    let open = 0
    for (const turn of turns.values()) if (!turn.closed) open++
    if (open >= MAX_OPEN_TURNS)
      // The keeper reads this as any store that cannot take the turn: the call fails, nothing is lost.
      throw new StoreError(
        'STORE_UNAVAILABLE',
        `${MAX_OPEN_TURNS} programs already wait for approvals in this process; answer or abandon one before starting another`,
      )
    turns.set(id, { state: copy(state), decisions: new Map(), closed: false })
  }

  function dropOldClosed(): void {
    let closed = 0
    for (const turn of turns.values()) if (turn.closed) closed++
    for (const [id, turn] of turns) {
      if (closed <= MAX_CLOSED_TURNS) break
      if (!turn.closed) continue
      turns.delete(id)
      for (const callId of turn.decisions.keys()) claims.delete(claimKey(id, callId))
      closed--
    }
  }

  return {
    async saveTurn(id, state) {
      const turn = turns.get(id)
      if (turn === undefined) make(id, state)
      else {
        turn.state = copy(state)
        turn.closed = false
      }
      changed()
    },
    async createTurn(id, state) {
      if (turns.has(id)) return false
      make(id, state)
      changed()
      return true
    },
    async loadTurn(id): Promise<StoredTurn | undefined> {
      const turn = turns.get(id)
      if (turn === undefined) return undefined
      return { id, state: copy(turn.state), decisions: Object.fromEntries(turn.decisions), closed: turn.closed }
    },
    async closeTurn(id) {
      const turn = turns.get(id)
      if (turn === undefined || turn.closed) return
      turn.closed = true
      dropOldClosed()
      changed()
    },
    async pendingCalls(): Promise<PendingCall[]> {
      const out: PendingCall[] = []
      for (const [id, turn] of turns) if (!turn.closed) out.push(...pendingCallsOf(id, turn.state))
      return out
    },
    async decide(turnId, callId, outcome) {
      const turn = turns.get(turnId)
      if (turn === undefined) return { applied: false, reason: `no turn "${turnId}" is kept` }
      if (turn.closed) return { applied: false, reason: `turn "${turnId}" is closed` }
      if (!pendingCallsOf(turnId, turn.state).some((call) => call.callId === callId))
        return { applied: false, reason: `call "${callId}" is not pending in turn "${turnId}"` }
      const existing = turn.decisions.get(callId)
      if (existing !== undefined)
        return { applied: false, reason: `call "${callId}" was already decided`, existing: structuredClone(existing) }
      turn.decisions.set(callId, structuredClone(outcome))
      changed()
      return { applied: true }
    },
    async claim(call, decision): Promise<StoreClaim> {
      if (decision !== undefined) {
        const turn = turns.get(decision.turnId)
        if (turn === undefined || turn.closed || turn.decisions.get(call.callId)?.kind !== decision.kind)
          return {
            won: false,
            holder: undefined,
            reason: `the decision for call "${call.callId}" is not recorded as "${decision.kind}" in an open turn "${decision.turnId}"`,
          }
      }
      const key = claimKey(call.turnId, call.callId)
      if (claims.has(key)) return { won: false, holder: undefined, reason: 'claimed earlier in this process' }
      claims.add(key)
      return { won: true, release: async () => void claims.delete(key) }
    },
    watchTurns(onChange) {
      watchers.add(onChange)
      return () => void watchers.delete(onChange)
    },
  }
}
