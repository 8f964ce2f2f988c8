// Quota counts in a shared store: each window of each count is a bucket that starts full and never
// refills, so the store's one atomic take counts a call for every instance on it. The buckets of
// windows that ended are dropped a bounded batch at a time, at most once a minute per counter.
import type { Store } from '../journal/store.js'
import { type QuotaCounter, WINDOW_MS } from './quota-counter.js'

/** Where a quota's buckets live: the key names the window's length first, so ended ones are found by prefix. */
const PREFIX = 'quota:'

/** How often a counter drops ended windows, and how many buckets at most each time. */
const PRUNE_EVERY_MS = 60_000
const PRUNE_BATCH = 1000

/** Quota counts kept in a store, and the pruning of ended windows. */
export interface StoreQuotaCounter extends QuotaCounter {
  /**
   * Drop the buckets of windows that ended (a bucket untouched for a whole window's length is of
   * an ended window): at most a batch per window length. Resolves to how many went. `take` runs
   * it on its own, at most once a minute, without waiting for it.
   */
  prune(): Promise<number>
}

/** Quota counts kept in `store` (PostgreSQL with `--store`); `peek` is not read from it and says 0. */
export function storeQuotaCounter(
  store: Pick<Store, 'take' | 'dropBuckets'>,
  now: () => number = Date.now,
): StoreQuotaCounter {
  const bucket = (key: string, windowStart: number, windowMs: number) => `${PREFIX}${windowMs}:${windowStart}:${key}`
  let lastPrune = Number.NEGATIVE_INFINITY
  const prune = async () => {
    let dropped = 0
    // A bucket's last take lies inside its window, so one idle for the window's length is of an ended window.
    for (const ms of Object.values(WINDOW_MS)) dropped += await store.dropBuckets(`${PREFIX}${ms}:`, ms, PRUNE_BATCH)
    return dropped
  }
  return {
    async take(key, windowStart, windowMs, limit) {
      if (now() - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = now()
        // Pruning is housekeeping: a failure leaves the rows for the next round, never fails a call.
        void prune().catch(() => {})
      }
      const taken = await store.take(bucket(key, windowStart, windowMs), { capacity: limit, refillPerSecond: 0 })
      return taken.allowed
    },
    peek: () => Promise.resolve(0),
    async refund(key, windowStart, windowMs, limit) {
      // A take of minus one token: the bucket never refills, so this is the one way back.
      await store.take(bucket(key, windowStart, windowMs), { capacity: limit, refillPerSecond: 0 }, -1)
    },
    prune,
  }
}
