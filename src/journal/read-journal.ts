import { open } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import type { JournalRecord, JournalRecordType } from './records.js'

/** A line `readJournal` skipped, and why. */
export interface SkippedJournalLine {
  /** 1-based line number in the file. */
  readonly line: number
  /** The line's text, cut to 200 characters. */
  readonly text: string
  /**
   * `torn`: the last line has no newline (a crash mid-write, or a write still in progress);
   * `malformed`: not a JSON object with `v` and `type`; `unknown`: a `v`/`type` this reader does not know.
   */
  readonly reason: 'torn' | 'malformed' | 'unknown'
}

/** Options of {@link readJournal}. */
export interface ReadJournalOptions {
  /**
   * Keep reading as the journal grows (like `tail -f`) until `signal` aborts. A line is yielded only
   * once its newline is written, so a record being written is never seen half-done.
   */
  readonly follow?: boolean
  /** Ends a `follow` read (the iteration returns; it does not throw). */
  readonly signal?: AbortSignal
  /** How often a `follow` read looks for growth. Default 100 ms. */
  readonly pollIntervalMs?: number
  /** Told about every line that is not yielded. */
  readonly onSkip?: (skipped: SkippedJournalLine) => void
}

const KNOWN: ReadonlySet<string> = new Set<JournalRecordType>([
  'call-started',
  'approval-asked',
  'approval-answered',
  'result',
  'code-dispatch',
])
const CHUNK = 1 << 16

/**
 * The records of a journal written by `Journal`, in file order. Tolerates a torn last line (skipped,
 * reported as `torn`), skips lines it cannot use (reported through `onSkip`), and ignores record
 * types and fields it does not know. Safe while another process appends: it reads only up to the
 * last complete line, and with `follow` it waits for more.
 */
export async function* readJournal(path: string, options: ReadJournalOptions = {}): AsyncGenerator<JournalRecord> {
  if (typeof path !== 'string' || path === '') throw new TypeError('readJournal(path): path must be a non-empty string')
  const { follow = false, signal, onSkip } = options
  const pollIntervalMs = options.pollIntervalMs ?? 100
  if (!(pollIntervalMs > 0)) throw new TypeError('readJournal(path, options): pollIntervalMs must be a positive number')
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.alloc(CHUNK)
    let position = 0
    let pending: Buffer[] = []
    let lineNumber = 0
    const skip = (text: string, reason: SkippedJournalLine['reason']) => {
      try {
        onSkip?.({ line: lineNumber, text: text.length > 200 ? `${text.slice(0, 200)}…` : text, reason })
      } catch {
        // An observer's failure must not end the read.
      }
    }
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, position)
      if (bytesRead > 0) {
        position += bytesRead
        let start = 0
        for (;;) {
          const end = buffer.indexOf(0x0a, start)
          if (end === -1 || end >= bytesRead) break
          const piece = buffer.subarray(start, end)
          const bytes = pending.length === 0 ? piece : Buffer.concat([...pending, piece])
          pending = []
          start = end + 1
          lineNumber++
          const record = parseLine(bytes.toString('utf8'), skip)
          if (record !== undefined) yield record
        }
        // Copy the incomplete tail: the buffer is reused for the next chunk.
        if (start < bytesRead) pending.push(Buffer.from(buffer.subarray(start, bytesRead)))
        continue
      }
      if (!follow || signal?.aborted) break
      try {
        await sleep(pollIntervalMs, undefined, { signal })
      } catch {
        break // aborted
      }
    }
    if (pending.length > 0) {
      const text = Buffer.concat(pending).toString('utf8')
      if (text.trim() !== '') {
        lineNumber++
        skip(text, 'torn')
      }
    }
  } finally {
    await handle.close()
  }
}

function parseLine(
  text: string,
  skip: (text: string, reason: SkippedJournalLine['reason']) => void,
): JournalRecord | undefined {
  if (text.trim() === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    skip(text, 'malformed')
    return undefined
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    skip(text, 'malformed')
    return undefined
  }
  const { v, type, callId } = parsed as { v?: unknown; type?: unknown; callId?: unknown }
  if (typeof v !== 'number' || typeof type !== 'string' || typeof callId !== 'string') {
    skip(text, 'malformed')
    return undefined
  }
  if (v !== 1 || !KNOWN.has(type)) {
    skip(text, 'unknown')
    return undefined
  }
  return parsed as JournalRecord
}
