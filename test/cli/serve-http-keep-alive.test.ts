// `serve --http` leaves idle keep-alive connections to the client to close. A client reuses a
// connection it has kept idle up to the server's advertised `Keep-Alive: timeout` (or its own default,
// fetch's 4 s, when none is advertised); when the server closes sooner, or within a second or two of
// that on a loaded machine, the request the client just wrote fails with "other side closed" or a
// reset. Here a raw HTTP/1.1 connection sits idle 3 s past what the client may rely on, then sends
// the next request of its session, which must be answered on the same connection.
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveHttp, tempDir, writeConfig } from './helpers.js'

/** What undici (fetch) keeps an idle connection when the server advertises nothing. */
const FETCH_DEFAULT_IDLE_MS = 4_000
/** Scheduling lag a loaded machine adds between the server's last write and the client's next request. */
const LAG_MS = 3_000

let cleanup: () => Promise<void>
let s: Connected
let port: number

beforeAll(async () => {
  const made = await tempDir()
  cleanup = made.cleanup
  s = await serveHttp(['--config', await writeConfig(made.dir, { root: '.' })])
  port = Number(new URL(s.url as string).port)
})
afterAll(async () => {
  await s.close()
  await cleanup()
})

/** One raw HTTP/1.1 connection: write a request, read its response head (and the body, when it is chunked). */
class Connection {
  private buffered = ''
  private ended = false
  private waiter: (() => void) | undefined
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      this.buffered += chunk
      this.waiter?.()
    })
    const over = () => {
      this.ended = true
      this.waiter?.()
    }
    socket.on('end', over)
    socket.on('close', over)
    socket.on('error', over)
  }

  static open(at: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(at, '127.0.0.1', () => resolve(new Connection(socket)))
      socket.once('error', reject)
    })
  }

  /** POST `body` to /mcp; the response's status and headers once it is complete. */
  async post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers }> {
    const text = JSON.stringify(body)
    const lines = [
      'POST /mcp HTTP/1.1',
      `host: 127.0.0.1:${port}`,
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      `content-length: ${Buffer.byteLength(text)}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ]
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n${text}`)
    const head = await this.until(() => this.buffered.indexOf('\r\n\r\n'))
    const [statusLine, ...fields] = this.buffered.slice(0, head).split('\r\n')
    const parsed = new Headers(fields.map((field) => field.split(/:\s*/, 2) as [string, string]))
    let rest = head + 4
    if (parsed.get('transfer-encoding') === 'chunked') rest = (await this.until(() => this.endOfChunks(head + 4))) + 5
    else rest += Number(parsed.get('content-length') ?? 0)
    this.buffered = this.buffered.slice(rest)
    return { status: Number(statusLine.split(' ')[1]), headers: parsed }
  }

  close(): void {
    this.socket.destroy()
  }

  private endOfChunks(from: number): number {
    const at = this.buffered.indexOf('\r\n0\r\n\r\n', from - 2)
    return at < 0 ? -1 : at + 2
  }

  /** Wait until `find` gives an index; fails when the server closes the connection first. */
  private async until(find: () => number): Promise<number> {
    for (;;) {
      const at = find()
      if (at >= 0) return at
      if (this.ended) throw new Error('the server closed the connection')
      await new Promise<void>((resolve) => {
        this.waiter = resolve
      })
      this.waiter = undefined
    }
  }
}

/** The idle time the response lets a client rely on: its Keep-Alive timeout, or fetch's default. */
function reliedOnMs(headers: Headers): number {
  const advertised = /timeout=(\d+)/.exec(headers.get('keep-alive') ?? '')
  return advertised ? Number(advertised[1]) * 1000 : FETCH_DEFAULT_IDLE_MS
}

describe('serve --http keep-alive', () => {
  it('answers a request sent on a connection idle past what the client may rely on, plus lag', async () => {
    const connection = await Connection.open(port)
    try {
      const init = await connection.post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
      })
      expect(init.status).toBe(200)
      expect(init.headers.get('connection')).toBe('keep-alive')
      const session = init.headers.get('mcp-session-id') as string
      await new Promise((resolve) => setTimeout(resolve, reliedOnMs(init.headers) + LAG_MS))
      const next = await connection.post(
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      )
      expect(next.status).toBe(202)
    } finally {
      connection.close()
    }
  }, 30_000)

  it('closes the connection when the client asks it to, advertising no keep-alive', async () => {
    const connection = await Connection.open(port)
    try {
      const refused = await connection.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { connection: 'close' })
      expect(refused.status).toBe(400)
      expect(refused.headers.get('connection')).toBe('close')
      expect(refused.headers.get('keep-alive')).toBeNull()
    } finally {
      connection.close()
    }
  })
})
