// The one POST both the consent flows and token exchange send to a token endpoint (RFC 6749 §3.2):
// its failures are told apart, a redirect is never followed, and Basic client authentication is sent.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postTokenForm, shown, type TokenPostFailure } from '../../src/gateway/token-endpoint.js'

let server: Server
let base = ''
const seen: { url: string; authorization: string | undefined; body: string }[] = []

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
    })
    req.on('end', () => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization, body })
      if (req.url === '/html') res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>bad gateway</h1>')
      else if (req.url === '/redirect') res.writeHead(302, { location: `${base}/token` }).end()
      else if (req.url === '/refused')
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}')
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"abc","expires_in":60}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const failure = (why: TokenPostFailure) => new Error(typeof why === 'object' ? `status ${why.status}` : why)

describe('postTokenForm', () => {
  it('sends the form with Basic client authentication and returns the JSON fields', async () => {
    const answer = await postTokenForm(
      `${base}/token`,
      new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'r' }),
      { clientId: 'app one', secret: 's:1' },
      failure,
    )
    expect(answer).toEqual({ status: 200, ok: true, fields: { access_token: 'abc', expires_in: 60 } })
    const last = seen.at(-1)
    expect(last?.body).toBe('grant_type=refresh_token&refresh_token=r')
    // RFC 6749 §2.3.1: id and secret form-encoded before Basic.
    expect(last?.authorization).toBe(`Basic ${Buffer.from('app%20one:s%3A1').toString('base64')}`)
  })

  it('sends no authorization header without Basic credentials', async () => {
    await postTokenForm(`${base}/token`, new URLSearchParams({ client_id: 'app' }), undefined, failure)
    expect(seen.at(-1)?.authorization).toBeUndefined()
  })

  it('returns a refusal with its status and fields, not as a failure', async () => {
    const answer = await postTokenForm(`${base}/refused`, new URLSearchParams(), undefined, failure)
    expect(answer).toEqual({ status: 400, ok: false, fields: { error: 'invalid_grant' } })
  })

  it('fails with the status when the body is not JSON', async () => {
    await expect(postTokenForm(`${base}/html`, new URLSearchParams(), undefined, failure)).rejects.toThrow('status 502')
  })

  it('never follows a redirect', async () => {
    const before = seen.length
    await expect(postTokenForm(`${base}/redirect`, new URLSearchParams(), undefined, failure)).rejects.toThrow(
      'unreachable',
    )
    expect(seen.slice(before).map((r) => r.url)).toEqual(['/redirect'])
  })

  it('fails as unreachable when nothing listens', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    await expect(
      postTokenForm(`http://127.0.0.1:${port}/token`, new URLSearchParams(), undefined, failure),
    ).rejects.toThrow('unreachable')
  })

  it('shows untrusted text printable, short and quoted', () => {
    expect(shown('a\u0000b\nc')).toBe('"a?b?c"')
    expect(shown('x'.repeat(500))).toHaveLength(202)
  })
})
