import { setTimeout as sleep } from 'node:timers/promises'
import { ConfigError } from '../errors/config-error.js'
import { lineLimitOf, openJournalFile } from './open-journal.js'
import { JournalLineSplitter, parseJournalRecord } from './parse-record.js'
import type { JournalRecord } from './records.js'

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
  /**
   * The longest line accepted, in bytes. A longer line ends the read with a `JournalReadError`
   * (code `INVALID_JOURNAL`) as soon as that many bytes of it are buffered. Default 64 MiB.
   */
  readonly maxLineBytes?: number
}

const CHUNK = 1 << 16

/**
 * The records of a journal written by `Journal`, in file order. Tolerates a torn last line (skipped,
 * reported as `torn`), skips lines it cannot use (reported through `onSkip`), and ignores record
 * types and fields it does not know. Safe while another process appends: it reads only up to the
 * last complete line, and with `follow` it waits for more. Anything but a regular file (a device such
 * as `/dev/zero`, a FIFO, a directory) is refused with a `JournalReadError` before a byte is read.
 */
export async function* readJournal(path: string, options: ReadJournalOptions = {}): AsyncGenerator<JournalRecord> {
  if (typeof path !== 'string' || path === '') throw new ConfigError('readJournal(path)', 'expected a non-empty string')
  const { follow = false, signal, onSkip } = options
  const pollIntervalMs = options.pollIntervalMs ?? 100
  if (!(pollIntervalMs > 0))
    throw new ConfigError('readJournal(path, options).pollIntervalMs', 'expected a positive number')
  const maxLineBytes = lineLimitOf(options.maxLineBytes, 'readJournal(path, options)')
  const handle = await openJournalFile(path)
  try {
    const buffer = Buffer.alloc(CHUNK)
    let position = 0
    const splitter = new JournalLineSplitter(path, maxLineBytes)
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
        for (const text of splitter.lines(buffer.subarray(0, bytesRead))) {
          lineNumber++
          const record = parseJournalRecord(text, skip)
          if (record !== undefined) yield record
        }
        continue
      }
      if (!follow || signal?.aborted) break
      try {
        await sleep(pollIntervalMs, undefined, { signal })
      } catch {
        break // aborted
      }
    }
    const torn = splitter.rest()
    if (torn.trim() !== '') {
      lineNumber++
      skip(torn, 'torn')
    }
  } finally {
    await handle.close()
  }
}
