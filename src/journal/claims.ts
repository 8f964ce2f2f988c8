// Claims beside a journal: before a resumed call runs, its resume claims it with a file created
// exclusively (O_CREAT | O_EXCL), so among processes on one machine exactly one claim succeeds.
import { createHash } from 'node:crypto'
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import type { JsonValue } from '../contract/json-value.js'

/** What identifies one call waiting in a suspended turn: the same in every resume of that state. */
export interface ClaimedCall {
  /**
   * The stored turn the call waits in, when there is one: a later turn that reuses a call id is
   * another call, with a claim of its own.
   */
  readonly turnId?: string
  readonly agentId: string | null
  readonly callId: string
  readonly toolName: string
  readonly arguments: JsonValue
}

/** The record a claim file holds. */
export interface CallClaimRecord {
  readonly v: 1
  readonly type: 'call-claimed'
  readonly ts: number
  readonly pid: number
  readonly callId: string
  readonly agentId: string | null
  readonly toolName: string
}

/** The outcome of {@link claimCall}: this process may run the call, or another one claimed it first. */
export type CallClaim =
  | { readonly won: true; readonly path: string; release(): void }
  | { readonly won: false; readonly path: string; readonly holder: CallClaimRecord | undefined }

/** The folder of claim files beside the journal at `journalPath`. */
export function claimsDirectory(journalPath: string): string {
  return `${journalPath}.claims`
}

/**
 * Claim `call` for this process. The claim file's name is a digest of the call's identity (agent,
 * id, tool, arguments), so two resumes of one state race for one name and the file system picks
 * the winner. A claim stays once taken: the call counts as run (or as running, or as lost in a
 * crash) for every later resume, which then skips it. `release` gives the claim back, for a call
 * that suspended again instead of running.
 */
export function claimCall(journalPath: string, call: ClaimedCall): CallClaim {
  const directory = claimsDirectory(journalPath)
  mkdirSync(directory, { recursive: true })
  const path = `${directory}/${claimDigest(call)}.json`
  let fd: number
  try {
    fd = openSync(path, 'wx', 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return { won: false, path, holder: readClaim(path) }
  }
  const record: CallClaimRecord = {
    v: 1,
    type: 'call-claimed',
    ts: Date.now(),
    pid: process.pid,
    callId: call.callId,
    agentId: call.agentId,
    toolName: call.toolName,
  }
  try {
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8')
    let offset = 0
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return {
    won: true,
    path,
    release: () => {
      try {
        unlinkSync(path)
      } catch {
        // Already gone: nothing is held.
      }
    },
  }
}

/** The digest naming a call's claim: one call has one claim in every store (file name, row key). */
export function claimDigest(call: ClaimedCall): string {
  let identity: string
  // Without a turn the digest is the one claims always had (claims taken before turns were keyed stay valid).
  const turn = call.turnId === undefined ? [] : [{ turn: call.turnId }]
  try {
    identity = JSON.stringify([call.agentId, call.callId, call.toolName, call.arguments, ...turn])
  } catch {
    // Arguments nested too deeply to serialize: the id, agent and tool still name the call.
    identity = JSON.stringify([call.agentId, call.callId, call.toolName, ...turn])
  }
  return createHash('sha256').update(identity).digest('hex')
}

/** The winner's record; undefined while the winner is still writing it (or it was damaged). */
function readClaim(path: string): CallClaimRecord | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'))
    if (parsed !== null && typeof parsed === 'object' && (parsed as { type?: unknown }).type === 'call-claimed')
      return parsed as CallClaimRecord
  } catch {
    // Being written, or not a claim record: the claim still stands.
  }
  return undefined
}
