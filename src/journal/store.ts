// The state a gateway or a program keeps between calls and across processes, behind one interface:
// the embedded file store (one machine) and the PostgreSQL store (any number of instances) both
// implement it, and every feature talks to the interface only.
import type { ApprovalOutcome } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { CallClaimRecord, ClaimedCall } from './claims.js'
import type { JournalRecord } from './records.js'

/** A journal record with its position in the store (strictly increasing in read order). */
export interface StoredJournalRecord {
  /** The record's position: every later record has a greater one. */
  readonly seq: number
  readonly record: JournalRecord
}

/** Options of {@link Store.read}. */
export interface StoreReadOptions {
  /** Only records after this position (`seq`); default: from the start. */
  readonly after?: number
  /** Keep yielding records as they are appended until `signal` aborts. */
  readonly follow?: boolean
  /** Ends a `follow` read (the iteration returns; it does not throw). */
  readonly signal?: AbortSignal
}

/** A suspended turn kept in the store, with the decisions recorded for its calls. */
export interface StoredTurn {
  readonly id: string
  /** The `state` of an `'approval-required'` result, as saved. */
  readonly state: JsonValue
  /** Decisions recorded for its pending calls, by call id (each recorded at most once). */
  readonly decisions: Readonly<Record<string, ApprovalOutcome>>
  /** True once the turn was closed (resumed to its end, or replaced). */
  readonly closed: boolean
}

/**
 * A turn's liveness lease: which process runs the turn's program now, for how long. The expiry is
 * `ms` from when the lease was taken or renewed, by the store's clock (PostgreSQL's `now()`, the
 * machine's clock for the file store), so processes never compare their own clocks.
 */
export interface TurnLease {
  /** Who holds it: an id unique to one running process. */
  readonly holder: string
  /** How long it holds from now, in milliseconds (a positive integer). */
  readonly ms: number
}

/** Options of {@link Store.saveLeasedTurn}. */
export interface LeasedSaveOptions {
  /** Close the turn in the same step (no decision is accepted for it any more). Default false. */
  readonly close?: boolean
}

/** A call waiting for a decision, as the viewer lists them. */
export interface PendingCall {
  readonly turnId: string
  readonly callId: string
  readonly toolName: string
  readonly agentId: string | null
}

/** The answer of {@link Store.decide}. */
export type DecideResult =
  | { readonly applied: true }
  | { readonly applied: false; readonly reason: string; readonly existing?: ApprovalOutcome }

/** The answer of {@link Store.claim}. */
export type StoreClaim =
  | { readonly won: true; release(): Promise<void> }
  | { readonly won: false; readonly holder: CallClaimRecord | undefined; readonly reason: string }

/** A standing rule (`allowed-always` / `denied-always`) for one scope and tool. */
export interface StandingApproval {
  /** The agent id, or null for the global scope. */
  readonly agentId: string | null
  readonly toolName: string
  readonly kind: 'allowed-always' | 'denied-always'
}

/** A token bucket's parameters: `capacity` tokens, refilled at `refillPerSecond`. */
export interface BucketLimit {
  readonly capacity: number
  readonly refillPerSecond: number
}

/** The answer of {@link Store.take}. */
export interface BucketTake {
  readonly allowed: boolean
  /** Tokens left after this take (whole or fractional). */
  readonly remaining: number
  /** When refused: how long until `cost` tokens are there. 0 when allowed. */
  readonly retryAfterMs: number
}

/** A session of `serve --http`, as far as another instance needs to know of it. */
export interface StoredSession {
  readonly id: string
  /** Which instance serves the session's stream. */
  readonly instance: string
  readonly createdAt: number
}

/** What a store reports about itself (`toolgate store status`). */
export interface StoreStatus {
  readonly kind: 'file' | 'postgres'
  readonly where: string
  /** Schema version in the store and the newest this code knows (file store: both 1). */
  readonly schemaVersion: number
  readonly codeSchemaVersion: number
  readonly journalRecords: number
  readonly openTurns: number
  readonly claims: number
  /**
   * Calls whose journal shows more starts than results: interrupted (their process died mid-call;
   * they are never re-run) or still running.
   */
  readonly unfinishedCalls: number
}

