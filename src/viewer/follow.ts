// Follows a growing journal file: records are handed over as their lines are appended, a partial
// last line waits for its newline, and a truncated or replaced file starts over from the top.
// Lines are split and parsed by the journal's own reader pieces (the parser `readJournal` uses);
// what this adds is the viewer's scheduling (file watcher plus poll) and the start-over on reset.
// A file the journal readers refuse (not a regular file, a line over the limit) stops the follower:
// reading on would only hit the same wall again.
import { type FSWatcher, watch } from 'node:fs'
import { JournalReadError, lineLimitOf, openJournalFile } from '../journal/open-journal.js'
import { JournalLineSplitter, parseJournalRecord } from '../journal/parse-record.js'
import type { JournalRecord } from '../journal/records.js'

/** Bytes read per step, so a huge journal is consumed in bounded pieces (the event loop turns
 * between them: a read is I/O). */
const CHUNK = 1 << 20

/** Where a line is in the file: its first byte and its length without the newline. */
export interface LineAt {
  offset: number
  length: number
}

export interface JournalFollowerOptions {
  /** The records of the lines completed since the last call, in file order, and where each line is. */
  onRecords(records: JournalRecord[], places: LineAt[]): void
  /** The file shrank or was replaced: everything handed over so far is void. */
  onReset(): void
  /**
   * A read failed. A `JournalReadError` (not a regular file, a line over `maxLineBytes`) stops the
   * follower; after any other failure (the file vanished, permissions) following continues.
   */
  onError?(error: unknown): void
  /** Poll interval backing up the file watcher, in ms. Default 250. */
  pollMs?: number
  /** The longest line accepted, in bytes (as `readJournal`'s option). Default 64 MiB. */
  maxLineBytes?: number
}

export class JournalFollower {
  private offset = 0
  /** Bytes after the last newline read (a line still being written). */
  private pendingBytes = 0
  private ino: number | undefined
  private readonly splitter: JournalLineSplitter
  private running: Promise<void> | undefined
  private again = false
  private watcher: FSWatcher | undefined
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Set by `start` until the first piece is read. */
  private firstPiece: (() => void) | undefined
  private caughtUp: Promise<void> = Promise.resolve()

  constructor(
    readonly path: string,
    private readonly options: JournalFollowerOptions,
  ) {
    this.splitter = new JournalLineSplitter(path, lineLimitOf(options.maxLineBytes, 'JournalFollower'))
  }

  /**
   * Start reading; resolves once the first piece of the file is handed over (or all of it, when
   * smaller), so a caller can serve while the rest is read. `caughtUp` tells when the file as it was
   * is read whole; following goes on after that.
   */
  async start(): Promise<void> {
    const first = new Promise<void>((resolve) => {
      this.firstPiece = resolve
    })
    this.caughtUp = this.poll().then(() => this.watch())
    await Promise.race([first, this.caughtUp])
    this.firstPiece = undefined
  }

  /** Resolves when what the file held at `start` has been read (or reading stopped). */
  whenCaughtUp(): Promise<void> {
    return this.caughtUp
  }

  private watch(): void {
    if (this.closed) return
    try {
      this.watcher = watch(this.path, { persistent: false }, () => void this.poll())
      this.watcher.on('error', () => {
        this.watcher?.close()
        this.watcher = undefined
      })
    } catch {
      // Polling alone still follows the file.
    }
    this.timer = setInterval(() => void this.poll(), this.options.pollMs ?? 250)
    this.timer.unref()
  }

  /** Read whatever was appended since the last read. Concurrent calls coalesce. */
  poll(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true
      return this.running
    }
    this.running = (async () => {
      try {
        do {
          this.again = false
          await this.step()
        } while (this.again && !this.closed)
      } catch (error) {
        if (error instanceof JournalReadError) this.close()
        this.options.onError?.(error)
      } finally {
        this.running = undefined
      }
    })()
    return this.running
  }

  private reset(): void {
    this.offset = 0
    this.pendingBytes = 0
    this.splitter.reset()
    this.options.onReset()
  }

  private async step(): Promise<void> {
    const handle = await openJournalFile(this.path)
    try {
      const info = await handle.stat()
      if ((this.ino !== undefined && info.ino !== this.ino) || info.size < this.offset) this.reset()
      this.ino = info.ino
      if (info.size === this.offset) return
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK, info.size - this.offset))
      while (this.offset < info.size && !this.closed) {
        const { bytesRead } = await handle.read(
          buffer,
          0,
          Math.min(buffer.length, info.size - this.offset),
          this.offset,
        )
        if (bytesRead === 0) break
        // The line in progress began before this piece, by what the splitter still holds.
        let lineStart = this.offset - this.pendingBytes
        this.offset += bytesRead
        const records: JournalRecord[] = []
        const places: LineAt[] = []
        try {
          for (const text of this.splitter.lines(buffer.subarray(0, bytesRead))) {
            const length = this.splitter.lastLineBytes
            const record = parseJournalRecord(text)
            if (record !== undefined) {
              records.push(record)
              places.push({ offset: lineStart, length })
            }
            lineStart += length + 1
          }
          this.pendingBytes = this.offset - lineStart
        } finally {
          // The lines completed before an over-long one are still handed over.
          if (records.length > 0) this.options.onRecords(records, places)
        }
        this.firstPiece?.()
      }
    } finally {
      await handle.close()
    }
  }

  /** Stop following. */
  close(): void {
    this.closed = true
    this.watcher?.close()
    if (this.timer !== undefined) clearInterval(this.timer)
  }
}
