// Quota counts: fixed windows (a UTC minute, hour or day), one count per rule and caller. In one
// process a map holds them; with a store they are shared by every instance on it.
import type { PolicyQuota } from './policy-document.js'

/** The length of each window, in ms. */
export const WINDOW_MS: Readonly<Record<PolicyQuota['per'], number>> = Object.freeze({
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
})

/** The answer to one call's claim on a quota. */
export type QuotaTake = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number }

/** Where quota counts live. `take` counts one call when the window has room, atomically. */
export interface QuotaCounter {
  /** Count a call against `key`'s window starting at `windowStart` if fewer than `limit` were counted. */
  take(key: string, windowStart: number, windowMs: number, limit: number): Promise<boolean>
  /** How many calls `key`'s window holds (for `explain`, which counts nothing). */
  peek(key: string, windowStart: number): Promise<number>
  /** Give back one call `take` counted in that window: the call was refused before it ran. */
  refund(key: string, windowStart: number, windowMs: number, limit: number): Promise<void>
}

/** The window a quota is in at `now`: its start and what is left of it. */
export function windowOf(quota: PolicyQuota, now: number): { start: number; ms: number; left: number } {
  const ms = WINDOW_MS[quota.per]
  const start = now - (now % ms)
  return { start, ms, left: start + ms - now }
}

/** Counts in this process: a map of the current windows, older ones dropped as windows pass. */
export class MemoryQuotaCounter implements QuotaCounter {
  private readonly counts = new Map<string, { start: number; count: number; end: number }>()
  take(key: string, windowStart: number, windowMs: number, limit: number): Promise<boolean> {
    const entry = this.counts.get(key)
    if (entry === undefined || entry.start !== windowStart) {
      if (this.counts.size >= 100_000) this.sweep(windowStart)
      this.counts.set(key, { start: windowStart, count: 1, end: windowStart + windowMs })
      return Promise.resolve(limit >= 1)
    }
    if (entry.count >= limit) return Promise.resolve(false)
    entry.count++
    return Promise.resolve(true)
  }
  peek(key: string, windowStart: number): Promise<number> {
    const entry = this.counts.get(key)
    return Promise.resolve(entry !== undefined && entry.start === windowStart ? entry.count : 0)
  }
  refund(key: string, windowStart: number): Promise<void> {
    const entry = this.counts.get(key)
    if (entry !== undefined && entry.start === windowStart && entry.count > 0) entry.count--
    return Promise.resolve()
  }
  private sweep(now: number): void {
    for (const [key, entry] of this.counts) if (entry.end <= now) this.counts.delete(key)
  }
}
