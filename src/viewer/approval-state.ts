// `toolgate view --approve --state FILE`: approve / deny buttons record a person's decision into the
// suspended turn's state file, where `resumeModelLoop` picks it up (`state.decisions`). The viewer
// never runs a tool itself: it has no model, tools or agent; the host that resumes the turn does.
import { randomBytes } from 'node:crypto'
import { open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ApprovalOutcome } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { sealVerifies, stateSeal } from '../providers/state-seal.js'

/** The choices the page offers for a pending call: once, or for every later call of the tool by that agent. */
export type ViewerDecisionKind = 'approve' | 'deny' | 'approve-always' | 'deny-always'

/** Every {@link ViewerDecisionKind}. */
export const VIEWER_DECISION_KINDS: readonly ViewerDecisionKind[] = Object.freeze([
  'approve',
  'deny',
  'approve-always',
  'deny-always',
])

/** The longest reason a person may give with a denial (characters). */
export const MAX_VIEWER_REASON_CHARS = 500

/** A call waiting for a decision, as the approval handler lists it. */
export interface ViewerPendingCall {
  readonly callId: string
  /**
   * The turn it waits in as the handler names it (a store's turn id; a state file's turn): the page
   * sends it back with a decision, so open turns that share the call id are told apart.
   */
  readonly turnId?: string
  /** The model-loop turn whose reply emitted the call (its journal records' `turnId`), when known. */
  readonly journalTurnId?: string
  /** The decision recorded so far (`allowed-once`, …), or null. */
  readonly decided: string | null
}

/** A decision from the page on a pending approval. */
export interface ViewerDecision {
  callId: string
  /**
   * The turn the call waits in (a pending call's `turnId`): needed when open turns share the call
   * id; a decision that could mean more than one turn is refused.
   */
  turnId?: string
  decision: ViewerDecisionKind
  /** Who decided (the logged-in subject), recorded with the outcome and so in the resumed turn's journal. */
  decidedBy?: string
  /** A denial's reason as the person typed it (the model reads it after the viewer's own words). */
  reason?: string
}

/**
 * What became of a decision: recorded, or refused with the reason shown to the person. A recorded
 * decision may carry a `note` the person should read (the standing rule could not be written).
 */
export type ViewerDecisionResult =
  | { readonly applied: true; readonly note?: string }
  | { readonly applied: false; readonly reason: string }

/** Applies approval decisions taken in the page. */
export interface ViewerApprovalHandler {
  /** The calls waiting for a decision, each with its turn and the kind already recorded for it. */
  pending(): Promise<readonly ViewerPendingCall[]>
  /** Record one decision; refused when the call is not pending or was decided already. */
  decide(decision: ViewerDecision): Promise<ViewerDecisionResult>
}

/** The reason a denial from the viewer carries (what the model reads). */
export const VIEWER_DENIAL_REASON = 'denied by a person in the toolgate viewer'

/**
 * The outcome a decision records: approve → `allowed-once`, deny → `denied`, and the `-always`
 * choices → `allowed-always` / `denied-always`, which the resumed turn applies as a standing rule.
 */
export function viewerOutcome(decision: Omit<ViewerDecision, 'callId' | 'turnId'>): ApprovalOutcome {
  const by = decision.decidedBy === undefined ? {} : { decidedBy: decision.decidedBy }
  const reason =
    decision.reason === undefined || decision.reason === ''
      ? VIEWER_DENIAL_REASON
      : `${VIEWER_DENIAL_REASON}: ${decision.reason}`
  switch (decision.decision) {
    case 'approve':
      return { kind: 'allowed-once', ...by }
    case 'approve-always':
      return { kind: 'allowed-always', ...by }
    case 'deny-always':
      return { kind: 'denied-always', reason, ...by }
    default:
      return { kind: 'denied', reason, ...by }
  }
}

