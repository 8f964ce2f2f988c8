// A client that names its run_code program (`_meta["toolgate/program"]`) names one run. Before the
// program runs, the instance takes the name in the store by creating the program's turn, which
// only one creator can do across every instance on the store: the taker runs the program, and every
// other call with that name, on any instance, finds the turn and is judged by it (waits for that
// run, gets its result, or is refused) exactly as a call that came later.
import type { JsonValue } from '../contract/json-value.js'
import type { Store, StoredTurn, TurnLease } from '../journal/store.js'
import { StoreError } from '../journal/store-error.js'

/** What a named call found: the name is this call's to run, or the turn that holds it. */
export type ProgramName = { readonly taken: true } | { readonly taken: false; readonly turn: StoredTurn }

/** How often a call tries again when the turn it lost to is gone by the time it looks. */
const ATTEMPTS = 3

/**
 * Take the name whose turn is `turnId`, saving `running` (the sealed state of a run that started)
 * there, leased to `lease` when given; or the turn that already holds it.
 */
export async function takeProgramName(
  store: Pick<Store, 'createTurn' | 'loadTurn'>,
  turnId: string,
  running: JsonValue,
  lease?: TurnLease,
): Promise<ProgramName> {
  for (let attempt = 1; ; attempt++) {
    const turn = await store.loadTurn(turnId)
    if (turn !== undefined) return { taken: false, turn }
    if (await store.createTurn(turnId, running, lease)) return { taken: true }
    // Lost to another creator: its turn is there now (a store never drops a turn on its own).
    if (attempt >= ATTEMPTS)
      throw new StoreError(
        'STORE_UNAVAILABLE',
        `program turn ${turnId} was taken by another call but cannot be read back from the store`,
      )
  }
}