/**
 * Durable state shared by every process that opens the same store. Every method may be called
 * concurrently, from any number of processes; each guarantee below holds across them.
 */
export interface Store {
  readonly kind: 'file' | 'postgres'
  /**
   * Append records in order. Resolves once they are durable in the store (acknowledged): a record
   * whose append resolved survives the process being killed. Records appended together keep their
   * order; appends from several processes interleave.
   */
  append(records: readonly JournalRecord[]): Promise<void>
  /** Records in store order; with `follow`, waits for more (no polling where the store can push). */
  read(options?: StoreReadOptions): AsyncIterable<StoredJournalRecord>
  /** Save (or replace) a suspended turn under `id`. Decisions already recorded for it are kept. */
  saveTurn(id: string, state: JsonValue): Promise<void>
  /**
   * Save a turn under `id` only when no turn (open or closed) has that id: true when this call made
   * it, false when one was there. Of processes creating one id together, exactly one gets true.
   * With `lease`, the created turn is leased to `lease.holder` in the same step (see
   * {@link Store.leaseTurn}); a store without `leaseTurn` may ignore it.
   */
  createTurn(id: string, state: JsonValue, lease?: TurnLease): Promise<boolean>
  /**
   * Take or renew the lease of the open turn `id` for `lease.holder`, until `lease.ms` from now by
   * the store's clock: true when the turn is open and leased, and its lease is the holder's own or
   * has expired; the lease is then the holder's. False (nothing changed) when there is no such turn,
   * it is closed, it was never leased, or another holder's lease has not expired. Of processes
   * taking one expired lease together, exactly one gets true; a holder that renews after another
   * took its expired lease gets false. Optional: a store without it never hands a turn from a dead
   * process to another (a named program whose process died keeps its name).
   */
  leaseTurn?(id: string, lease: TurnLease): Promise<boolean>
  /**
   * The lease fence: replace the state of the open turn `id` (as {@link Store.saveTurn} does) only
   * while its lease is `lease.holder`'s, and renew the lease for `lease.ms`, checked and written in
   * one step. True when saved. False (nothing changed) when there is no such turn, it is closed, it
   * was never leased, or another holder took its lease: a holder that stalled past its lease and
   * was taken over never lands a late write over the taker's. Its own expired lease that nobody
   * took is still its own (as {@link Store.leaseTurn} renews it): every taker changes the holder
   * before it reads the turn, so a write that finds its holder in the same step comes before any
   * taker's read. With `close`, the turn is closed in the same step (a run's final state).
   * Optional, present exactly when `leaseTurn` is.
   */
  saveLeasedTurn?(id: string, state: JsonValue, lease: TurnLease, options?: LeasedSaveOptions): Promise<boolean>
  /** The turn and its decisions, or undefined. */
  loadTurn(id: string): Promise<StoredTurn | undefined>
  /** Mark a turn finished: no decision is accepted for it any more. */
  closeTurn(id: string): Promise<void>
  /** Calls of open turns that wait for a decision. */
  pendingCalls(): Promise<PendingCall[]>
  /**
   * Record a decision for a pending call of an open turn, at most once per call: the first
   * decision wins, every later one (even the same) answers `applied: false` with the reason.
   */
  decide(turnId: string, callId: string, outcome: ApprovalOutcome): Promise<DecideResult>
  /**
   * Call `onChange` whenever a turn may have changed (a decision recorded, a turn saved or closed, by
   * any process, or the store reconnected and may have missed one); returns how to stop. Optional:
   * a store that cannot push leaves it out, and its readers poll.
   */
  watchTurns?(onChange: () => void): () => void
  /**
   * Claim `call` for this process before it runs: exactly one claimant wins, across processes. With
   * `decision`, the claim is taken only if that turn is open and the decision recorded for the call
   * is of that kind, checked in the same step that takes the claim.
   */
  claim(call: ClaimedCall, decision?: ClaimDecision): Promise<StoreClaim>
  /** Standing rules (all, or one agent's: null for the global scope). */
  standingApprovals(agentId?: string | null): Promise<StandingApproval[]>
  setStandingApproval(rule: StandingApproval): Promise<void>
  revokeStandingApproval(toolName: string, agentId: string | null): Promise<boolean>
  /** Take `cost` tokens from bucket `key`, atomically across processes (a negative `cost` gives tokens back). */
  take(key: string, limit: BucketLimit, cost?: number): Promise<BucketTake>
  /**
   * Delete at most `max` buckets whose key starts with `prefix` and that nothing took from for
   * `idleMs` (by the store's clock); resolves to how many went. A bucket is made again on its next take.
   */
  dropBuckets(prefix: string, idleMs: number, max: number): Promise<number>
  /** Sessions: record which instance serves one, look one up, forget one. */
  putSession(session: StoredSession): Promise<void>
  getSession(id: string): Promise<StoredSession | undefined>
  deleteSession(id: string): Promise<void>
  /**
   * Spend the one-time token `token`: true when this call is the first to spend it, across
   * processes; false when it was spent before. It is remembered at least until `expiresAt` (ms
   * since the epoch) and forgotten some time after. (The file store remembers in its process only.)
   */
  spendOnce(token: string, expiresAt: number): Promise<boolean>
  status(): Promise<StoreStatus>
  close(): Promise<void>
}

