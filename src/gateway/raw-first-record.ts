// What `serve`'s first listing (raw-first.ts, run by the executable's first script) hands to the
// gateway that the CLI's bundle starts: kept on the global object, since each bundle has its own
// copy of this module.
import type { Readable } from 'node:stream'
import { processShared } from '../util/process-shared.js'

export interface RawFirstRecord {
  /** Every byte the client sent, what the first listing read first; the gateway reads this instead of process.stdin. */
  stdin?: Readable
  /**
   * The client's requests answered already, by their place among its messages (its `initialize`,
   * and its `tools/list` with the JSON of the tools listed).
   */
  answered?: { readonly initialize: number; readonly list?: number; readonly tools?: string }
}

/** The process's record (empty unless the first listing ran). */
export function rawFirstRecord(): RawFirstRecord {
  return processShared('rawFirst', () => ({}))
}

/** The record, taken once: a gateway started later in the same process starts afresh. */
export function takeRawFirst(): RawFirstRecord {
  const record = rawFirstRecord()
  const taken = { ...record }
  record.stdin = undefined
  record.answered = undefined
  return taken
}
