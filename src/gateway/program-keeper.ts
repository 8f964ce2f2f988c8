// `serve --store` with a state key: a Code Mode program whose sub-call asks for approval, on a
// connection whose client cannot be asked, waits for an approver in the viewer instead of being
// denied. Its replay log is saved, sealed, as a turn in the store, with the waiting sub-calls as the
// turn's pending calls (so the viewer lists and decides them). Every instance looks at the store's
// open program turns when the store says a turn changed (PostgreSQL's LISTEN/NOTIFY), and polls as
// a fallback; once a waiting sub-call is decided, the instance that wins the claim on that
// decision re-runs the program from its log: finished sub-calls answer from the log, the decided
// one runs, and the result goes to the client that is still waiting on this instance, and always
// to the journal.
//
// A program is its caller's: the caller's identity (or none, for an anonymous caller) is sealed in
// the turn, the resume runs under that identity's own scope, and a client that named its program
// (`_meta["toolgate/program"]`) can wait for it again after a restart only as the same identity: the
// turn of a named program is found by a digest of its owner and its name, so another identity's
// same name is another turn. The instance that creates a named program's turn runs it (see
// program-name.ts): every other call with that name, on any instance, waits for that run.
//
// A named program's run holds a lease on its turn, renewed while it runs, and saves its replay log
// into the turn each time a sub-call finished. If its instance dies, the lease expires; an instance
// where a call waits for the program (or a new call with its name and code arrives) then takes the
// turn over, one instance winning the lease, and re-runs the program from the saved log: finished
// sub-calls answer from the log, the rest run.
//
// A resume holds the turn's lease too (every kept turn is leased): the lease decides which instance
// runs the program now, and the claim on the decision records that it was taken. An instance that
// wins the expired lease of a turn whose decision is claimed takes over a resume whose instance
// died, from the log that resume saved.
//
// The program's own call, when the policy asked about it and it was allowed, keeps that approval in
// its sealed turn from the moment it was given: a taker runs the call with it instead of asking again.
// A vacant turn (its own call asked, nothing ran) is claimed by a new call with its name under the
// turn's lease, so a claimant that died before its run saved anything is taken over by the next one.
// Clients that were already waiting for such a turn are told to call again once that lease expired.
import { createHash, randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  ProgramSuspension,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { Store, StoreClaim, StoredTurn, TurnLease } from '../journal/store.js'
import { StoreError } from '../journal/store-error.js'
import { type AuthInfo, type Identity, identityOf, type McpCallKeeper, type McpKeptCall } from '../mcp/gateway.js'
import { canonicalJson, sealVerifies, stateSeal } from '../providers/state-seal.js'
import type { Log } from './log.js'
import { takeProgramName } from './program-name.js'
import { finishedInLog, logWaits, resumeProgressLog } from './resume-log.js'

/** Turns of kept programs are saved under ids with this prefix. */
export const PROGRAM_TURN_PREFIX = 'gateway-program:'
const PROGRAM_TOOL = 'run_code'
/** How often an instance looks for decided program turns (one query, plus one per open program). */
const POLL_MS = 500
/** With a store that pushes turn changes (PostgreSQL's LISTEN/NOTIFY), polling is only the fallback. */
const WATCHED_POLL_MS = 10_000
/** How long a named program's running instance holds its turn without renewing (see docs/decisions.md). */
export const PROGRAM_LEASE_MS = 15_000

/** How a client names its program in a `tools/call`'s `_meta`, to wait for it again (see the header). */
const PROGRAM_ID = /^[\x21-\x7e]{1,128}$/

/** Whose program it is, as sealed in its turn: the caller's identity, or null for an anonymous caller. */
export type Owner = {
  readonly subject: string
  readonly groups: readonly string[]
  readonly scopes: readonly string[]
  readonly claims: Readonly<Record<string, JsonValue>>
} | null

export interface ProgramState extends Record<string, unknown> {
  readonly v: 1
  readonly kind: 'gateway-program'
  /** The owner's scope id (as the viewer lists it), null for an anonymous caller. */
  readonly agentId: string | null
  /** Absent in turns kept before programs were bound to identities: those are anonymous. */
  readonly owner?: Owner
  /** The name the client gave its program, when it gave one. */
  readonly programId?: string
  readonly call: { readonly callId: string; readonly name: string; readonly arguments: JsonValue }
  readonly pending: { readonly calls: readonly JsonValue[]; readonly requests: readonly ApprovalRequest[] }
  readonly program: ProgramSuspension
  /**
   * How the program's own call was allowed when the policy asked about it: each resume answers
   * that ask with it instead of asking again. Absent when nothing asked about the call itself.
   */
  readonly approved?: OwnApproval
  /** The program's result, once it ended (the turn is closed then): a client that waits again gets it. */
  readonly result?: JsonValue
  /**
   * A named program whose own call was put to its client and not yet answered (nothing of it ran):
   * how many times so. The next call with the name claims `vacant:<n>` and runs it.
   */
  readonly vacant?: number
  /**
   * A vacant turn whose claimant holds its lease and runs it now: a later call with the name waits
   * while that lease is renewed, and takes the turn over once it expired (the claimant died);
   * clients that were waiting for the program are then told to call again.
   */
  readonly claimed?: true
  /**
   * The turn is leased in the store (created with a lease): whoever runs or resumes the program holds
   * the lease, and an instance takes it over once it expired. Absent in turns kept before resumes
   * held the lease: those are resumed by the claim on the decision alone.
   */
  readonly leased?: true
  readonly seal?: string
}

export const ownerOf = (identity: Identity | undefined): Owner =>
  identity === undefined
    ? null
    : {
        subject: identity.subject,
        groups: [...identity.groups],
        scopes: [...identity.scopes],
        claims: JSON.parse(JSON.stringify(identity.claims)) as Record<string, JsonValue>,
      }

/** Who an owner is, for telling owners apart: its subject under its token's issuer (a static token has none). */
export const ownerKey = (owner: Owner): JsonValue =>
  owner === null ? null : [owner.subject, typeof owner.claims.iss === 'string' ? owner.claims.iss : null]

/**
 * The turn a named program of `identity` is kept in: the same on every instance, and another
 * identity's same name gives another turn (it can never reach this one).
 */
export function namedProgramTurnId(identity: Identity | undefined, programId: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([ownerKey(ownerOf(identity)), programId]))
    .digest('hex')
  return `${PROGRAM_TURN_PREFIX}named:${digest.slice(0, 40)}`
}