/** The recorded decision a claim depends on. */
export interface ClaimDecision {
  readonly turnId: string
  readonly kind: ApprovalOutcome['kind']
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The calls of a saved turn state that wait for a decision: `pending.calls[i]` whose
 * `pending.requests[i]` is set. A state of another shape has none.
 */
export function pendingCallsOf(turnId: string, state: unknown): PendingCall[] {
  if (!isObject(state) || !isObject(state.pending)) return []
  const { calls, requests } = state.pending
  if (!Array.isArray(calls) || !Array.isArray(requests)) return []
  const agentId = typeof state.agentId === 'string' ? state.agentId : null
  const out: PendingCall[] = []
  calls.forEach((call: unknown, i) => {
    if (!isObject(call) || typeof call.callId !== 'string' || typeof call.name !== 'string') return
    if (requests[i] === null || requests[i] === undefined) return
    out.push({ turnId, callId: call.callId, toolName: call.name, agentId })
  })
  return out
}

/** Why `lease` is not a {@link TurnLease}, or undefined when it is one. */
export function turnLeaseIssue(lease: unknown): string | undefined {
  const { holder, ms } = (typeof lease === 'object' && lease !== null ? lease : {}) as {
    holder?: unknown
    ms?: unknown
  }
  return typeof holder === 'string' && holder !== '' && Number.isSafeInteger(ms) && (ms as number) > 0
    ? undefined
    : 'expected { holder: a non-empty string, ms: a positive integer }'
}

/** One token-bucket step: refill since `at`, then take `cost` if there is enough. */
export function takeFromBucket(
  tokens: number,
  at: number,
  now: number,
  limit: BucketLimit,
  cost: number,
): { state: { tokens: number; at: number }; take: BucketTake } {
  const refilled = Math.min(limit.capacity, tokens + (Math.max(0, now - at) / 1000) * limit.refillPerSecond)
  if (refilled >= cost)
    return {
      state: { tokens: refilled - cost, at: now },
      take: { allowed: true, remaining: refilled - cost, retryAfterMs: 0 },
    }
  const retryAfterMs =
    limit.refillPerSecond > 0 ? Math.ceil(((cost - refilled) / limit.refillPerSecond) * 1000) : Number.POSITIVE_INFINITY
  return { state: { tokens: refilled, at: now }, take: { allowed: false, remaining: refilled, retryAfterMs } }
}
