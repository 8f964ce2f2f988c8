// One JSON-RPC message written as a line, as both stdio transports send them.
import type { Writable } from 'node:stream'
import type { JSONRPCMessage } from './wire-types.js'

/** The promise of a send that went through at once, or had nothing to do. */
export const SENT: Promise<void> = Promise.resolve()

/**
 * Write `message` and its newline; resolves once the stream took it (at once, or at its next
 * `drain`), rejects when the write throws. Most writes go through at once: they share one settled
 * promise instead of making one each.
 */
export function writeLine(stream: Writable, message: JSONRPCMessage): Promise<void> {
  let flushed: boolean
  try {
    flushed = stream.write(`${JSON.stringify(message)}\n`)
  } catch (error) {
    return Promise.reject(error)
  }
  return flushed ? SENT : new Promise((resolve) => stream.once('drain', resolve))
}

/** Streams corked until the end of this turn of the event loop. */
const corked = new WeakSet<Writable>()

/**
 * {@link writeLine}, the stream corked until the end of this turn of the event loop (the check
 * phase, after the I/O callbacks of the turn have run): the requests of many callers that arrive
 * together go to an upstream's stdin in one write instead of one each, so under concurrency the
 * upstream is woken once per batch rather than once per message.
 */
export function writeLineBatched(stream: Writable, message: JSONRPCMessage): Promise<void> {
  if (!corked.has(stream)) {
    corked.add(stream)
    stream.cork()
    setImmediate(() => {
      corked.delete(stream)
      stream.uncork()
    })
  }
  return writeLine(stream, message)
}