/** A failed result of the program's own call. */
const programFailure = (message: string, code: string): ToolExecutionResult =>
  ({
    isError: true,
    error: { message, info: { name: 'Error', code } },
    content: [{ type: 'text', text: message }],
  }) as unknown as ToolExecutionResult

/**
 * A run's hold on its turn's lease. `lost` aborts once the lease is another's (a renewal or a
 * write was refused): the run is cancelled then, and writes nothing more. `save` writes the turn
 * behind the lease fence (`Store.saveLeasedTurn`): false, and `lost` aborted, when it was refused.
 */
interface HeldLease {
  readonly lost: AbortSignal
  save(state: ProgramState, close?: boolean): Promise<boolean>
  /** Whether the lease is still this run's (a check, not a fence: writes go through `save`). */
  confirm(): Promise<boolean>
  stop(): void
}

/** A resume cut short by the keeper's stop: its claim is given back, nothing is sealed. */
class Interrupted extends Error {}

/** A kept call whose client answers by retrying (MCP 2026-07-28): told where its paused program is kept. */
export interface KeptRoundCall extends McpKeptCall {
  /** Called once the paused program is kept; the call then answers at once instead of waiting for its result. */
  readonly onKept?: (pause: { readonly turnId: string; readonly waiting: readonly ApprovalRequest[] }) => void
}

export interface ProgramKeeper extends McpCallKeeper {
  run(
    input: ToolExecutionInput,
    options: ToolExecuteOptions,
    run: (options: ToolExecuteOptions, signal?: AbortSignal) => Promise<ToolExecutionResult>,
    call?: KeptRoundCall,
  ): Promise<ToolExecutionResult>
  /** Look at the store's program turns now (a decision was just recorded). */
  wake(): void
  /** Stop; resolves once runs interrupted by the stop gave their claims back (bounded). */
  close(): Promise<void>
}

/** What the keeper needs of where it keeps programs: the store's turns (or the process's, see memory-turns.ts). */
export type ProgramTurns = Pick<
  Store,
  | 'saveTurn'
  | 'createTurn'
  | 'leaseTurn'
  | 'saveLeasedTurn'
  | 'loadTurn'
  | 'closeTurn'
  | 'pendingCalls'
  | 'decide'
  | 'claim'
  | 'watchTurns'
>

type Execute = (input: ToolExecutionInput, options: ToolExecuteOptions) => Promise<ToolExecutionResult>

/** How the program's own call was allowed, kept with the paused program so a resume does not ask again. */
export type OwnApproval = { readonly kind: 'allowed-once'; readonly arguments?: JsonValue; readonly decidedBy?: string }

/**
 * Sub-calls wait (their approval suspends); the program's own call keeps its approval service, and
 * `allowed` hears how that service allowed it.
 */
function suspendingSubCalls(
  fallback: ApprovalService | undefined,
  allowed: (approval: OwnApproval) => void | Promise<void>,
  approver: string,
  heard: (outcome: ApprovalOutcome) => void,
): ApprovalService {
  return {
    request: async (request, context): Promise<ApprovalOutcome> => {
      if (request.parentCallId !== null) return { kind: 'suspended', reason: `waits for ${approver}` }
      const outcome: ApprovalOutcome =
        fallback === undefined
          ? { kind: 'denied', reason: 'nobody can be asked' }
          : await fallback.request(request, context)
      heard(outcome)
      // Once on a resume, whatever was answered: an `allowed-always` became a standing rule when it was given.
      if (outcome?.kind === 'allowed-once' || outcome?.kind === 'allowed-always')
        await allowed({
          kind: 'allowed-once',
          ...(outcome.kind === 'allowed-once' && outcome.arguments !== undefined
            ? { arguments: outcome.arguments }
            : {}),
          ...(outcome.decidedBy === undefined ? {} : { decidedBy: outcome.decidedBy }),
        })
      return outcome
    },
  }
}

/** Who decides a kept program's sub-calls when its turns are the store's. */
const VIEWER = 'an approver in the viewer'

const waitingResult = (turnId: string, approver = VIEWER): ToolExecutionResult =>
  ({
    isError: true,
    error: {
      message:
        approver === VIEWER
          ? `the program waits for ${approver} (turn ${turnId}); its result will be in the journal`
          : `the program waits for ${approver} (turn ${turnId})`,
      info: { code: 'APPROVAL_SUSPENDED' },
    },
  }) as unknown as ToolExecutionResult

/** Whose a kept program is, what it is called, and whether its turn is leased: what every save of its turn carries. */
type Bound = {
  readonly owner: Owner
  readonly agentId: string | null
  readonly programId?: string
  readonly leased?: true
}
const boundOf = ({ owner, agentId, programId, leased }: ProgramState): Bound => ({
  owner: owner ?? null,
  agentId,
  ...(programId === undefined ? {} : { programId }),
  ...(leased === true ? { leased } : {}),
})

/** How long a stop waits for interrupted runs to give their claims back. */
const STOP_WAIT_MS = 5_000
/** Runs of one decision that may fail here before the program ends with the failure. */
const MAX_FAILED_RESUMES = 3

