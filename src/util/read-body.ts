// Reading an HTTP request body within a byte limit, shared by serve's HTTP face and the Streamable
// HTTP server transport.
import type { IncomingMessage } from 'node:http'

/**
 * The request body as text, or undefined as soon as it passes `max` bytes (or announces more in
 * its Content-Length): the rest is drained, never buffered.
 */
export function readBodyWithin(req: IncomingMessage, max: number): Promise<string | undefined> {
  if (Number(req.headers['content-length']) > max) return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= max) return void chunks.push(chunk)
      req.off('data', onData)
      chunks.length = 0
      req.resume()
      resolve(undefined)
    }
    req.on('data', onData)
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.once('error', reject)
  })
}
