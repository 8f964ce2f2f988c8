// Narrowing of one journal record for the viewer. A journal is untrusted input (it may be
// hand-edited, truncated mid-line, or written by a newer version): lines are parsed by the
// journal's own parser (`readJournal`'s), and the common fields are then read defensively, since
// a parsed record only guarantees `v`, `type` and `callId`.
import { parseJournalRecord } from '../journal/parse-record.js'
import type { JournalRecord } from '../journal/records.js'
import { isPlainRecord, readOwn } from '../presentation/json-guard.js'
import type { LineAt } from './follow.js'

/** The common fields every record carries, plus the record itself for type-specific reads. */
export interface JournalLineRecord {
  type: string
  ts: number | null
  callId: string
  rootCallId: string
  parentCallId: string | null
  agentId: string | null
  toolName: string
  /** The turn the record belongs to (`turnId`: a model loop's turn, or the turn that emitted a call). */
  turnId: string | null
  /** The record's `identity.subject`, when it carries an identity. */
  caller: string | null
  raw: Record<string, unknown>
  /** Where the line is in the journal file, when it was read from one the session can read again. */
  at?: LineAt
}

function optString(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

function callerOf(identity: unknown): string | null {
  if (!isPlainRecord(identity)) return null
  const subject = readOwn(identity, 'subject')
  return typeof subject === 'string' && subject !== '' ? subject : null
}

/** The viewer's view of a parsed record; `undefined` when it is not a plain object. */
export function toLineRecord(record: JournalRecord, at?: LineAt): JournalLineRecord | undefined {
  const value: unknown = record
  if (!isPlainRecord(value)) return undefined
  const type = readOwn(value, 'type')
  const callId = readOwn(value, 'callId')
  if (typeof type !== 'string' || typeof callId !== 'string') return undefined
  const ts = readOwn(value, 'ts')
  return {
    type,
    ts: typeof ts === 'number' && Number.isFinite(ts) ? ts : null,
    callId,
    rootCallId: optString(readOwn(value, 'rootCallId')) ?? callId,
    parentCallId: optString(readOwn(value, 'parentCallId')),
    agentId: optString(readOwn(value, 'agentId')),
    toolName: optString(readOwn(value, 'toolName')) ?? '',
    turnId: optString(readOwn(value, 'turnId')),
    caller: callerOf(readOwn(value, 'identity')),
    raw: value,
    ...(at === undefined ? {} : { at }),
  }
}

/** Parse one line; `undefined` for blank, malformed, foreign or unknown-type lines. */
export function parseJournalLine(line: string): JournalLineRecord | undefined {
  const record = parseJournalRecord(line)
  return record === undefined ? undefined : toLineRecord(record)
}
