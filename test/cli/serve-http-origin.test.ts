// `toolgate serve --http` against DNS rebinding and cross-site pages (issue 22): only loopback Host
// names with the bound port and no Origin or a loopback Origin are served unless configured.
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/gateway/config.js'
import { type Connected, runCli, serveHttp, tempDir, writeConfig } from './helpers.js'

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(() => cleanup())

interface Reply {
  status: number
  body: string
  session: string | undefined
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'forger', version: '1' } },
}

/** POST one JSON-RPC message to the endpoint with the given (possibly forged) headers. */
function post(url: string, message: unknown, headers: Record<string, string | undefined>): Promise<Reply> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        path: '/mcp',
        method: 'POST',
        headers: Object.fromEntries(
          Object.entries({
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...headers,
          }).filter((entry): entry is [string, string] => entry[1] !== undefined),
        ),
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          body += chunk
        })
        res.on('end', () => {
          const id = res.headers['mcp-session-id']
          resolve({ status: res.statusCode ?? 0, body, session: typeof id === 'string' ? id : undefined })
          // A refusal can come before the body is sent: end the connection with the answer, so no
          // write of it outlives the request (the gateway may be stopped next).
          if (!req.writableFinished) req.destroy()
        })
      },
    )
    req.on('error', reject)
    req.end(JSON.stringify(message))
  })
}

describe('serve --http: the default Host/Origin policy', () => {
  let s: Connected
  let port: number
  beforeAll(async () => {
    s = await serveHttp(['--root', dir])
    port = Number(new URL(s.url!).port)
  })
  afterAll(() => s.close())

  it('refuses a forged Host and a foreign Origin with 403 and a body that says why', async () => {
    const rebound = await post(s.url!, INITIALIZE, { host: 'evil.example', origin: 'http://evil.example' })
    expect(rebound.status).toBe(403)
    expect(rebound.session).toBeUndefined()
    expect(JSON.parse(rebound.body).error.message).toMatch(/Host "evil\.example" is not accepted/)

    const crossSite = await post(s.url!, INITIALIZE, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' })
    expect(crossSite.status).toBe(403)
    expect(JSON.parse(crossSite.body).error.message).toMatch(/Origin "http:\/\/evil\.example" is not accepted/)

    for (const headers of [
      { host: `127.0.0.1:${port + 1}` },
      { host: `evil.example:${port}` },
      { host: '127.0.0.1' },
      { host: `127.0.0.1:${port}`, origin: 'null' },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port + 1}` },
      { host: `127.0.0.1:${port}`, origin: `https://localhost:${port}` },
    ])
      expect((await post(s.url!, INITIALIZE, headers)).status, JSON.stringify(headers)).toBe(403)
  })

  it('accepts each loopback name with the bound port, with no Origin or a loopback Origin', async () => {
    for (const headers of [
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      { host: `[::1]:${port}`, origin: `http://[::1]:${port}` },
      { host: `LOCALHOST:${port}`, origin: `http://127.0.0.1:${port}` },
    ]) {
      const reply = await post(s.url!, INITIALIZE, headers)
      expect(reply.status, JSON.stringify(headers)).toBe(200)
      expect(reply.session).toBeTypeOf('string')
    }
  })

  it('an open session is not reachable under a forged Host either', async () => {
    const opened = await post(s.url!, INITIALIZE, { host: `127.0.0.1:${port}` })
    const session = opened.session!
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }
    const forged = await post(s.url!, list, { host: 'evil.example', 'mcp-session-id': session })
    expect(forged.status).toBe(403)
    expect(forged.body).not.toContain('read_file')
  })
})

describe('serve --http: extra hosts and origins only when configured', () => {
  let s: Connected
  let port: number
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      { root: '.', http: { allowedHosts: ['cfg.test:1234'], allowedOrigins: ['https://cfg.example'] } },
      'http.json',
    )
    s = await serveHttp(['--config', config, '--allow-host', 'gateway.test', '--allow-origin', 'https://app.example'])
    port = Number(new URL(s.url!).port)
  })
  afterAll(() => s.close())

  it('accepts the configured names and origins from the file and the flags, nothing else', async () => {
    for (const headers of [
      { host: `gateway.test:${port}`, origin: 'https://app.example' },
      { host: 'gateway.test' },
      { host: 'cfg.test:1234', origin: 'https://cfg.example' },
      { host: `127.0.0.1:${port}`, origin: 'https://app.example' },
    ])
      expect((await post(s.url!, INITIALIZE, headers)).status, JSON.stringify(headers)).toBe(200)
    for (const headers of [
      { host: `cfg.test:${port}` },
      { host: `sub.gateway.test:${port}` },
      { host: `127.0.0.1:${port}`, origin: 'https://other.example' },
      { host: `127.0.0.1:${port}`, origin: 'http://app.example' },
    ])
      expect((await post(s.url!, INITIALIZE, headers)).status, JSON.stringify(headers)).toBe(403)
  })
})

