// Issue 39 item 3: a sign-in link and its state expire. The flows are driven directly with a clock
// of their own (the end-to-end flow is in consent.test.ts).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSENT_TTL_MS, ConsentFlows } from '../../src/gateway/consent-flows.js'
import { Browser } from './consent-servers.js'

let now = 0
const flows = new ConsentFlows(() => now)
const stored: unknown[] = []
let http: Server
let origin: string

const config = {
  authorizationEndpoint: 'http://127.0.0.1:9/authorize',
  tokenEndpoint: 'http://127.0.0.1:9/token',
  clientId: 'c',
}
const begin = () =>
  flows.begin({
    server: 'gh',
    subject: 'alice',
    config,
    store: (t) => {
      stored.push(t)
    },
  })

beforeAll(async () => {
  http = createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://x')
    if (!flows.serve(pathname, req, res, () => {})) res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())))

describe('consent flows expire (issue 39, item 3)', () => {
  it('refuses to start a sign-in without an HTTP face to run it on', () => {
    expect(begin).toThrow(
      /servers\.gh needs you to sign in to it in a browser, which the gateway runs only when serving with --http/,
    )
  })

  it('refuses a start link opened after it expired', async () => {
    flows.origin = origin
    now = 1_000
    const flow = begin()
    now += CONSENT_TTL_MS
    const visit = await new Browser().signIn(flow.url)
    expect(visit.status).toBe(400)
    expect(visit.page).toContain('This sign-in link is unknown, used or expired.')
  })

  it('refuses a callback that comes back after the state expired, and stores nothing', async () => {
    now = 5_000
    const flow = begin()
    const browser = new Browser()
    const start = await browser.get(flow.url)
    expect(start.status).toBe(302)
    const authorize = new URL(start.headers.get('location') ?? '')
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256')
    const state = authorize.searchParams.get('state') ?? ''
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/)
    now += CONSENT_TTL_MS + 1
    const late = await browser.get(`${origin}/oauth/callback?state=${state}&code=abc`)
    expect(late.status).toBe(400)
    expect(await late.text()).toContain('This sign-in is unknown, already completed or expired.')
    expect(stored).toEqual([])
  })

  it('a declined sign-in settles its flow as failed, and its link no longer opens', async () => {
    now = 9_000
    const flow = begin()
    flow.cancel()
    await expect(flow.done).rejects.toThrow(/servers\.gh: the sign-in was declined/)
    expect((await new Browser().signIn(flow.url)).status).toBe(400)
  })
})
