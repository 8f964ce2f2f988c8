// The requestState of an approval put to a 2026-07-28 client as an input-required result: the
// call waits in the client, not in a held connection, so everything the retry must prove travels
// in the state, sealed. The seal (HMAC-SHA256) binds the caller, the tool, the arguments, the call,
// an expiry and a one-time nonce; the retry is refused unless each matches, and a nonce is spent
// once (remembered until its state expires): in this process's memory, or, under a key every
// instance shares, in a ledger every instance shares (the gateway's store), so any instance takes
// the retry and a state is accepted at most once across all of them.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { canonicalJson } from '../../providers/state-seal.js'

/** What a sealed approval state carries. */
export interface ApprovalState {
  /** The caller's subject, or '' for an anonymous (unauthenticated) caller. */
  readonly subject: string
  /** The tool the client called. */
  readonly tool: string
  /** The tool the approval was asked for (a Code Mode sub-call's, else the called tool). */
  readonly asked: string
  /** SHA-256 of the call's arguments as canonical JSON. */
  readonly args: string
  readonly callId: string
  /** When the state stops being accepted (ms since the epoch). */
  readonly expires: number
  readonly nonce: string
  /**
   * Present when the state answers an upstream's input-required result rather than an approval:
   * the upstream's own `requestState` (opaque here), to go back to it untouched with the retry.
   */
  readonly relay?: { readonly state?: string }
  /** Present when the state answers a question a 2025 upstream asked, held in memory under this key. */
  readonly held?: string
  /**
   * Present on a relay or held state of a call toolgate's own approval allowed in an earlier round:
   * the later rounds (retries that carry the upstream's input) run on that approval, not asking again.
   */
  readonly approved?: CarriedApproval
  /**
   * Present when the approvals asked are a kept Code Mode program's (the call is its `run_code`):
   * the store turn it is kept in, and its waiting sub-calls in the order they were asked.
   */
  readonly kept?: KeptProgramRef
}

/** The kept program a state's approvals are for. */
export interface KeptProgramRef {
  readonly turn: string
  readonly calls: readonly string[]
}

/** An approval given in one round of a 2026 client's call, carried sealed to its later rounds. */
export interface CarriedApproval {
  /** The tool the approval was asked for. */
  readonly asked: string
  /** Who decided (the authenticated client), when known. */
  readonly by?: string
  /** Until when (ms since the epoch) later rounds may run on it; after, the approval is asked again. */
  readonly until: number
}

/** How long a person may take to answer before the state is refused (as for a 2025 elicitation). */
export const APPROVAL_STATE_TTL_MS = 10 * 60_000
/**
 * How long an approval holds for the later rounds of its call, from when it was given: the upstream
 * may ask several questions, each with its own ten minutes, but an approval is not carried forever.
 */
export const APPROVED_ROUNDS_MS = 60 * 60_000
/** Spent nonces kept at most; past this (all still unexpired) a retry is refused rather than forgotten. */
const MAX_SPENT = 10_000
const PREFIX = 'tg-approval.1.'
/** Keeps this HMAC apart from anything else the same key signs (a kept program's seal). */
const DOMAIN = 'toolgate approval request state v1\n'

/** Where spent nonces are remembered. */
export interface SpentNonces {
  /**
   * Spend `nonce`, remembered at least until `expires` (ms since the epoch): undefined when this
   * call is the first to spend it, else why it cannot be spent. Throws when it cannot be told.
   */
  spend(nonce: string, expires: number, now: number): Promise<string | undefined>
}

/** Spent nonces in this process's memory, each forgotten once its state has expired. */
export function spentInMemory(): SpentNonces {
  const spent = new Map<string, number>()
  return {
    async spend(nonce, expires, now) {
      for (const [old, until] of spent) if (until <= now) spent.delete(old)
      if (spent.has(nonce)) return 'it has already been used'
      if (spent.size >= MAX_SPENT) return 'too many approvals are in flight; call again'
      spent.set(nonce, expires)
      return undefined
    },
  }
}

/** The digest the state binds for a call's arguments. */
export function argumentsDigest(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('base64url')
}