export function createProgramKeeper(deps: {
  store: ProgramTurns
  key: Uint8Array
  execute: Execute
  agent: Agent
  log: Log
  /** Until the journal's records so far are committed (the store journal's `flush`). */
  flush: () => Promise<void>
  /** How often to poll the store's turns (default: 500 ms, or 10 s when the store pushes changes). */
  pollMs?: number
  /**
   * The scope an authenticated caller is served (the gateway's `identities.agentFor`): its kept
   * program resumes under it. Without it, only anonymous callers' programs are kept.
   */
  scopeOf?: (identity: Identity) => Agent
  /**
   * How long a named program's run holds its turn without renewing the lease (default 15 s); it
   * renews every third of it, and waiters on other instances try to take an expired one as often.
   */
  leaseMs?: number
  /**
   * Who decides a paused program's sub-calls, as the log and the suspended asks say it (default: an
   * approver in the viewer; turns in the process's memory are decided by their client's retry).
   */
  approver?: string
}): ProgramKeeper {
  const { store, key, execute, agent, log, flush, scopeOf } = deps
  const approver = deps.approver ?? VIEWER
  // Resumes running now (a stop waits for their claims to be given back), and claims to give back
  // that the store refused to release when their run failed.
  const resuming = new Set<Promise<void>>()
  const toRelease = new Map<string, () => Promise<void>>()
  const failedResumes = new Map<string, number>()
  // This keeper's lease holder id: unique to this process, so a restarted process never renews a dead one's lease.
  const lease: TurnLease = {
    holder: `${hostname()}:${process.pid}:${randomUUID()}`,
    ms: deps.leaseMs ?? PROGRAM_LEASE_MS,
  }
  const renewMs = Math.max(1, Math.floor(lease.ms / 3))
  // Clients still waiting on this instance, by turn id; turns this instance is running or resuming now.
  const waiters = new Map<string, Set<(result: ToolExecutionResult) => void>>()
  const live = new Set<string>()
  const busy = new Set<string>()
  const refused = new Set<string>()
  const lostClaims = new Set<string>()
  // Leased turns with a decision that another instance's lease keeps from this one: looked at as often as a lease is renewed.
  const leasedElsewhere = new Set<string>()
  const stopping = new AbortController()

  const deliver = (turnId: string, result: ToolExecutionResult) => {
    const waiting = waiters.get(turnId)
    if (waiting === undefined) return false
    for (const done of [...waiting]) done(result)
    return true
  }

  /** Wait, as a client on this instance, for the program kept in `turnId` (until its result, or the client goes). */
  const waitFor = (turnId: string, signal: AbortSignal | undefined): Promise<ToolExecutionResult> =>
    new Promise<ToolExecutionResult>((resolve) => {
      const waiting = waiters.get(turnId) ?? new Set<(result: ToolExecutionResult) => void>()
      waiters.set(turnId, waiting)
      const done = (value: ToolExecutionResult) => {
        waiting.delete(done)
        if (waiting.size === 0 && waiters.get(turnId) === waiting) waiters.delete(turnId)
        signal?.removeEventListener('abort', aborted)
        resolve(value)
      }
      const aborted = () => done(waitingResult(turnId, approver))
      waiting.add(done)
      if (signal?.aborted) aborted()
      else signal?.addEventListener('abort', aborted, { once: true })
    })

  const seal = (state: ProgramState): ProgramState => ({ ...state, seal: stateSeal(state, key) })
  const stateOf = (
    owner: Bound,
    call: ProgramState['call'],
    program: ProgramSuspension,
    approved?: OwnApproval,
  ): ProgramState =>
    seal({
      v: 1,
      kind: 'gateway-program',
      agentId: owner.agentId,
      owner: owner.owner,
      ...(owner.programId === undefined ? {} : { programId: owner.programId }),
      ...(owner.leased === true ? { leased: true as const } : {}),
      call,
      pending: {
        calls: program.waiting.map((r) => ({
          callId: r.callId,
          name: r.toolName,
          arguments: r.arguments as JsonValue,
        })),
        requests: program.waiting,
      },
      program,
      ...(approved === undefined ? {} : { approved }),
    })

  /** Run (or re-run) the program: its result, or what it waits for when it paused. */
  async function runProgram(
    options: ToolExecuteOptions,
    dispatch: (options: ToolExecuteOptions) => Promise<ToolExecutionResult>,
    onApproved?: (approval: OwnApproval) => Promise<void>,
  ): Promise<
    | { readonly result: ToolExecutionResult; readonly unstarted?: true }
    | { readonly paused: ProgramSuspension; readonly approved?: OwnApproval }
  > {
    let paused: ProgramSuspension | undefined
    let approved: OwnApproval | undefined
    let own: ApprovalOutcome | undefined
    const result = await dispatch({
      ...options,
      approval: suspendingSubCalls(
        options.approval,
        (allowed) => {
          approved = allowed
          return onApproved?.(allowed)
        },
        approver,
        (outcome) => {
          own ??= outcome
        },
      ),
      onSuspended: (_request, program) => {
        paused = program
      },
    })
    // The program's own ask went unanswered (put to the client as a round of its own): nothing ran.
    if (paused === undefined) return own?.kind === 'cancelled' ? { result, unstarted: true } : { result }
    return approved === undefined ? { paused } : { paused, approved }
  }

  /**
   * Save a paused program under `turnId`, so the viewer lists its waiting sub-calls. `create`: the
   * turn is new (an unnamed program's first pause), made with a lease. A leased run saves behind its
   * lease (`held`): false when the lease was another's (nothing was saved). A leased turn's lease is
   * then given up, so whichever instance resumes the program's decision can take it at once.
   */
  async function keep(
    turnId: string,
    state: ProgramState,
    options: { readonly create?: boolean; readonly held?: HeldLease | undefined } = {},
  ): Promise<boolean> {
    const { create = false, held } = options
    // The viewer offers a call only once the journal shows it asking: its records are committed
    // before the turn lists it as pending, or a crash in between would leave it undecidable.
    await flush()
    if (create && state.leased === true) {
      if (!(await store.createTurn(turnId, state as unknown as JsonValue, { holder: lease.holder, ms: 1 })))
        throw new StoreError(
          'STORE_UNAVAILABLE',
          `program turn ${turnId} exists already: its paused program is not kept`,
        )
    } else if (held !== undefined) {
      if (!(await held.save(state))) return false
    } else await store.saveTurn(turnId, state as unknown as JsonValue)
    if (state.leased === true && !create) await giveUpLease(turnId)
    log.info(`a run_code program waits for ${approver} (turn ${turnId})`)
    return true
  }

  /** Give this instance's lease on `turnId` up (it lapses now); one the store refuses lapses at its end. */
  const giveUpLease = (turnId: string): Promise<unknown> =>
    store.leaseTurn?.(turnId, { holder: lease.holder, ms: 1 }).catch(() => false) ?? Promise.resolve()

  /**
   * Seal the program's result into its turn (for a client that waits again, on any instance) and
   * close it. A leased run writes both behind its lease: false when the lease was another's.
   */
  async function settle(
    turnId: string,
    state: ProgramState,
    result: ToolExecutionResult,
    held?: HeldLease,
  ): Promise<boolean> {
    const { seal: _old, ...rest } = state
    const final = seal({
      ...rest,
      pending: { calls: [], requests: [] },
      result: JSON.parse(JSON.stringify(result)) as JsonValue,
    })
    if (held !== undefined) return held.save(final, true)
    await store.saveTurn(turnId, final as unknown as JsonValue)
    await store.closeTurn(turnId)
    return true
  }

  /**
   * The program ended: its result is sealed into the turn, the turn closed, the waiting clients
   * answered. A leased run whose lease was taken writes nothing: the taker's result is the program's.
   */
  async function finish(
    turnId: string,
    state: ProgramState,
    result: ToolExecutionResult,
    held?: HeldLease,
  ): Promise<void> {
    if (!(await settle(turnId, state, result, held))) return
    if (!deliver(turnId, result))
      log.info(`a kept run_code program finished (turn ${turnId}); its result is in the journal`)
  }

  /**
   * Renew the lease on `turnId` while a run holds it, and write the turn behind it. Its `lost`
   * aborts once a renewal or a fenced write is refused (another instance took the expired lease
   * over): the run is cancelled then (its sub-calls in flight see the abort, nothing more starts)
   * and saves nothing more into the turn. A store without leases (the process's own turns) has
   * nobody to hand the run to: the hold is never lost there.
   */
  function holdLease(turnId: string): HeldLease {
    const lost = new AbortController()
    // When the last renewal that succeeded was sent (this clock is monotonic; the store's decides expiry).
    let renewedAt = performance.now()
    const lose = (why: string) => {
      if (!lost.signal.aborted)
        log.info(
          `program turn ${turnId}: ${why}, so another instance took the program over; this run is cancelled and saves nothing more`,
        )
      lost.abort()
    }
    const renew = async (): Promise<boolean> => {
      if (lost.signal.aborted) return false
      if (store.leaseTurn === undefined) return true
      const sent = performance.now()
      if (await store.leaseTurn(turnId, lease)) {
        renewedAt = Math.max(renewedAt, sent)
        return true
      }
      lose('this instance could not renew its lease in time')
      return false
    }
    const timer =
      store.leaseTurn === undefined
        ? undefined
        : setInterval(() => {
            renew().catch((error: unknown) =>
              log.debug(`program turn ${turnId}: the lease was not renewed: ${String(error)}`),
            )
          }, renewMs)
    timer?.unref()
    // Two thirds of the lease left: a write sent now lands well before it expires (a store without the fence).
    const confirm = async () =>
      !lost.signal.aborted && (performance.now() - renewedAt < renewMs * 1.5 || (await renew().catch(() => false)))
    return {
      lost: lost.signal,
      confirm,
      async save(state, close = false) {
        if (lost.signal.aborted) return false
        const text = state as unknown as JsonValue
        if (store.leaseTurn !== undefined && store.saveLeasedTurn !== undefined) {
          // The fence: the store writes only while the lease is this holder's, in the step that checks it.
          const sent = performance.now()
          if (await store.saveLeasedTurn(turnId, text, lease, close ? { close } : undefined)) {
            renewedAt = Math.max(renewedAt, sent)
            return true
          }
          lose("a write of this run was refused: its lease is no longer this instance's")
          return false
        }
        // A store without the fence: the lease is checked, then the turn written (see docs/decisions.md).
        if (!(await confirm())) return false
        await store.saveTurn(turnId, text)
        if (close) await store.closeTurn(turnId)
        return true
      },
      stop: () => clearInterval(timer),
    }
  }

  /**
   * What a leased run hands Code Mode as `onProgramLog`: each finished sub-call's log is saved into
   * the turn (one save at a time, in order) before the program goes on, behind the lease.
   */
  function progress(
    turnId: string,
    held: HeldLease,
    stateFor: (programLog: JsonValue) => ProgramState,
  ): (programLog: JsonValue) => Promise<void> {
    let saved = Promise.resolve()
    return (programLog) => {
      saved = saved.then(async () => {
        // A stop cancels the sub-calls in flight: that is not their outcome, and a later run does them again.
        if (stopping.signal.aborted) return
        await held
          .save(stateFor(programLog))
          .catch((error: unknown) =>
            log.info(`program turn ${turnId}: the program's progress could not be saved: ${String(error)}`),
          )
      })
      return saved
    }
  }

  /** A running program's turn: open, nothing waits for a person, no result yet. */
  // A vacant turn (its own call was asked, nothing ran) is not running: the next call with its name claims it.
  const runningState = (state: ProgramState) =>
    state.program.waiting.length === 0 && state.result === undefined && state.vacant === undefined

  /**
   * Claim the vacant turn `turnId` (its state `state`) for this new call with its name: the lease
   * first, then the claim `vacant:<n>` under it, so whoever holds the claim held the lease. Claim
   * lost under a won lease: the claimant stopped renewing it (it died, or stalled past it) before its
   * run saved anything, so this call takes the turn over. While another holds the lease, this call
   * waits: as long as the holder renews it when the turn says a claimant runs it (`claimed`), else a
   * lease and a third at most (the round that left it vacant did not give its lease up). 'moved':
   * the turn is no longer this vacant one (look at it again); 'failed': the lease never came free.
   */
  async function claimVacant(
    turnId: string,
    state: ProgramState,
    signal: AbortSignal | undefined,
  ): Promise<'claimed' | 'moved' | 'failed' | 'gone'> {
    const n = state.vacant
    const leaseTurn = store.leaseTurn
    const still = (now: ProgramState | undefined) => now !== undefined && now.vacant === n && now.result === undefined
    if (leaseTurn !== undefined) {
      const until = performance.now() + lease.ms + renewMs
      // A store error counts as a refusal: it is tried again.
      while (!(await leaseTurn.call(store, turnId, lease).catch(() => false))) {
        const turn = await store.loadTurn(turnId).catch(() => undefined)
        const now = turn === undefined ? state : turn.closed ? undefined : verified(turnId, turn.state)
        if (!still(now)) return 'moved'
        if (now?.claimed !== true && performance.now() > until) return 'failed'
        if (signal?.aborted || stopping.signal.aborted) return 'gone'
        await new Promise((resolve) => setTimeout(resolve, Math.min(renewMs, 250)))
      }
    }
    try {
      // Read again under the lease: a claimant that held it may have moved the turn on.
      const turn = await store.loadTurn(turnId)
      const now = turn === undefined || turn.closed ? undefined : verified(turnId, turn.state)
      if (now === undefined || !still(now)) {
        await giveUpLease(turnId)
        return 'moved'
      }
      const claim = await store.claim({
        turnId,
        agentId: state.agentId,
        callId: `vacant:${n}`,
        toolName: PROGRAM_TOOL,
        arguments: state.call.arguments,
      })
      if (!claim.won)
        log.info(
          `program turn ${turnId}: the call that claimed it while vacant stopped renewing its lease before the program saved anything; this call takes it over (it is asked about as a new call)`,
        )
      // Marked, so later calls with the name wait while this lease is renewed.
      const { seal: _seal, ...rest } = now
      const marked = seal({ ...rest, claimed: true }) as unknown as JsonValue
      if (store.saveLeasedTurn === undefined) await store.saveTurn(turnId, marked)
      // Behind the lease fence: refused when this call stalled past the lease and another took it.
      else if (!(await store.saveLeasedTurn(turnId, marked, lease))) return 'moved'
      return 'claimed'
    } catch (error) {
      await giveUpLease(turnId)
      throw error
    }
  }

  /**
   * Take over the named program kept in `turnId` when its lease expired (the instance running it
   * died): re-run it here from the log its run saved, its finished sub-calls answering from the log.
   */
  async function takeOver(turnId: string): Promise<void> {
    if (store.leaseTurn === undefined || live.has(turnId) || busy.has(turnId)) return
    busy.add(turnId)
    let held: HeldLease | undefined
    try {
      if (!(await store.leaseTurn(turnId, lease))) return
      // Read after winning: the newest log the previous run saved.
      const turn = await store.loadTurn(turnId)
      if (turn === undefined || turn.closed) return
      const state = verified(turnId, turn.state)
      if (state === undefined || !runningState(state)) return
      const owner = state.owner ?? null
      const scope = scopeOfOwner(owner)
      if (scope === undefined) {
        log.info(
          `program turn ${turnId} belongs to "${owner?.subject}", whose scope this gateway cannot make: left alone`,
        )
        return
      }
      held = holdLease(turnId)
      live.add(turnId)
      const programLog = state.program.log
      const finished = finishedInLog(programLog)
      log.info(
        `program turn ${turnId}: the instance running it stopped renewing its lease; this instance takes the program over (${finished} finished sub-calls answer from its log)`,
      )
      const bound = boundOf(state)
      const input: ToolExecutionInput = {
        callId: state.call.callId,
        name: state.call.name,
        arguments: state.call.arguments,
        agent: scope,
        signal: AbortSignal.any([stopping.signal, held.lost]),
      }
      // The program's own call was approved when it first ran (sealed with this very call and owner):
      // its ask is answered so again, not put to anyone.
      const options: ToolExecuteOptions = {
        storedTurnId: turnId,
        ...(state.approved === undefined ? {} : { decision: state.approved }),
        onProgramLog: progress(turnId, held, (l) =>
          stateOf(bound, state.call, { waiting: [], log: l }, state.approved),
        ),
        ...(programLog === null ? {} : { program: { log: programLog, decisions: {} } }),
      }
      const ran = await runProgram(options, (o) => execute(input, o))
      held.stop()
      // Behind the lease: taken over in turn (this instance stalled past its lease), it writes
      // nothing, and the newer taker's result counts.
      if ('result' in ran) return await finish(turnId, state, ran.result, held)
      await keep(turnId, stateOf(bound, state.call, ran.paused, ran.approved ?? state.approved), { held })
    } finally {
      held?.stop()
      live.delete(turnId)
      busy.delete(turnId)
    }
  }

  /**
   * Clients here wait for the vacant turn `turnId` that a claimant marked `claimed` (state
   * `state`). A waiter never runs a vacant program (its own call was never allowed), so when the
   * claimant's lease expired (this instance wins it) with the turn still at that vacancy, they are
   * answered `PROGRAM_RESUME_FAILED`: a new call with the name claims the turn, asked anew. The
   * lease is given up at once, so that call can take it. While the claimant renews it, they wait on.
   */
  async function answerIfClaimantGone(turnId: string, state: ProgramState): Promise<void> {
    if (store.leaseTurn === undefined || live.has(turnId) || busy.has(turnId)) return
    busy.add(turnId)
    try {
      if (!(await store.leaseTurn(turnId, lease))) return
      let still: boolean
      try {
        // Read again under the lease: the claimant may have moved the turn on before its lease lapsed.
        const turn = await store.loadTurn(turnId)
        const now = turn === undefined || turn.closed ? undefined : verified(turnId, turn.state)
        still = now !== undefined && now.vacant === state.vacant && now.claimed === true && now.result === undefined
      } finally {
        await giveUpLease(turnId)
      }
      if (!still) return
      log.info(
        `program turn ${turnId}: the call that claimed it while vacant stopped renewing its lease before the program saved anything; the clients waiting here for it are told to call again`,
      )
      deliver(
        turnId,
        programFailure(
          `the program kept in turn ${turnId} did not start: the call that was to run it stopped before it did; call it again (with the same name) to run it`,
          'PROGRAM_RESUME_FAILED',
        ),
      )
    } finally {
      busy.delete(turnId)
    }
  }

  /** The scope a kept program resumes under: its owner's own, or the serving agent for an anonymous caller. */
  const scopeOfOwner = (owner: Owner): Agent | undefined => {
    if (owner === null) return agent
    if (scopeOf === undefined) return undefined
    return scopeOf(Object.freeze({ ...owner }))
  }

  /** A turn's state when its seal verifies under this gateway's key (logged once, and left alone, otherwise). */
  function verified(turnId: string, state: unknown): ProgramState | undefined {
    if (typeof state === 'object' && state !== null && sealVerifies(state as Record<string, unknown>, key))
      return state as ProgramState
    if (!refused.has(turnId)) log.info(`program turn ${turnId} is not sealed with this gateway's state key: left alone`)
    refused.add(turnId)
    return undefined
  }

  /** What a look found in a turn: a verified program with decided sub-calls, and the scope to resume it under. */
  type Decided = {
    readonly turn: StoredTurn
    readonly state: ProgramState
    readonly decided: readonly ApprovalRequest[]
    readonly scope: Agent
  }

  function decidedIn(turnId: string, turn: StoredTurn | undefined): Decided | undefined {
    if (turn === undefined || turn.closed) return undefined
    const state = verified(turnId, turn.state)
    if (state === undefined) return undefined
    const decided = state.program.waiting.filter((r) => turn.decisions[r.callId] !== undefined)
    if (decided.length === 0) return undefined
    const owner = state.owner ?? null
    const scope = scopeOfOwner(owner)
    if (scope === undefined) {
      if (!refused.has(turnId))
        log.info(
          `program turn ${turnId} belongs to "${owner?.subject}", whose scope this gateway cannot make: left alone`,
        )
      refused.add(turnId)
      return undefined
    }
    return { turn, state, decided, scope }
  }

  /** The claim on the first decided sub-call's recorded decision: exactly one claimant wins it. */
  const claimFirst = (turnId: string, { turn, state, decided }: Decided) =>
    store.claim(
      {
        turnId,
        agentId: state.agentId,
        callId: decided[0].callId,
        toolName: decided[0].toolName,
        arguments: decided[0].arguments as JsonValue,
      },
      { turnId, kind: turn.decisions[decided[0].callId].kind },
    )

  async function resume(turnId: string): Promise<void> {
    const found = decidedIn(turnId, await store.loadTurn(turnId))
    if (found === undefined) return
    if (found.state.leased === true && store.leaseTurn !== undefined) return resumeLeased(turnId, store.leaseTurn)
    // A turn kept without a lease: one instance resumes each decision, by the claim on the decision itself.
    const { decided } = found
    const claim = await claimFirst(turnId, found)
    if (!claim.won) {
      // Another instance resumes it now, or one was killed resuming it: its claim stays (see resumeClaimed).
      const lost = `${turnId} ${decided[0].callId}`
      if (!lostClaims.has(lost))
        log.info(
          `program turn ${turnId}: the decision for sub-call ${decided[0].callId} is claimed by another resume (${claim.reason}${claim.holder === undefined ? '' : `, process ${claim.holder.pid} since ${new Date(claim.holder.ts).toISOString()}`}); this instance leaves it`,
        )
      lostClaims.add(lost)
      return
    }
    lostClaims.delete(`${turnId} ${decided[0].callId}`)
    await runResume(turnId, found, claim.release, false)
  }

  /**
   * Resume a leased turn: the lease decides which instance runs the program now (taken before the
   * claim, so a claimant never waits for it), and the claim on the decision records that the
   * decision was taken. An instance that wins the lease of a turn whose decision is claimed already
   * takes over a resume whose instance died (or stalled past its lease): it re-runs the program
   * from the log that resume saved.
   */
  async function resumeLeased(turnId: string, leaseTurn: NonNullable<ProgramTurns['leaseTurn']>): Promise<void> {
    if (!(await leaseTurn.call(store, turnId, lease))) {
      if (!leasedElsewhere.has(turnId))
        log.info(
          `program turn ${turnId}: another instance holds its lease (it resumes the program); this instance looks again as often as a lease is renewed`,
        )
      leasedElsewhere.add(turnId)
      return
    }
    leasedElsewhere.delete(turnId)
    let found: Decided | undefined
    let claim: StoreClaim
    try {
      // Read again under the lease: a resume that held it before may have ended the program, or paused it again.
      found = decidedIn(turnId, await store.loadTurn(turnId))
      if (found === undefined) {
        await giveUpLease(turnId)
        return
      }
      claim = await claimFirst(turnId, found)
    } catch (error) {
      await giveUpLease(turnId)
      throw error
    }
    if (!claim.won)
      log.info(
        `program turn ${turnId}: the resume of its decision for sub-call ${found.decided[0].callId} stopped renewing its lease (${claim.reason}); this instance takes the resume over (${finishedInLog(found.state.program.log)} finished sub-calls answer from its log)`,
      )
    await runResume(turnId, found, claim.won ? claim.release : undefined, true)
  }

  /**
   * Run a resume this instance may run (it won the claim, or holds the lease). When it fails, its
   * claim (`release`) and its lease are given back, so the next look, here or on any instance,
   * resumes the program again from its last kept log.
   */
  async function runResume(
    turnId: string,
    found: Decided,
    release: (() => Promise<void>) | undefined,
    leased: boolean,
  ): Promise<void> {
    const { turn, state, decided, scope } = found
    const running = resumeClaimed(turnId, state, turn.decisions, decided, scope, leased).then(
      () => {
        failedResumes.delete(turnId)
      },
      async (error: unknown) => {
        // The run failed, or a stop interrupted it: its claim is given back, so the next look (here
        // or on any instance) resumes the program again from its last kept log.
        const failures = (failedResumes.get(turnId) ?? 0) + (stopping.signal.aborted ? 0 : 1)
        failedResumes.set(turnId, failures)
        if (failures >= MAX_FAILED_RESUMES) {
          failedResumes.delete(turnId)
          await finish(
            turnId,
            state,
            programFailure(
              `the program's resume failed ${failures} times (${error instanceof Error ? error.message : String(error)}); it ends here`,
              'PROGRAM_RESUME_FAILED',
            ),
          ).catch(() => {})
        }
        if (release !== undefined) await giveBack(`${turnId} ${decided[0].callId}`, release)
        if (leased) await giveUpLease(turnId)
        if (!(error instanceof Interrupted)) throw error
        log.info(
          `program turn ${turnId}: its resume was interrupted by a stop; its claim is given back${leased ? ', and its lease' : ''}`,
        )
      },
    )
    resuming.add(running)
    try {
      await running
    } finally {
      resuming.delete(running)
    }
  }

  /** Give a claim back; one the store cannot release now is tried again at the next look. */
  async function giveBack(id: string, release: () => Promise<void>): Promise<void> {
    try {
      await release()
      toRelease.delete(id)
    } catch (error) {
      toRelease.set(id, release)
      log.info(`a claim on ${id} could not be given back yet (tried again later): ${String(error)}`)
    }
  }

  /**
   * Resume a program whose decision this instance claimed, or whose lease it holds (`leased`: it
   * renews the lease while the program runs, and saves the program's log into the turn after each
   * finished sub-call, for a takeover if this process dies). Throws Interrupted when a stop cut the run.
   */
  async function resumeClaimed(
    turnId: string,
    state: ProgramState,
    recorded: Readonly<Record<string, ApprovalOutcome>>,
    decided: readonly ApprovalRequest[],
    scope: Agent,
    leased: boolean,
  ): Promise<void> {
    const base = state.program.log
    // A log a resume saved, all of whose decided sub-calls finished, waits for nothing: its decisions were spent.
    const decisions = logWaits(base) ? Object.fromEntries(decided.map((r) => [r.callId, recorded[r.callId]])) : {}
    const held = leased ? holdLease(turnId) : undefined
    try {
      const input: ToolExecutionInput = {
        callId: state.call.callId,
        name: state.call.name,
        arguments: state.call.arguments,
        agent: scope,
        signal: held === undefined ? stopping.signal : AbortSignal.any([stopping.signal, held.lost]),
      }
      const bound = boundOf(state)
      // The program's own call was allowed when it first ran: its ask is answered so again, not put to anyone.
      const options: ToolExecuteOptions = {
        program: { log: base, decisions },
        storedTurnId: turnId,
        ...(state.approved === undefined ? {} : { decision: state.approved }),
        // Saved as the paused turn with a longer log: its decided sub-calls stay listed (and claimed),
        // and one that has not finished keeps its mark, to run with its decision on a taker.
        ...(held === undefined
          ? {}
          : {
              onProgramLog: progress(turnId, held, (l) =>
                stateOf(
                  bound,
                  state.call,
                  { waiting: state.program.waiting, log: resumeProgressLog(base, l) },
                  state.approved,
                ),
              ),
            }),
      }
      const ran = await runProgram(options, (o) => execute(input, o))
      // A stop cut the run short: what it returned is not the program's result.
      if (stopping.signal.aborted) throw new Interrupted()
      // Behind the lease: taken over (this instance stalled past its lease), it writes nothing, and
      // the taker's result counts.
      held?.stop()
      if ('result' in ran) return await finish(turnId, state, ran.result, held)
      // A sub-call asked again under the id of one already decided: its decision is spent (claimed),
      // and the store takes one decision per call, so nobody could ever decide it. The program ends.
      const again = ran.paused.waiting.find((r) => recorded[r.callId] !== undefined)
      if (again !== undefined) {
        log.info(
          `program turn ${turnId}: sub-call ${again.callId} (${again.toolName}) asked for approval again after its decision was spent; the program fails`,
        )
        return await finish(
          turnId,
          state,
          programFailure(
            `the program's sub-call ${again.callId} (${again.toolName}) asked for approval again after its decision was used; a call is decided once, so the program ends here`,
            'APPROVAL_ASKED_AGAIN',
          ),
          held,
        )
      }
      await keep(turnId, stateOf(bound, state.call, ran.paused, ran.approved ?? state.approved), { held })
    } finally {
      held?.stop()
    }
  }

  /**
   * A named call: undefined when it took the name (it saved `running` as the turn, and runs the
   * program); else it waits for the program that holds the name (on any instance), and gets that
   * program's result when it ended, or its result once it does.
   */
  async function attach(
    turnId: string,
    owner: Owner,
    input: ToolExecutionInput,
    running: ProgramState,
  ): Promise<ToolExecutionResult | { readonly vacant: number }> {
    const name = await takeProgramName(store, turnId, running as unknown as JsonValue, lease)
    if (name.taken) return { vacant: 0 }
    const { turn } = name
    const state = verified(turnId, turn.state)
    if (state === undefined || JSON.stringify(ownerKey(state.owner ?? null)) !== JSON.stringify(ownerKey(owner)))
      return programFailure(
        `the program named "${state?.programId ?? ''}" cannot be waited for here: its kept turn ${turnId} does not verify`,
        'PROGRAM_NOT_KEPT',
      )
    if (canonicalJson(state.call.arguments) !== canonicalJson(input.arguments))
      return programFailure(
        `the name "${state.programId}" is taken by another program of this caller (its code or description differ); name a new program anew`,
        'PROGRAM_ID_TAKEN',
      )
    if (turn.closed)
      return state.result === undefined
        ? programFailure(`the program kept in turn ${turnId} ended; its result is in the journal`, 'PROGRAM_ENDED')
        : (state.result as unknown as ToolExecutionResult)
    if (state.vacant !== undefined) {
      // Nothing of it ran yet (its own call was asked and not answered): one call, across instances, runs it now.
      const took = await claimVacant(turnId, state, input.signal)
      if (took === 'moved') return attach(turnId, owner, input, running)
      if (took === 'gone') return waitingResult(turnId, approver)
      if (took === 'failed')
        return programFailure(
          `the program kept in turn ${turnId} could not be run: its lease was not given up in time; call it again`,
          'PROGRAM_RESUME_FAILED',
        )
      return { vacant: state.vacant }
    }
    log.info(`a client waits again for the run_code program kept in turn ${turnId}`)
    const waiting = waitFor(turnId, input.signal)
    tick()
    return waiting
  }

  /**
   * A named program's run ended here: its result goes into its turn, or the log says why not.
   * False only when its lease was another's: the taker's result is the name's, not this one.
   */
  async function settleNamed(
    turnId: string,
    running: ProgramState,
    result: ToolExecutionResult,
    held?: HeldLease,
  ): Promise<boolean> {
    try {
      return await settle(turnId, running, result, held)
    } catch (error) {
      log.info(
        `the result of the named run_code program in turn ${turnId} could not be saved; its other calls keep waiting: ${String(error)}`,
      )
      return true
    }
  }

  async function poll(): Promise<void> {
    for (const [id, release] of [...toRelease]) await giveBack(id, release)
    const turns = new Set(
      (await store.pendingCalls()).filter((c) => c.turnId.startsWith(PROGRAM_TURN_PREFIX)).map((c) => c.turnId),
    )
    for (const turnId of leasedElsewhere) if (!turns.has(turnId)) leasedElsewhere.delete(turnId)
    for (const turnId of turns) {
      if (busy.has(turnId) || refused.has(turnId)) continue
      busy.add(turnId)
      try {
        await resume(turnId)
      } catch (error) {
        log.info(`could not resume program turn ${turnId}: ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        busy.delete(turnId)
      }
    }
    // Clients here waiting for a program another instance ended: its result is in its turn.
    for (const turnId of waiters.keys()) {
      if (turns.has(turnId) || live.has(turnId) || busy.has(turnId)) continue
      const turn = await store.loadTurn(turnId)
      if (turn === undefined) continue
      const state = verified(turnId, turn.state)
      if (!turn.closed) {
        // Still running, perhaps on an instance that died: its lease says (taken over here once expired).
        if (state !== undefined && runningState(state))
          takeOver(turnId).catch((error: unknown) =>
            log.info(
              `could not take over program turn ${turnId}: ${error instanceof Error ? error.message : String(error)}`,
            ),
          )
        // A vacant turn's claimant runs it: once its lease expired, nobody will unless a new call comes.
        else if (state?.vacant !== undefined && state.claimed === true)
          answerIfClaimantGone(turnId, state).catch((error: unknown) =>
            log.info(
              `could not look at the claimant of program turn ${turnId}: ${error instanceof Error ? error.message : String(error)}`,
            ),
          )
        continue
      }
      deliver(
        turnId,
        state?.result === undefined
          ? programFailure(`the program kept in turn ${turnId} ended; its result is in the journal`, 'PROGRAM_ENDED')
          : (state.result as unknown as ToolExecutionResult),
      )
    }
  }

  // One poll at a time: a slow store never piles polls up; a change during a poll polls again after it.
  let polling = false
  let again = false
  const tick = () => {
    if (polling) {
      again = true
      return
    }
    polling = true
    poll()
      .catch((error: unknown) => log.debug(`program turns: ${String(error)}`))
      .finally(() => {
        polling = false
        if (again && !stopping.signal.aborted) {
          again = false
          tick()
        }
      })
  }
  const unwatch = store.watchTurns?.(tick)
  const timer = setInterval(tick, deps.pollMs ?? (unwatch === undefined ? POLL_MS : WATCHED_POLL_MS))
  timer.unref()
  // A lease expires without the store saying so: clients here waiting for a program another instance
  // runs, and decided programs another instance resumes, look as often as the lease is renewed.
  const leases = setInterval(() => {
    if (
      store.leaseTurn !== undefined &&
      (leasedElsewhere.size > 0 || [...waiters.keys()].some((id) => !live.has(id) && !busy.has(id)))
    )
      tick()
  }, renewMs)
  leases.unref()
  tick()

  return {
    keeps: (name: string, _agent: Agent | undefined, authInfo: AuthInfo | undefined) =>
      // An identity's program resumes under that identity's scope: kept only when the keeper can make it.
      name === PROGRAM_TOOL && (identityOf(authInfo) === undefined || scopeOf !== undefined),
    async run(input, options, run, call?: KeptRoundCall) {
      const identity = identityOf(call?.authInfo)
      const owner = ownerOf(identity)
      const programId = call?.programId
      if (programId !== undefined && (typeof programId !== 'string' || !PROGRAM_ID.test(programId)))
        return programFailure(
          '_meta["toolgate/program"]: expected 1 to 128 visible ASCII characters naming the program',
          'INVALID_PROGRAM_ID',
        )
      const turnId =
        programId === undefined ? `${PROGRAM_TURN_PREFIX}${randomUUID()}` : namedProgramTurnId(identity, programId)
      const bound: Bound = {
        owner,
        agentId: owner === null ? null : (input.agent?.id ?? null),
        ...(programId === undefined ? {} : { programId }),
        // Made with a lease (a named turn when it is created, an unnamed one when it first pauses).
        ...(store.leaseTurn === undefined ? {} : { leased: true as const }),
      }
      const call_ = { callId: input.callId, name: input.name, arguments: input.arguments as JsonValue }
      // A named program's turn holds the name from its first step: no pending call, no result yet.
      const running = stateOf(bound, call_, { waiting: [], log: null })
      let vacant = 0
      if (programId !== undefined) {
        const attached = await attach(turnId, owner, input, running)
        if (!('vacant' in attached)) return attached
        vacant = attached.vacant
      }
      live.add(turnId)
      // A named run holds its turn's lease and saves its progress there, for a takeover if this process dies.
      const held = programId === undefined ? undefined : holdLease(turnId)
      const lost = () => held?.lost.aborted === true
      // How the program's own call was allowed, once heard: saved into the turn at once, so a taker
      // runs this call with that decision instead of asking again (nobody could answer it there).
      let ownApproved: OwnApproval | undefined
      const save =
        held === undefined
          ? undefined
          : progress(turnId, held, (l) => stateOf(bound, call_, { waiting: [], log: l }, ownApproved))
      let ran: Awaited<ReturnType<typeof runProgram>>
      try {
        ran = await runProgram(
          save === undefined ? options : { ...options, onProgramLog: save },
          // A lost lease cancels the run here: its sub-calls in flight see the abort, nothing more starts.
          held === undefined ? run : (o) => run(o, AbortSignal.any([input.signal, held.lost])),
          save === undefined
            ? undefined
            : (approval) => {
                ownApproved = approval
                return save(null)
              },
        )
        if ('result' in ran && ran.unstarted && programId !== undefined) {
          // Its own call was put to the client (or its ask cancelled): nothing ran, so the name is not
          // spent on this answer; the next call with the name (the client's answer) runs the program.
          held?.stop()
          const { seal: _seal, ...rest } = running
          const vacated = seal({ ...rest, vacant: vacant + 1 })
          // Behind the lease: a stalled run whose lease was taken writes nothing (the taker's turn stands).
          if (held === undefined) await store.saveTurn(turnId, vacated as unknown as JsonValue)
          else if (!(await held.save(vacated))) return ran.result
          // Give the lease up, so the instance whose call claims the vacant turn can hold it at once.
          await giveUpLease(turnId)
          return ran.result
        }
        // Another instance took the program over (a renewal or a write behind the lease was refused):
        // its result is the name's, and this client waits for it.
        const takenOver = async () => {
          held?.stop()
          live.delete(turnId)
          const waiting = waitFor(turnId, input.signal)
          tick()
          return await waiting
        }
        if (held?.lost.aborted) return await takenOver()
        // What follows writes the turn's last state behind the lease (which ends the lease's use).
        held?.stop()
        if ('result' in ran) {
          // The name's other calls, here or on another instance, get the same answer.
          if (programId !== undefined && !(await settleNamed(turnId, running, ran.result, held)))
            return await takenOver()
          deliver(turnId, ran.result)
          return ran.result
        }
        if (
          !(await keep(turnId, stateOf(bound, call_, ran.paused, ran.approved), {
            create: programId === undefined,
            held,
          }))
        )
          return await takenOver()
        if (call?.onKept !== undefined) {
          // The client answers by retrying: the call ends now, naming the kept program.
          call.onKept({ turnId, waiting: ran.paused.waiting })
          return waitingResult(turnId, approver)
        }
      } catch (error) {
        log.info(`a paused program could not be kept: ${String(error)}`)
        const result = waitingResult(turnId, approver)
        if (programId !== undefined && !lost()) await settleNamed(turnId, running, result, held)
        deliver(turnId, result)
        return result
      } finally {
        held?.stop()
        live.delete(turnId)
      }
      return waitFor(turnId, input.signal)
    },
    wake: tick,
    async close() {
      // Closed before the upstreams, then again with the store: the second close waits for nothing more.
      if (stopping.signal.aborted) return
      clearInterval(timer)
      clearInterval(leases)
      unwatch?.()
      stopping.abort()
      if (resuming.size === 0) return
      let timeout: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled([...resuming]),
        new Promise((done) => {
          timeout = setTimeout(done, STOP_WAIT_MS)
        }),
      ])
      clearTimeout(timeout)
    },
  }
}
