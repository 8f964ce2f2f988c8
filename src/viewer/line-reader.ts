// Reads single journal lines again by where they are: the live viewer keeps each call's place in
// the file instead of its parsed records, and builds a card from its lines when it sends it.
import { closeSync, constants, openSync, readSync } from 'node:fs'
import type { LineAt } from './follow.js'
import { type JournalLineRecord, parseJournalLine } from './journal-line.js'

export class JournalLineReader {
  private fd: number | undefined
  private closed = false

  constructor(private readonly path: string) {}

  /** Open the file now (right after the follower read it, so the places point into this file). */
  open(): void {
    if (this.fd !== undefined || this.closed) return
    // Non-blocking, so a path replaced by a FIFO cannot hang the open; reads of a regular file block as usual.
    this.fd = openSync(this.path, constants.O_RDONLY | constants.O_NONBLOCK)
  }

  /** The record of the line at `at`; `undefined` when it cannot be read or is no longer a record. */
  readonly read = (at: LineAt): JournalLineRecord | undefined => {
    try {
      this.open()
      if (this.fd === undefined) return undefined
      const buffer = Buffer.allocUnsafe(at.length)
      let done = 0
      while (done < at.length) {
        const n = readSync(this.fd, buffer, done, at.length - done, at.offset + done)
        if (n === 0) return undefined
        done += n
      }
      return parseJournalLine(buffer.toString('utf8'))
    } catch {
      return undefined
    }
  }

  close(): void {
    this.closed = true
    if (this.fd === undefined) return
    closeSync(this.fd)
    this.fd = undefined
  }
}
