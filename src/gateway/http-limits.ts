// How much one caller of `serve --http` may take: a token bucket of requests and a bound on the
// requests in progress, per identity, so one busy client cannot starve the others.
import type { BucketLimit, BucketTake } from '../journal/store.js'
import type { Identity } from '../mcp/gateway.js'
import type { IdentityLimits, LimitsConfig, RateConfig } from './config-auth.js'

export const DEFAULT_RATE: RateConfig = { perSecond: 20, burst: 40 }
export const DEFAULT_CONCURRENCY = 16
export const DEFAULT_SESSIONS_PER_IDENTITY = 16
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000
export const DEFAULT_UPSTREAM_CONCURRENCY = 64

/**
 * Rate buckets shared by every instance (the store's `take`): a request takes its token there, so an
 * identity's rate holds across instances. Concurrency stays per instance.
 */
export type SharedBuckets = (key: string, limit: BucketLimit, cost?: number) => Promise<BucketTake>

export type Admission =
  | { readonly ok: true; readonly release: () => void }
  | { readonly ok: false; readonly retryAfterSec: number; readonly reason: string }

interface Account {
  tokens: number
  /** When `tokens` was last brought up to date, in ms. */
  at: number
  inFlight: number
  readonly rate: RateConfig
  readonly concurrency: number
}

/** The limits of `identity`: the first rule whose `who` matches, over the config's defaults. */
function limitsOf(config: LimitsConfig, identity: Identity): Required<IdentityLimits> {
  const rule = config.rules?.find(
    ({ who }) =>
      (who.subject === undefined || who.subject === identity.subject) &&
      (who.group === undefined || identity.groups.includes(who.group)),
  )
  return {
    rate: rule?.rate ?? config.rate ?? DEFAULT_RATE,
    concurrency: rule?.concurrency ?? config.concurrency ?? DEFAULT_CONCURRENCY,
  }
}

export class IdentityLimiter {
  readonly #config: LimitsConfig
  readonly #accounts = new Map<string, Account>()
  readonly #now: () => number

  constructor(config: LimitsConfig = {}, now: () => number = Date.now) {
    this.#config = config
    this.#now = now
  }

  #account(identity: Identity): Account {
    let account = this.#accounts.get(identity.subject)
    if (account === undefined) {
      const { rate, concurrency } = limitsOf(this.#config, identity)
      account = { tokens: rate.burst, at: this.#now(), inFlight: 0, rate, concurrency }
      this.#accounts.set(identity.subject, account)
    }
    return account
  }

  /** The rate limit of `identity` (a batch of more messages than its burst can never be admitted). */
  rateOf(identity: Identity): RateConfig {
    return this.#account(identity).rate
  }

  /**
   * Take `cost` requests of `identity` from its bucket (a JSON-RPC batch costs one per message);
   * `concurrent` requests also take a slot of its concurrency limit until `release()` is called
   * (once; later calls do nothing).
   */
  admit(identity: Identity, concurrent: boolean, cost = 1): Admission {
    const account = this.#account(identity)
    const now = this.#now()
    const { perSecond, burst } = account.rate
    account.tokens = Math.min(burst, account.tokens + ((now - account.at) / 1000) * perSecond)
    account.at = now
    if (account.tokens < cost) {
      const waitSec = (cost - account.tokens) / perSecond
      return {
        ok: false,
        retryAfterSec: Math.max(1, Math.ceil(waitSec)),
        reason: `rate limit of ${perSecond} requests per second (burst ${burst}) reached`,
      }
    }
    if (concurrent && account.inFlight >= account.concurrency) return this.#busy(account)
    account.tokens -= cost
    return { ok: true, release: concurrent ? this.#hold(account) : () => {} }
  }

  /**
   * `admit`, with the request's token taken from `buckets` (shared by every instance) instead of
   * this process's bucket. When the shared buckets cannot answer, this process's bucket decides
   * (the limit then holds per instance) and `onFailure` is told why.
   */
  async admitShared(
    identity: Identity,
    concurrent: boolean,
    buckets: SharedBuckets,
    onFailure: (error: unknown) => void,
    cost = 1,
  ): Promise<Admission> {
    const account = this.#account(identity)
    if (concurrent && account.inFlight >= account.concurrency) return this.#busy(account)
    // The slot is held while the bucket is asked, so concurrent requests cannot all pass the check.
    const release = concurrent ? this.#hold(account) : () => {}
    const { perSecond, burst } = account.rate
    let take: BucketTake
    try {
      take = await buckets(`rate:${identity.subject}`, { capacity: burst, refillPerSecond: perSecond }, cost)
    } catch (error) {
      release()
      onFailure(error)
      return this.admit(identity, concurrent, cost)
    }
    if (take.allowed) return { ok: true, release }
    release()
    const waitSec = Number.isFinite(take.retryAfterMs) ? take.retryAfterMs / 1000 : 60
    return {
      ok: false,
      retryAfterSec: Math.max(1, Math.ceil(waitSec)),
      reason: `rate limit of ${perSecond} requests per second (burst ${burst}) reached`,
    }
  }

  #busy(account: Account): Admission {
    return {
      ok: false,
      retryAfterSec: 1,
      reason: `concurrency limit of ${account.concurrency} requests in progress reached`,
    }
  }

  /** Take a concurrency slot until the returned release is called (once; later calls do nothing). */
  #hold(account: Account): () => void {
    account.inFlight++
    let released = false
    return () => {
      if (released) return
      released = true
      account.inFlight--
    }
  }
}

/** A counting semaphore whose waiters leave the queue when their signal aborts. */
export class Semaphore {
  #free: number
  readonly #waiting: (() => void)[] = []

  constructor(size: number) {
    this.#free = size
  }

  /** A release function when a slot is free now (taken), else undefined: nothing waits. */
  tryAcquire(): (() => void) | undefined {
    if (this.#free === 0) return undefined
    this.#free--
    return this.#release()
  }

  /** Resolves with a release function once a slot is free; with undefined when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<(() => void) | undefined> {
    const free = this.tryAcquire()
    if (free !== undefined) return Promise.resolve(free)
    if (signal?.aborted) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      const wake = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve(this.#release())
      }
      const onAbort = () => {
        const at = this.#waiting.indexOf(wake)
        if (at >= 0) this.#waiting.splice(at, 1)
        resolve(undefined)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiting.push(wake)
    })
  }

  /** Gives the slot to the next waiter, or back; once only. */
  #release(): () => void {
    let done = false
    return () => {
      if (done) return
      done = true
      const next = this.#waiting.shift()
      if (next) next()
      else this.#free++
    }
  }
}