/** How long a decision waits for another writer's lock, and when a lock counts as abandoned. */
const LOCK_WAIT_MS = 3000
const LOCK_STALE_MS = 30_000

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A state file's suspended batch: the pending call ids and the decisions recorded so far. */
interface StateView {
  state: Json
  /** Call id → index in `pending.calls`, for calls without a result (waiting for a decision). */
  waiting: Map<string, number>
  decisions: Json
  /** The turn whose model reply emitted the batch (`state.pending.turnId`), when the state says. */
  turnId: string | undefined
}

/** Read and check the state file; every problem names the file and the field. */
async function readStateFile(path: string, key: Buffer | undefined): Promise<StateView> {
  const text = await readFile(path, 'utf8')
  let state: unknown
  try {
    state = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(`state file ${path}`, `not JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  const where = `state file ${path}`
  if (!isObject(state)) throw new ConfigError(where, "expected the state object of an 'approval-required' result")
  checkSeal(state, key, where)
  if (state.v !== 1) throw new ConfigError(`${where}: state.v`, `expected 1, got ${JSON.stringify(state.v)}`)
  const pending = state.pending
  if (!isObject(pending))
    throw new ConfigError(`${where}: state.pending`, 'missing — no call is waiting for a decision')
  const { calls, requests } = pending
  if (!Array.isArray(calls)) throw new ConfigError(`${where}: state.pending.calls`, 'expected an array')
  if (!Array.isArray(requests) || requests.length !== calls.length)
    throw new ConfigError(
      `${where}: state.pending.requests`,
      `expected an array of ${calls.length} entries (one per call)`,
    )
  const decisions = state.decisions ?? {}
  if (!isObject(decisions)) throw new ConfigError(`${where}: state.decisions`, 'expected an object keyed by call id')
  const waiting = new Map<string, number>()
  calls.forEach((call: unknown, i) => {
    if (isObject(call) && typeof call.callId === 'string' && requests[i] !== null) waiting.set(call.callId, i)
  })
  const turnId = typeof pending.turnId === 'string' && pending.turnId !== '' ? pending.turnId : undefined
  return { state, waiting, decisions, turnId }
}

/**
 * A sealed state is touched only with its key, and only when its seal verifies; with a key, an
 * unsealed state is refused too (resumeModelLoop given that key would refuse it anyway).
 */
function checkSeal(state: Json, key: Buffer | undefined, where: string): void {
  if (key === undefined) {
    if (state.seal !== undefined)
      throw new ConfigError(where, 'the state is sealed; give its key with --state-key-file FILE to record decisions')
    return
  }
  if (typeof state.seal !== 'string')
    throw new ConfigError(`${where}: state.seal`, 'missing, but a state key was given')
  let verifies = false
  try {
    verifies = sealVerifies(state, key)
  } catch {
    // Too deep to serialize: it does not verify.
  }
  if (!verifies)
    throw new ConfigError(
      `${where}: state.seal`,
      'does not verify under the state key (changed after it was sealed, or sealed with another key)',
    )
}

/** A member the object itself holds: a call id such as `constructor` never finds Object's members. */
function ownMember(record: Json, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined
}

function recordedKind(value: unknown): string | null {
  return isObject(value) && typeof value.kind === 'string' ? value.kind : null
}

/** Serialises decisions within the process and across processes (an exclusive lock file). */
async function withLock<T>(lockPath: string, body: () => Promise<T>): Promise<T | undefined> {
  const deadline = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx')
      await handle.close()
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const info = await stat(lockPath).catch(() => undefined)
      if (info !== undefined && Date.now() - info.mtimeMs > LOCK_STALE_MS) {
        await unlink(lockPath).catch(() => undefined)
        continue
      }
      if (Date.now() > deadline) return undefined
      await sleep(25)
    }
  }
  try {
    return await body()
  } finally {
    await unlink(lockPath).catch(() => undefined)
  }
}

/**
 * The approval handler of a state file: the `state` an `'approval-required'` result carried, stored
 * as JSON by the host. A decision is written into it as `state.decisions[callId]` (see
 * {@link viewerOutcome}; an `-always` choice becomes a standing rule in the runtime that resumes the
 * turn: in its memory, or in the standing store it installed), atomically (a temporary file
 * renamed over it), at most once per call: a call that is not pending in the file, or already has a
 * decision, is refused. The host's next `resumeModelLoop({ state })` applies what was recorded.
 */
export function stateFileApproval(
  path: string,
  options: { readonly stateKey?: Uint8Array } = {},
): ViewerApprovalHandler & { check(): Promise<void> } {
  // With the key the host's program seals states with: a decision is recorded only into a state
  // whose seal verifies, and the state is sealed again with the decision in it.
  const stateKey = options.stateKey === undefined ? undefined : Buffer.from(options.stateKey)
  let queue: Promise<unknown> = Promise.resolve()
  let cached: { key: string; pending: readonly ViewerPendingCall[] } | undefined

  const pending = async (): Promise<readonly ViewerPendingCall[]> => {
    let info: Awaited<ReturnType<typeof stat>>
    try {
      info = await stat(path)
    } catch {
      return [] // the host removed the state (the turn went on): nothing is pending
    }
    const key = `${info.ino}:${info.size}:${info.mtimeMs}`
    if (cached?.key === key) return cached.pending
    let view: StateView
    try {
      view = await readStateFile(path, stateKey)
    } catch {
      return [] // being rewritten, or no longer a suspended state: offer no buttons
    }
    // One turn per state file: its calls carry the state's turn, when it names one.
    const turn = view.turnId === undefined ? {} : { turnId: view.turnId, journalTurnId: view.turnId }
    const list = [...view.waiting.keys()].map(
      (callId): ViewerPendingCall => ({ callId, ...turn, decided: recordedKind(ownMember(view.decisions, callId)) }),
    )
    cached = { key, pending: list }
    return list
  }

  const apply = async ({ callId, turnId, ...decision }: ViewerDecision): Promise<ViewerDecisionResult> => {
    const result = await withLock(`${path}.lock`, async (): Promise<ViewerDecisionResult> => {
      let view: StateView
      try {
        view = await readStateFile(path, stateKey)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        return {
          applied: false,
          reason: code === 'ENOENT' ? 'the state file is gone (the turn went on)' : String(error),
        }
      }
      if (!view.waiting.has(callId))
        return { applied: false, reason: `call ${callId} is not pending in the state file` }
      // A decision named for another turn is not this state's (the host wrote the next turn's state).
      if (turnId !== undefined && turnId !== view.turnId)
        return { applied: false, reason: `call ${callId} is not pending in turn ${turnId} in the state file` }
      const recorded = recordedKind(ownMember(view.decisions, callId))
      if (recorded !== null) return { applied: false, reason: `call ${callId} was already decided (${recorded})` }
      const outcome = viewerOutcome(decision)
      view.state.decisions = { ...view.decisions, [callId]: outcome }
      if (stateKey !== undefined) view.state.seal = stateSeal(view.state, stateKey)
      const info = await stat(path)
      const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
      const handle = await open(temp, 'wx', info.mode & 0o777)
      try {
        await handle.writeFile(`${JSON.stringify(view.state, null, 2)}\n`)
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(temp, path).catch(async (error: unknown) => {
        await unlink(temp).catch(() => undefined)
        throw error
      })
      return { applied: true }
    })
    return result ?? { applied: false, reason: 'the state file is locked by another writer; try again' }
  }

  return {
    pending,
    decide(decision) {
      const next = queue.then(() => apply(decision))
      queue = next.catch(() => undefined)
      return next
    },
    /** Fails with a clear message when the file is not a suspended state (used at start). */
    async check() {
      await readStateFile(path, stateKey)
    },
  }
}