describe('serve --http: the message size limit', () => {
  let s: Connected
  beforeAll(async () => {
    s = await serveHttp(['--root', dir, '--max-message-bytes', '100000'])
  })
  afterAll(() => s.close())

  it('answers a body over --max-message-bytes with 413 and a JSON-RPC error, then serves as usual', async () => {
    const host = new URL(s.url!).host
    const big = { ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'p'.repeat(200_000) } }
    const refused = await post(s.url!, big, { host })
    expect(refused.status).toBe(413)
    expect(JSON.parse(refused.body).error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/message too large: over the limit of 100000 bytes/),
    })
    expect(refused.session).toBeUndefined()
    expect((await post(s.url!, INITIALIZE, { host })).status).toBe(200)
  })
})

/** A POST of `body` with Node's http client: the status and body it read, or the error it got. */
function rawPost(url: string, body: Buffer): Promise<{ status?: number; text?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    })
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => {
        resolve({ status: res.statusCode, text })
        // The answer is read: the rest of the 8 MB need not reach a gateway that may be stopped next.
        if (!req.writableFinished) req.destroy()
      })
      res.on('error', (error) => resolve({ error: String(error) }))
    })
    req.on('error', (error) => resolve({ error: String(error) }))
    req.end(body)
  })
}

describe('serve --http: an oversized body is answered before the connection closes (issue 36, item 14)', () => {
  let s: Connected
  beforeAll(async () => {
    s = await serveHttp(['--root', dir, '--max-message-bytes', '100000'])
  })
  afterAll(() => s.close())

  it('fetch and http.request sending 8 MB read the 413 and its message, not EPIPE or a reset', async () => {
    const big = Buffer.alloc(8 * 1024 * 1024, 'p')
    for (let i = 0; i < 3; i++) {
      const refused = await fetch(s.url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: big,
      })
      expect(refused.status).toBe(413)
      expect(await refused.text()).toMatch(/message too large: over the limit of 100000 bytes/)
      const raw = await rawPost(s.url!, big)
      expect(raw.error).toBeUndefined()
      expect(raw.status).toBe(413)
      expect(raw.text).toMatch(/message too large: over the limit of 100000 bytes/)
    }
    expect((await post(s.url!, INITIALIZE, { host: new URL(s.url!).host })).status).toBe(200)
  })
})

describe('serve --http: configuration of the policy', () => {
  it('rejects malformed entries in the file with their path', () => {
    let issues: string[] = []
    try {
      parseConfig(
        JSON.stringify({ http: { allowedHosts: ['http://x', '*'], allowedOrigins: ['app.example', 3], extra: 1 } }),
        'c.json',
      )
    } catch (error) {
      issues = (error as { issues: string[] }).issues
    }
    expect(issues).toEqual([
      expect.stringMatching(/^http\.extra: unknown key/),
      expect.stringMatching(/^http\.allowedHosts\[0\]: expected a host name/),
      expect.stringMatching(/^http\.allowedHosts\[1\]: expected a host name/),
      expect.stringMatching(/^http\.allowedOrigins\[0\]: expected an origin/),
      expect.stringMatching(/^http\.allowedOrigins\[1\]: expected an origin/),
    ])
  })

  it('rejects a malformed flag, and the flags without --http', async () => {
    const bad = await runCli(['serve', '--http', '0', '--allow-origin', 'https://app.example/path'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--allow-origin: expected an origin/)
    const stdio = await runCli(['serve', '--allow-host', 'gateway.test'])
    expect(stdio.code).toBe(2)
    expect(stdio.stderr).toMatch(/--allow-host only applies with --http/)
  })
})
