// The lingering close of a refused body (issue 36, item 14) is bounded: past its byte bound the
// connection is dropped rather than read on.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { readBodyWithin } from '../../src/util/read-body.js'

const closers: (() => void)[] = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

async function server(drainBytes: number): Promise<{ url: string; readAtClose: () => number | undefined }> {
  let readAtClose: number | undefined
  const http = createServer(async (req, res) => {
    req.socket.once('close', () => {
      readAtClose = req.socket.bytesRead
    })
    const text = await readBodyWithin(req, 1000, { bytes: drainBytes, ms: 30_000 })
    res.writeHead(text === undefined ? 413 : 200).end(text === undefined ? 'too large' : 'ok')
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  closers.push(() => http.close())
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/`, readAtClose: () => readAtClose }
}

function post(url: string, body: Buffer): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent: false })
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode }))
    })
    req.on('error', (error) => resolve({ error: String(error) }))
    req.end(body)
  })
}

describe('readBodyWithin: a refused body', () => {
  it('is drained within the bound, so the client reads the 413', async () => {
    const { url } = await server(16 * 1024 * 1024)
    expect(await post(url, Buffer.alloc(4 * 1024 * 1024))).toEqual({ status: 413 })
  })

  it('past the byte bound, the connection is dropped instead of read on', async () => {
    const { url, readAtClose } = await server(64 * 1024)
    await post(url, Buffer.alloc(32 * 1024 * 1024))
    await expect.poll(readAtClose, { timeout: 10_000 }).toBeDefined()
    // Far less than the 32 MiB sent: the server stopped reading once past its 64 KiB bound.
    expect(readAtClose()).toBeLessThan(8 * 1024 * 1024)
  })
})
