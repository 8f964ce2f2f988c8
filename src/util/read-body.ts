// Reading an HTTP request body within a byte limit, shared by serve's HTTP face and the Streamable
// HTTP server transport.
import type { IncomingMessage } from 'node:http'

/** How much of a refused body is still read and dropped, and for how long, before the connection goes. */
export interface DrainBound {
  readonly bytes: number
  readonly ms: number
}

/** 64 MiB or 10 s: enough for a client that sent a big body by mistake to read why it was refused. */
export const REFUSED_BODY_DRAIN: DrainBound = { bytes: 64 * 1024 * 1024, ms: 10_000 }

/**
 * The request body as text, or undefined as soon as it passes `max` bytes (or announces more in
 * its Content-Length). The rest of a refused body is drained, never buffered: see
 * {@link drainRefusedBody}.
 */
export function readBodyWithin(
  req: IncomingMessage,
  max: number,
  drain: DrainBound = REFUSED_BODY_DRAIN,
): Promise<string | undefined> {
  if (Number(req.headers['content-length']) > max) {
    drainRefusedBody(req, drain)
    return Promise.resolve(undefined)
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= max) return void chunks.push(chunk)
      req.off('data', onData)
      chunks.length = 0
      drainRefusedBody(req, drain, size)
      resolve(undefined)
    }
    req.on('data', onData)
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.once('error', reject)
  })
}

/**
 * A lingering close: keep reading and dropping the body the client is still
 * sending while the refusal goes out. Closing at once makes the kernel answer the client's next
 * bytes with a reset, and a client that writes its whole body before reading (fetch, Node's http)
 * then sees EPIPE instead of the answer. Past the bound in bytes or time the socket is destroyed.
 */
export function drainRefusedBody(req: IncomingMessage, bound: DrainBound, alreadyRead = 0): void {
  if (req.complete) return
  let size = alreadyRead
  const stop = () => {
    clearTimeout(timer)
    req.off('data', onData)
    req.socket.destroy()
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > bound.bytes) stop()
  }
  const timer = setTimeout(stop, bound.ms)
  timer.unref()
  req.on('data', onData)
  req.once('end', () => clearTimeout(timer))
  req.once('close', () => clearTimeout(timer))
  req.resume()
}
