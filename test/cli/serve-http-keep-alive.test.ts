// `serve --http` leaves idle keep-alive connections to the client to close. A client reuses a
// connection it has kept idle up to the server's advertised `Keep-Alive: timeout` (or its own default,
// fetch's 4 s, when none is advertised); when the server closes sooner, or within a second or two of
// that on a loaded machine, the request the client just wrote fails with "other side closed" or a
// reset. Here a raw HTTP/1.1 connection sits idle 3 s past what the client may rely on, then sends
// the next request of its session, which must be answered on the same connection. The
// `--metrics-port` listener holds its scrapers' connections the same way (issue 35, Performance).
import { afterAll, beforeAll, describe, it } from 'vitest'
import { type Connected, serveHttp, tempDir, writeConfig } from './helpers.js'
import { Connection } from './raw-connection.js'

/** What undici (fetch) keeps an idle connection when the server advertises nothing. */
const FETCH_DEFAULT_IDLE_MS = 4_000
/** Scheduling lag a loaded machine adds between the server's last write and the client's next request. */
const LAG_MS = 3_000

let cleanup: () => Promise<void>
let s: Connected
let port: number
let metricsPort: number

beforeAll(async () => {
  const made = await tempDir()
  cleanup = made.cleanup
  s = await serveHttp(['--config', await writeConfig(made.dir, { root: '.' }), '--metrics-port', '0'])
  port = Number(new URL(s.url as string).port)
  metricsPort = Number(/serving metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(s.stderr())?.[1])
})
afterAll(async () => {
  await s.close()
  await cleanup()
})

/** The idle time the response lets a client rely on: its Keep-Alive timeout, or fetch's default. */
function reliedOnMs(headers: Headers): number {
  const advertised = /timeout=(\d+)/.exec(headers.get('keep-alive') ?? '')
  return advertised ? Number(advertised[1]) * 1000 : FETCH_DEFAULT_IDLE_MS
}

// Both describes' cases run at once, each on its own connection to the one gateway: two of them sit
// idle for seconds on purpose, and those idle seconds need not follow one another.
describe.concurrent('serve --http keep-alive', () => {
  it('answers a request sent on a connection idle past what the client may rely on, plus lag', async ({ expect }) => {
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

  it('closes the connection when the client asks it to, advertising no keep-alive', async ({ expect }) => {
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

describe.concurrent('the --metrics-port listener keeps idle connections as serve --http does', () => {
  it('advertises timeout=5 and answers a scrape sent on a connection idle past it, plus lag', async ({ expect }) => {
    expect(metricsPort).toBeGreaterThan(0)
    const connection = await Connection.open(metricsPort)
    try {
      const first = await connection.get('/metrics')
      expect(first.status).toBe(200)
      expect(first.headers.get('connection')).toBe('keep-alive')
      expect(first.headers.get('keep-alive')).toBe('timeout=5')
      await new Promise((resolve) => setTimeout(resolve, reliedOnMs(first.headers) + LAG_MS))
      const next = await connection.get('/metrics')
      expect(next.status).toBe(200)
      // Refusals keep the connection alike.
      const browser = await connection.get('/metrics', { 'sec-fetch-site': 'same-origin' })
      expect(browser.status).toBe(403)
      expect(browser.headers.get('keep-alive')).toBe('timeout=5')
    } finally {
      connection.close()
    }
  }, 30_000)

  it('closes the connection when the scraper asks it to, advertising no keep-alive', async ({ expect }) => {
    const connection = await Connection.open(metricsPort)
    try {
      const last = await connection.get('/metrics', { connection: 'close' })
      expect(last.status).toBe(200)
      expect(last.headers.get('connection')).toBe('close')
      expect(last.headers.get('keep-alive')).toBeNull()
    } finally {
      connection.close()
    }
  })
})
