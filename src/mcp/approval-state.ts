// The requestState of an approval put to a 2026-07-28 client as an input-required result: the
// call waits in the client, not in a held connection, so everything the retry must prove travels
// in the state, sealed. The seal (HMAC-SHA256) binds the caller, the tool, the arguments, the call,
// an expiry and a one-time nonce; the retry is refused unless each matches, and a nonce is spent
// once (remembered until its state expires).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { canonicalJson } from '../providers/state-seal.js'

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
}

/** How long a person may take to answer before the state is refused (as for a 2025 elicitation). */
export const APPROVAL_STATE_TTL_MS = 10 * 60_000
/** Spent nonces kept at most; past this (all still unexpired) a retry is refused rather than forgotten. */
const MAX_SPENT = 10_000
const PREFIX = 'tg-approval.1.'
/** Keeps this HMAC apart from anything else the same key signs (a kept program's seal). */
const DOMAIN = 'toolgate approval request state v1\n'

/** The digest the state binds for a call's arguments. */
export function argumentsDigest(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('base64url')
}

/** Seals and opens approval states under one key, remembering spent nonces. */
export class ApprovalStateSeal {
  private readonly key: Uint8Array
  /** Spent nonce → when its state expires. */
  private readonly spent = new Map<string, number>()

  /** `key`: the gateway's state key, or (by default) a random per-process one. */
  constructor(key?: Uint8Array) {
    this.key = key ?? randomBytes(32)
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
   * `expected`; the nonce is spent by this call. Otherwise the reason it is refused.
   */
  open(
    wire: unknown,
    expected: Pick<ApprovalState, 'subject' | 'tool' | 'args'>,
    now = Date.now(),
  ): { ok: true; state: ApprovalState } | { ok: false; reason: string } {
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
    this.prune(now)
    if (this.spent.has(state.nonce)) return { ok: false, reason: 'it has already been used' }
    if (this.spent.size >= MAX_SPENT) return { ok: false, reason: 'too many approvals are in flight; call again' }
    this.spent.set(state.nonce, state.expires)
    return { ok: true, state }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(DOMAIN).update(body).digest('base64url')
  }

  private prune(now: number): void {
    for (const [nonce, expires] of this.spent) if (expires <= now) this.spent.delete(nonce)
  }
}