/** Seals and opens approval states under one key, remembering spent nonces. */
export class ApprovalStateSeal {
  private readonly key: Uint8Array
  private readonly spent: SpentNonces

  /**
   * `key`: the gateway's state key, or (by default) a random per-process one. `spent`: where used
   * nonces are kept (by default this process's memory).
   */
  constructor(key?: Uint8Array, spent: SpentNonces = spentInMemory()) {
    this.key = key ?? randomBytes(32)
    this.spent = spent
  }

  /** A sealed state for a call now asking for approval. */
  seal(fields: Omit<ApprovalState, 'expires' | 'nonce'>, now = Date.now()): string {
    const state: ApprovalState = {
      ...fields,
      expires: now + APPROVAL_STATE_TTL_MS,
      nonce: randomBytes(16).toString('base64url'),
    }
    const body = Buffer.from(canonicalJson(state)).toString('base64url')
    return `${PREFIX}${body}.${this.mac(body)}`
  }

  /**
   * The state `wire` carries, when it is sealed under this key, unexpired, unspent and bound to
   * `expected`; the nonce is spent by this call (only once everything else holds, so a refused
   * state spends nothing). Otherwise the reason it is refused. Rejects when the ledger of spent
   * nonces cannot be reached. `admit` checks the retry's answers against the opened state before
   * its nonce is spent: its reason (an answer missing) refuses the retry with `input` set.
   */
  async open(
    wire: unknown,
    expected: Pick<ApprovalState, 'subject' | 'tool' | 'args'>,
    now = Date.now(),
    admit?: (state: ApprovalState) => string | undefined,
  ): Promise<{ ok: true; state: ApprovalState } | { ok: false; reason: string; input?: true }> {
    if (typeof wire !== 'string' || !wire.startsWith(PREFIX))
      return { ok: false, reason: 'it is not an approval state' }
    const [body, mac, extra] = wire.slice(PREFIX.length).split('.')
    if (body === undefined || mac === undefined || extra !== undefined) return { ok: false, reason: 'it is malformed' }
    const want = Buffer.from(this.mac(body))
    const given = Buffer.from(mac)
    if (want.length !== given.length || !timingSafeEqual(want, given))
      return { ok: false, reason: 'its seal does not verify (tampered, or sealed by another gateway)' }
    let state: ApprovalState
    try {
      state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as ApprovalState
    } catch {
      return { ok: false, reason: 'it is malformed' }
    }
    if (typeof state.expires !== 'number' || state.expires <= now) return { ok: false, reason: 'it has expired' }
    if (state.subject !== expected.subject) return { ok: false, reason: 'it was issued to another caller' }
    if (state.tool !== expected.tool) return { ok: false, reason: 'it was issued for another tool' }
    if (state.args !== expected.args) return { ok: false, reason: 'it was issued for other arguments' }
    if (typeof state.nonce !== 'string' || state.nonce === '') return { ok: false, reason: 'it is malformed' }
    if (state.approved !== undefined && !isCarriedApproval(state.approved))
      return { ok: false, reason: 'it is malformed' }
    if (state.kept !== undefined && !isKeptProgramRef(state.kept)) return { ok: false, reason: 'it is malformed' }
    const unanswered = admit?.(state)
    if (unanswered !== undefined) return { ok: false, reason: unanswered, input: true }
    const refused = await this.spent.spend(state.nonce, state.expires, now)
    if (refused !== undefined) return { ok: false, reason: refused }
    return { ok: true, state }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(DOMAIN).update(body).digest('base64url')
  }
}

function isCarriedApproval(value: unknown): value is CarriedApproval {
  if (typeof value !== 'object' || value === null) return false
  const { asked, by, until } = value as Record<string, unknown>
  return typeof asked === 'string' && (by === undefined || typeof by === 'string') && typeof until === 'number'
}

function isKeptProgramRef(value: unknown): value is KeptProgramRef {
  if (typeof value !== 'object' || value === null) return false
  const { turn, calls } = value as Record<string, unknown>
  return (
    typeof turn === 'string' &&
    Array.isArray(calls) &&
    calls.length > 0 &&
    calls.every((call) => typeof call === 'string')
  )
}
