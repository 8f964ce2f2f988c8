// A 2026-07-28 HTTP leg served on node:http on 127.0.0.1, the way serve-http drives it.
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { authInfoFor } from '../../src/mcp/protocol/identity.js'
import type { ModernHttpLeg } from '../../src/mcp/server/server-modern.js'

/**
 * Serve `leg`: the body parsed, the caller's identity on `req.auth` (from the `x-test-subject`
 * header), anything not of the 2026 era answered 418. Its close joins `closers`; its URL is returned.
 */
export async function listenLeg(leg: ModernHttpLeg, closers: (() => Promise<void> | void)[]): Promise<string> {
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const body = text === '' ? undefined : JSON.parse(text)
      const subject = req.headers['x-test-subject']
      if (typeof subject === 'string')
        (req as IncomingMessage & { auth?: unknown }).auth = authInfoFor(
          { subject, groups: [], scopes: [], claims: {} },
          'token-id',
        )
      if (!(await leg.isModern(req, body))) return res.writeHead(418).end()
      await leg.handle(req, res, body)
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise<void>((resolve) => http.close(() => resolve())))
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`
}
