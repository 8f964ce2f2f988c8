// The viewer over a store (`toolgate view --store URL`): records come from the store's own follow
// (LISTEN/NOTIFY plus a cursor for PostgreSQL), and decisions are recorded in the store, once per call.
import type { JournalRecord } from '../journal/records.js'
import type { Store } from '../journal/store.js'
import { isPlainRecord, readOwn } from '../presentation/json-guard.js'
import {
  type ViewerApprovalHandler,
  type ViewerDecisionResult,
  type ViewerPendingCall,
  viewerOutcome,
} from './approval-state.js'

/** Follows a store's journal: what is there at start, then every record as it is appended. */
export class StoreFollower {
  private readonly controller = new AbortController()
  private cursor = 0
  private caughtUp: Promise<void> = Promise.resolve()

  constructor(
    private readonly store: Store,
    private readonly options: { onRecords(records: JournalRecord[]): void; onError?(error: unknown): void },
  ) {}

  /**
   * Read the first batch (a failure there fails the viewer's start); the rest of what is there is
   * read in the background, the event loop turning between batches, and then followed.
   */
  async start(): Promise<void> {
    let serving = false
    let firstBatch!: () => void
    const first = new Promise<void>((resolve) => {
      firstBatch = resolve
    })
    this.caughtUp = this.readExisting(firstBatch).then(
      () => {
        if (!this.controller.signal.aborted) void this.follow()
      },
      (error: unknown) => {
        if (!serving) throw error
        this.options.onError?.(error)
      },
    )
    await Promise.race([first, this.caughtUp])
    serving = true
  }

  /** Resolves when what the store held at `start` has been read (or reading failed). */
  whenCaughtUp(): Promise<void> {
    return this.caughtUp.catch(() => {})
  }

  private async readExisting(firstBatch: () => void): Promise<void> {
    const batch: JournalRecord[] = []
    for await (const { seq, record } of this.store.read({ after: this.cursor })) {
      if (this.controller.signal.aborted) return
      this.cursor = seq
      batch.push(record)
      if (batch.length >= 1000) {
        this.options.onRecords(batch.splice(0))
        firstBatch()
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
    }
    if (batch.length > 0) this.options.onRecords(batch)
  }

  private async follow(): Promise<void> {
    try {
      for await (const { seq, record } of this.store.read({
        after: this.cursor,
        follow: true,
        signal: this.controller.signal,
      })) {
        this.cursor = seq
        this.options.onRecords([record])
      }
    } catch (error) {
      this.options.onError?.(error)
    }
  }

  close(): void {
    this.controller.abort()
  }
}

/**
 * Approve / deny recorded in the store: the first decision for a call wins, on every instance. An
 * `-always` choice that won also writes the standing rule (the call's agent and tool) to the store,
 * so every instance that reads its rules from the store answers later calls without asking, whether
 * or not the runtime that resumes this turn keeps its rules there too.
 */
export function storeApproval(store: Store): ViewerApprovalHandler {
  return {
    async pending() {
      const calls = await store.pendingCalls()
      const turns = new Map<string, { decisions: Readonly<Record<string, { kind: string }>>; journal?: string }>()
      const board: ViewerPendingCall[] = []
      for (const call of calls) {
        let turn = turns.get(call.turnId)
        if (turn === undefined) {
          const stored = await store.loadTurn(call.turnId)
          turn = { decisions: stored?.decisions ?? {}, ...journalTurnOf(stored?.state) }
          turns.set(call.turnId, turn)
        }
        board.push({
          callId: call.callId,
          turnId: call.turnId,
          ...(turn.journal === undefined ? {} : { journalTurnId: turn.journal }),
          decided: turn.decisions[call.callId]?.kind ?? null,
        })
      }
      return board
    },
    async decide({ callId, turnId, ...decision }): Promise<ViewerDecisionResult> {
      // Decided by turn and call: open turns may share a call id, and a decision goes to one of them only.
      const matches = (await store.pendingCalls()).filter(
        (call) => call.callId === callId && (turnId === undefined || call.turnId === turnId),
      )
      if (matches.length === 0)
        return {
          applied: false,
          reason: `call ${callId} is not pending in the store${turnId === undefined ? '' : ` in turn ${turnId}`}`,
        }
      if (matches.length > 1)
        return {
          applied: false,
          reason: `call ${callId} is pending in ${matches.length} turns (${matches.map((m) => m.turnId).join(', ')}): name the turn`,
        }
      const turn = matches[0]
      const outcome = viewerOutcome(decision)
      const result = await store.decide(turn.turnId, callId, outcome)
      if (!result.applied)
        return {
          applied: false,
          reason: result.existing ? `${result.reason} (${result.existing.kind})` : result.reason,
        }
      if (outcome.kind !== 'allowed-always' && outcome.kind !== 'denied-always') return { applied: true }
      // Only the decision that won writes its rule: a loser of the race never leaves one behind.
      try {
        await store.setStandingApproval({ agentId: turn.agentId, toolName: turn.toolName, kind: outcome.kind })
        return { applied: true }
      } catch (error) {
        // The decision stands; the rule is kept when the turn is resumed by a runtime that keeps its
        // rules in this store.
        return {
          applied: true,
          note: `decision recorded, but the standing rule could not be written to the store: ${
            error instanceof Error ? error.message : String(error)
          }`,
        }
      }
    },
  }
}

/** The model-loop turn a stored state's pending batch came from (`state.pending.turnId`), when it says. */
function journalTurnOf(state: unknown): { journal?: string } {
  const pending = isPlainRecord(state) ? readOwn(state, 'pending') : undefined
  const turnId = isPlainRecord(pending) ? readOwn(pending, 'turnId') : undefined
  return typeof turnId === 'string' && turnId !== '' ? { journal: turnId } : {}
}
