// The nonces of approval states spent in the shared store: the store's one-time tokens, whose
// primary key lets one instance's insert win, so a state is accepted at most once across instances.
import type { Store } from '../journal/store.js'
import type { SpentNonces } from '../mcp/gateway.js'

/** Kept apart from any other one-time token the store holds. */
const APPROVAL_TOKEN = 'approval-state:'

/** Spent approval-state nonces in `store`. */
export function spentInStore(store: Pick<Store, 'spendOnce'>): SpentNonces {
  return {
    spend: async (nonce, expires) =>
      (await store.spendOnce(`${APPROVAL_TOKEN}${nonce}`, expires)) ? undefined : 'it has already been used',
  }
}
