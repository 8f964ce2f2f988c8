// The viewer server's boundary: 127.0.0.1 only, a fixed set of routes (nothing reaches the file
// system), a CSP on every response, DNS-rebinding protection, and live events as the journal grows.
import { appendFile, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVED_PAGE_CSP } from '../../src/viewer/page.js'
import { startViewer, type ViewerServer } from '../../src/viewer/server.js'
import { decodeFrame } from './frames.js'

let dir: string
let journal: string
let server: ViewerServer

const line = (record: Record<string, unknown>) =>
  `${JSON.stringify({ v: 1, ts: 1, rootCallId: record.callId, parentCallId: null, agentId: 'a', ...record })}\n`

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-server-'))
  journal = join(dir, 'session.jsonl')
  await writeFile(join(dir, 'secret.txt'), 'do not serve me')
  await writeFile(
    journal,
    line({ type: 'call-started', callId: 'one', toolName: 'read_file', arguments: { path: 'a' } }),
  )
  server = await startViewer({ journal, pollMs: 50 })
})

afterAll(async () => {
  await server?.close()
  await rm(dir, { recursive: true, force: true })
})

interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

function get(path: string, init: { method?: string; host?: string; headers?: Record<string, string> } = {}) {
  return new Promise<Reply>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: init.method ?? 'GET',
        headers: { host: init.host ?? `127.0.0.1:${server.port}`, ...init.headers },
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          body += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** Read server-sent events until `until` says stop. */
function events(until: (frames: Array<{ event: string; data: unknown }>) => boolean) {
  return new Promise<Array<{ event: string; data: unknown }>>((resolve, reject) => {
    const frames: Array<{ event: string; data: unknown }> = []
    const req = request(
      { host: '127.0.0.1', port: server.port, path: '/events', headers: { host: `127.0.0.1:${server.port}` } },
      (res) => {
        let buffer = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buffer += chunk
          let end = buffer.indexOf('\n\n')
          while (end !== -1) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const event = /^event: (.*)$/m.exec(block)?.[1]
            const data = [...block.matchAll(/^data: (.*)$/gm)].map((m) => m[1])
            if (event !== undefined && data.length > 0) frames.push({ event, data: decodeFrame(data) })
            end = buffer.indexOf('\n\n')
          }
          if (until(frames)) {
            req.destroy()
            resolve(frames)
          }
        })
      },
    )
    req.on('error', (error) => {
      if (!req.destroyed) reject(error)
    })
    req.end()
  })
}

describe('toolgate view server', () => {
  it('listens on 127.0.0.1 only', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`)
  })

  it('serves the page, its two assets and the event stream, each under the CSP', async () => {
    const page = await get('/')
    expect(page.status).toBe(200)
    expect(page.headers['content-security-policy']).toBe(SERVED_PAGE_CSP)
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    expect(page.body).toContain('<script src="/viewer.js"></script>')
    expect(page.body).not.toMatch(/<script>/)
    const js = await get('/viewer.js')
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(js.headers['content-security-policy']).toBe(SERVED_PAGE_CSP)
    expect((await get('/viewer.css')).headers['content-type']).toBe('text/css; charset=utf-8')
  })

  it('serves nothing else: no path reaches the file system', async () => {
    for (const path of [
      '/secret.txt',
      '/session.jsonl',
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/viewer.js/..',
      '/assets/viewer.js',
    ]) {
      const reply = await get(path)
      expect(reply.status, path).toBe(404)
      expect(reply.body).not.toContain('do not serve me')
    }
    expect((await get('/?file=secret.txt')).body).not.toContain('do not serve me')
    expect((await get('/', { method: 'PUT' })).status).toBe(405)
    // Decisions are only accepted by a viewer started to approve.
    expect((await get('/decision', { method: 'POST' })).status).toBe(404)
  })

  it('refuses requests addressed to another host name (DNS rebinding)', async () => {
    expect((await get('/', { host: `evil.example:${server.port}` })).status).toBe(421)
    expect((await get('/events', { host: 'evil.example' })).status).toBe(421)
    expect((await get('/', { host: `localhost:${server.port}` })).status).toBe(200)
  })

  it("refuses another site's Origin with 403, through the Host/Origin check serve --http shares (issue 22)", async () => {
    const foreign = await get('/events', { headers: { origin: 'http://evil.example' } })
    expect(foreign.status).toBe(403)
    expect(foreign.body).toContain('Origin "http://evil.example" is not accepted')
    expect((await get('/', { headers: { origin: 'null' } })).status).toBe(403)
    expect((await get('/', { headers: { origin: `http://127.0.0.1:${server.port + 1}` } })).status).toBe(403)
    expect((await get('/', { headers: { origin: `http://localhost:${server.port}` } })).status).toBe(200)
    expect((await get('/', { host: `[::1]:${server.port}` })).status).toBe(200)
    expect((await get('/', { host: `127.0.0.1:${server.port + 1}` })).status).toBe(421)
  })

  it('streams a snapshot, then only the cards an appended line changed, then a reset on truncation', async () => {
    const frames = await events((f) => {
      if (f.length === 1) {
        void appendFile(
          journal,
          `${line({ type: 'result', callId: 'one', toolName: 'read_file', result: { isError: false, content: [] }, durationMs: 2 })}{"v":1,"type":"result","callId":"t`,
        )
      }
      if (f.length === 2) void truncate(journal, 0)
      return f.length === 3
    })
    expect(frames.map((f) => f.event)).toEqual(['snapshot', 'cards', 'snapshot'])
    const first = frames[0].data as { cards: Array<{ id: string; status: { kind: string } }> }
    expect(first.cards.map((c) => [c.id, c.status.kind])).toEqual([['one', 'running']])
    const update = frames[1].data as { cards: Array<{ id: string; status: { kind: string }; durationMs: number }> }
    // The half-written last line waits for its newline; the completed call is sent alone.
    expect(update.cards.map((c) => [c.id, c.status.kind, c.durationMs])).toEqual([['one', 'ok', 2]])
    expect((frames[2].data as { cards: unknown[] }).cards).toEqual([])
  })
})
