// A local HTTP server that speaks one provider API's wire protocol from a script (127.0.0.1 only).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage['headers']
  readonly body: unknown
}

export interface FakeReply {
  readonly status?: number
  readonly body: unknown
}

export interface FakeServer {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  readonly requests: FakeRequest[]
  /** Wire-protocol violations the server answered 400 for (a test asserts this stays empty). */
  readonly violations: string[]
  close(): Promise<void>
}

/**
 * `handle` answers every request; it may throw a string (a protocol violation), which becomes
 * a 400 in the shape `errorBody` gives and is recorded in `violations`.
 */
export async function startFakeServer(
  handle: (request: FakeRequest) => FakeReply,
  errorBody: (message: string) => unknown,
): Promise<FakeServer> {
  const requests: FakeRequest[] = []
  const violations: string[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = null
      try {
        body = text === '' ? null : JSON.parse(text)
      } catch {
        body = text
      }
      const request: FakeRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
      requests.push(request)
      let reply: FakeReply
      try {
        reply = handle(request)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        violations.push(message)
        reply = { status: 400, body: errorBody(message) }
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(reply.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Throw a protocol violation unless `condition` holds. */
export function expectWire(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message)
}
