// Narrowing reader for one journal line. A journal is untrusted input (it may be hand-edited,
// truncated mid-line, or written by a newer version): anything that is not a version-1 record
// with the common fields is skipped, unknown types and fields are ignored.
import { isPlainRecord, readOwn } from '../presentation/json-guard.js'

/** The common fields every record carries, plus the record itself for type-specific reads. */
export interface JournalLineRecord {
  type: string
  ts: number | null
  callId: string
  rootCallId: string
  parentCallId: string | null
  agentId: string | null
  toolName: string
  raw: Record<string, unknown>
}

function optString(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

/** Parse one line; `undefined` for blank, malformed or foreign lines. */
export function parseJournalLine(line: string): JournalLineRecord | undefined {
  const text = line.trim()
  if (text === '' || text[0] !== '{') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isPlainRecord(value) || readOwn(value, 'v') !== 1) return undefined
  const type = readOwn(value, 'type')
  const callId = readOwn(value, 'callId')
  if (typeof type !== 'string' || typeof callId !== 'string') return undefined
  const ts = readOwn(value, 'ts')
  const rootCallId = optString(readOwn(value, 'rootCallId')) ?? callId
  const toolName = optString(readOwn(value, 'toolName')) ?? ''
  return {
    type,
    ts: typeof ts === 'number' && Number.isFinite(ts) ? ts : null,
    callId,
    rootCallId,
    parentCallId: optString(readOwn(value, 'parentCallId')),
    agentId: optString(readOwn(value, 'agentId')),
    toolName,
    raw: value,
  }
}
