// What the turn-lease tests start from: a running turn whose lease has already passed.
import { expect } from 'vitest'
import type { Store } from '../../src/store/index.js'
import { until } from './until.js'

/** A turn with nothing pending yet, as a program's first save leaves it. */
export const running = { kind: 'running', pending: { calls: [], requests: [] } }

/** A lease of 1 ms taken now is expired once the clock moved past it (no fixed sleep). */
export async function expiredLeaseOn(store: Store, id: string, holder: string): Promise<void> {
  const taken = Date.now()
  expect(await store.createTurn(id, running, { holder, ms: 1 })).toBe(true)
  await until(() => (Date.now() > taken + 5 ? true : undefined), 'the 1 ms lease to pass', { everyMs: 5 })
}
