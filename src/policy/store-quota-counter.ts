// Quota counts in a shared store: each window of each count is a bucket that starts full and never
// refills, so the store's one atomic take counts a call for every instance on it.
import type { Store } from '../journal/store.js'
import type { QuotaCounter } from './quota-counter.js'

/** Quota counts kept in `store` (PostgreSQL with `--store`); `peek` is not read from it and says 0. */
export function storeQuotaCounter(store: Pick<Store, 'take'>): QuotaCounter {
  return {
    async take(key, windowStart, _windowMs, limit) {
      const taken = await store.take(`quota:${key}:${windowStart}`, { capacity: limit, refillPerSecond: 0 })
      return taken.allowed
    },
    peek: () => Promise.resolve(0),
  }
}
