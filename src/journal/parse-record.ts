// The one parser of journal lines, shared by `readJournal` and the session viewer's live reader:
// a line is a record only when it is a JSON object with a known `v` and `type` and a string `callId`.
import { DEFAULT_MAX_LINE_BYTES, JournalReadError } from './open-journal.js'
import type { JournalRecord, JournalRecordType } from './records.js'

/** Why a line was not a record: `malformed` (not a record at all) or `unknown` (a newer `v`/`type`). */
export type JournalLineProblem = 'malformed' | 'unknown'

const KNOWN: ReadonlySet<string> = new Set<JournalRecordType>([
  'call-started',
  'approval-asked',
  'approval-answered',
  'result',
  'code-dispatch',
  'turn-started',
  'model-reply',
  'step-ended',
  'turn-ended',
])

/**
 * Parse one complete line (without its newline). A blank line is `undefined` without a problem;
 * any other line that is not a record is reported through `skip`. Unknown fields are kept.
 */
export function parseJournalRecord(
  text: string,
  skip?: (text: string, reason: JournalLineProblem) => void,
): JournalRecord | undefined {
  if (text.trim() === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    skip?.(text, 'malformed')
    return undefined
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    skip?.(text, 'malformed')
    return undefined
  }
  const { v, type, callId } = parsed as { v?: unknown; type?: unknown; callId?: unknown }
  if (typeof v !== 'number' || typeof type !== 'string' || typeof callId !== 'string') {
    skip?.(text, 'malformed')
    return undefined
  }
  if (v !== 1 || !KNOWN.has(type)) {
    skip?.(text, 'unknown')
    return undefined
  }
  return parsed as JournalRecord
}

/**
 * Splits bytes read from a journal into complete lines. A line is handed over only once its
 * newline arrived; the incomplete tail is copied, so the caller may reuse its read buffer. A line
 * longer than `maxLineBytes` throws as soon as that many bytes are buffered, so a file without
 * newlines never grows memory past the limit.
 */
export class JournalLineSplitter {
  private pending: Buffer[] = []
  private pendingBytes = 0
  private line = 0
  /** The byte length of the line `lines` yielded last (without its newline): the viewer keeps
   * where each record is instead of the record. */
  lastLineBytes = 0

  constructor(
    /** The journal's path, named in the error. */
    private readonly path: string,
    private readonly maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
  ) {}

  /** The complete lines `chunk` finishes, as text (decoded whole, so no character is split). */
  *lines(chunk: Buffer): Generator<string> {
    let start = 0
    for (;;) {
      const end = chunk.indexOf(0x0a, start)
      if (end === -1) break
      const piece = chunk.subarray(start, end)
      this.line++
      this.check(this.pendingBytes + piece.length)
      const bytes = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece])
      this.pending = []
      this.pendingBytes = 0
      start = end + 1
      this.lastLineBytes = bytes.length
      yield bytes.toString('utf8')
    }
    if (start < chunk.length) {
      this.check(this.pendingBytes + chunk.length - start, this.line + 1)
      this.pending.push(Buffer.from(chunk.subarray(start)))
      this.pendingBytes += chunk.length - start
    }
  }

  private check(bytes: number, line = this.line): void {
    if (bytes <= this.maxLineBytes) return
    throw new JournalReadError(
      this.path,
      `line ${line} is longer than ${this.maxLineBytes} bytes (the reader's maxLineBytes); the journal is not a ` +
        'journal, or it needs a higher limit',
    )
  }

  /** The bytes after the last newline (a torn or still-being-written line), as text. */
  rest(): string {
    return this.pending.length === 0 ? '' : Buffer.concat(this.pending).toString('utf8')
  }

  /** Forget everything read so far (the file was truncated or replaced). */
  reset(): void {
    this.pending = []
    this.pendingBytes = 0
    this.line = 0
  }
}
