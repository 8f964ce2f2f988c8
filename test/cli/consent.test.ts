// Issue 39 item 3: consent by URL. A server with auth.perUser.oauth sends a person without a
// credential to sign in to the upstream's authorization server (authorization code + PKCE S256,
// run by `toolgate serve --http` at /oauth/start and /oauth/callback): a client that declared
// URL-mode elicitation (MCP 2025-11-25) is asked to open the link and its call goes on with the
// new token; any other client gets UPSTREAM_CREDENTIAL naming the link, and its retried call does.
// Hostile: a replayed state, a state taken to another browser (another identity), a code bound to
// another PKCE verifier, unknown links; no token, code or verifier in a log, the journal or a result;
// no start link in the journal or the log (only the calling client's answer carries it).
import type { ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CredentialVault, readVaultKey } from '../../src/gateway/vault.js'
import { Browser, type FakeAuthorizationServer, startAuthorizationServer } from './consent-servers.js'
import { type EchoUpstream, startEchoUpstream } from './exchange-servers.js'
import { spawnServe, tempDir, textOf, vaultServeArgs, writeConfig } from './helpers.js'
import { stopChildren } from './spawn-ready.js'

const PEOPLE = ['alice', 'bob', 'carol', 'dave', 'erin'] as const
type Person = (typeof PEOPLE)[number]
const TOKENS = Object.fromEntries(
  PEOPLE.map((p) => [p, `${p}-gateway-token-${randomBytes(8).toString('hex')}`]),
) as Record<Person, string>
const CLIENT = { id: 'toolgate-gh', secret: `client-secret-${randomBytes(8).toString('hex')}` }
const SHARED = 'shared-listing-key-7788'
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let dir: string
let cleanup: () => Promise<void>
let upstream: EchoUpstream
let as: FakeAuthorizationServer
let keyFile: string
let gateway: { url: string; origin: string; stderr: () => string; child: ChildProcess } | undefined
const clients: Client[] = []

interface Connected {
  client: Client
  /** The URL elicitations the client was asked, and the completions it was told of. */
  asked: { mode?: string; url?: string; elicitationId?: string; message?: string }[]
  completed: string[]
}

/** A client of `person`; with `browser`, it declares URL elicitation and opens each link in that browser. */
async function connect(person: Person, browser?: Browser, visits?: Promise<unknown>[]): Promise<Connected> {
  const client = new Client(
    { name: 'test', version: '1' },
    { capabilities: browser ? { elicitation: { url: {} } } : {} },
  )
  const connected: Connected = { client, asked: [], completed: [] }
  if (browser) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as Connected['asked'][number]
      connected.asked.push(params)
      // The person agrees to open the link; the sign-in happens in the browser meanwhile.
      if (params.url !== undefined) visits?.push(browser.signIn(params.url))
      return { action: 'accept' }
    })
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      connected.completed.push(n.params.elicitationId)
    })
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway?.url ?? ''), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS[person]}` } },
    }),
  )
  clients.push(client)
  return connected
}

async function whoami(client: Client) {
  const result = await client.callTool({ name: 'gh__whoami', arguments: {} })
  const text = textOf(result)
  const [call] = text.split(' | ').map((digest) => upstream.seen.get(digest) ?? digest)
  return { call, isError: result.isError === true, text, meta: result._meta as Record<string, unknown> | undefined }
}

const LINK = /open (http:\/\/127\.0\.0\.1:\d+\/oauth\/start\?flow=[A-Za-z0-9_-]+) in your browser/
/** Every start link a client was given in a result: it binds whoever opens it first to the person. */
const links: string[] = []
function linkOf(text: string): string {
  const link = LINK.exec(text)?.[1] ?? ''
  if (link !== '') links.push(link)
  return link
}

function vault(): CredentialVault {
  return new CredentialVault(path.join(dir, 'toolgate.vault.json'), readVaultKey(keyFile))
}

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  ;[upstream, as] = await Promise.all([startEchoUpstream(), startAuthorizationServer(CLIENT)])
  keyFile = path.join(dir, 'vault.key')
  await writeFile(keyFile, randomBytes(32).toString('hex'))
  await writeFile(path.join(dir, 'client.secret'), `${CLIENT.secret}\n`)
  const config = await writeConfig(dir, {
    files: false,
    journal: 'journal.jsonl',
    auth: { tokens: PEOPLE.map((p) => ({ sha256: sha256(TOKENS[p]), subject: p })) },
    servers: {
      gh: {
        url: upstream.url,
        headers: { Authorization: `Bearer ${SHARED}` },
        auth: {
          perUser: {
            header: 'Authorization',
            scheme: 'Bearer',
            oauth: {
              authorizationEndpoint: as.authorizationEndpoint,
              tokenEndpoint: as.tokenEndpoint,
              clientId: CLIENT.id,
              clientSecretFile: 'client.secret',
              scope: 'repo',
            },
          },
        },
      },
    },
  })
  const { child, url, stderr } = await spawnServe(vaultServeArgs(config, keyFile, '--log-level', 'debug'))
  gateway = { url, origin: new URL(url).origin, stderr, child }
}, 60_000)

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  if (gateway) await stopChildren([gateway.child])
  await Promise.all([upstream?.close(), as?.close()])
  await cleanup?.()
})

describe('consent by URL (issue 39, item 3)', { timeout: 60_000 }, () => {
  it("asks a client with URL elicitation to open the link; the call goes on with alice's new token", async () => {
    const browser = new Browser()
    const visits: Promise<unknown>[] = []
    as.user = 'alice-on-github'
    const alice = await connect('alice', browser, visits)
    const first = await whoami(alice.client)
    expect(first.isError, first.text).toBe(false)
    expect(alice.asked).toHaveLength(1)
    const [asked] = alice.asked
    expect(asked.mode).toBe('url')
    expect(asked.url).toMatch(new RegExp(`^${gateway?.origin}/oauth/start\\?flow=[A-Za-z0-9_-]{43}$`))
    expect(asked.elicitationId).toMatch(/^[0-9a-f-]{36}$/)
    // The sign-in link names nobody: the subject and the server are bound on the gateway's side.
    expect(asked.url).not.toMatch(/alice/)
    const [visit] = (await Promise.all(visits)) as { status: number; page: string }[]
    expect(visit.status).toBe(200)
    expect(visit.page).toContain('Signed in: gh is connected for alice.')
    // The authorization request: PKCE S256, the callback on the gateway's own port, the scope.
    const [authorization] = as.authorizations
    expect(authorization.get('code_challenge_method')).toBe('S256')
    expect(authorization.get('redirect_uri')).toBe(`${gateway?.origin}/oauth/callback`)
    expect(authorization.get('scope')).toBe('repo')
    const tokens = as.issued.get('alice-on-github')
    expect(first.call).toBe(`Bearer ${tokens?.access}`)
    expect(alice.completed).toEqual([asked.elicitationId])
    // The next call (and a new session's) carries the stored token without asking again.
    const again = await whoami((await connect('alice', browser, visits)).client)
    expect(again.call).toBe(`Bearer ${tokens?.access}`)
    // The tokens (refresh token too) are in alice's vault entry for gh, sealed.
    const stored = JSON.parse(vault().get('gh', 'alice') ?? '{}')
    expect(stored).toMatchObject({ accessToken: tokens?.access, refreshToken: tokens?.refresh })
  })

  it("refreshes alice's expired token with her refresh token, without asking her again; a refused refresh asks", async () => {
    const expire = () => {
      const v = vault()
      const stored = JSON.parse(v.get('gh', 'alice') ?? '{}')
      v.set('gh', 'alice', JSON.stringify({ ...stored, expiresAt: Date.now() - 1000 }))
    }
    expire()
    const before = as.issued.get('alice-on-github')
    const browser = new Browser()
    const visits: Promise<unknown>[] = []
    const alice = await connect('alice', browser, visits)
    const refreshed = await whoami(alice.client)
    expect(refreshed.isError, refreshed.text).toBe(false)
    const after = as.issued.get('alice-on-github')
    expect(after?.access).not.toBe(before?.access)
    expect(refreshed.call).toBe(`Bearer ${after?.access}`)
    expect(as.tokenRequests.at(-1)).toEqual({ ok: true, grant: 'refresh_token' })
    expect(alice.asked).toHaveLength(0)
    expect(JSON.parse(vault().get('gh', 'alice') ?? '{}')).toMatchObject({ refreshToken: after?.refresh })
    // The refresh token revoked: the expired token leads to a new sign-in.
    as.revokeRefresh('alice-on-github')
    expire()
    const again = await whoami(alice.client)
    expect(again.isError, again.text).toBe(false)
    expect(alice.asked).toHaveLength(1)
    await Promise.all(visits)
    expect(again.call).toBe(`Bearer ${as.issued.get('alice-on-github')?.access}`)
  })

  it('tells a client without URL elicitation which link to open; the retried call carries the new token', async () => {
    as.user = 'bob-on-github'
    const bob = await connect('bob')
    const refused = await whoami(bob.client)
    expect(refused.isError).toBe(true)
    expect(refused.text).toMatch(/^servers\.gh needs you to sign in to it first: open http/)
    expect((refused.meta?.['toolgate/error'] as { info?: { code?: string } })?.info?.code).toBe('UPSTREAM_CREDENTIAL')
    const link = linkOf(refused.text)
    const visit = await new Browser().signIn(link)
    expect(visit.status).toBe(200)
    const retried = await whoami(bob.client)
    expect(retried.isError, retried.text).toBe(false)
    expect(retried.call).toBe(`Bearer ${as.issued.get('bob-on-github')?.access}`)
  })

  it('refuses a replayed state: the callback works once, and the code is not sent again', async () => {
    as.user = 'carol-on-github'
    const carol = await connect('carol')
    const link = linkOf((await whoami(carol.client)).text)
    const browser = new Browser()
    const callback = await browser.stopBeforeCallback(link)
    const cookies = new Map(browser.cookies)
    expect((await browser.signIn(callback)).status).toBe(200)
    const requests = as.tokenRequests.length
    // The same browser (its cookie put back) and the same URL: refused, nothing reaches the token endpoint.
    for (const [k, v] of cookies) browser.cookies.set(k, v)
    const replay = await browser.signIn(callback)
    expect(replay.status).toBe(400)
    expect(replay.page).toContain('This sign-in is unknown, already completed or expired.')
    expect(as.tokenRequests.length).toBe(requests)
    // Opening the used start link again is refused too.
    expect((await new Browser().signIn(link)).status).toBe(400)
  })

  it("refuses a state taken by another identity: dave's callback opened in erin's browser stores nothing", async () => {
    as.user = 'erin-on-github'
    // erin, who has a session of her own, gets hold of dave's sign-in link and its callback URL.
    const [dave] = await Promise.all([connect('dave'), connect('erin')])
    const link = linkOf((await whoami(dave.client)).text)
    const daves = new Browser()
    const callback = await daves.stopBeforeCallback(link)
    const erins = new Browser()
    // The start link was opened by dave's browser: it does not open twice.
    expect((await erins.signIn(link)).status).toBe(400)
    const requests = as.tokenRequests.length
    // The callback, with dave's state and a code for erin's account, from erin's browser.
    const stolen = await erins.signIn(callback)
    expect(stolen.status).toBe(400)
    expect(stolen.page).toContain('This sign-in was started in another browser.')
    expect(as.tokenRequests.length).toBe(requests)
    expect(vault().get('gh', 'dave')).toBeUndefined()
    // The state is spent: dave's own browser cannot complete it after the attempt either.
    expect((await daves.signIn(callback)).status).toBe(400)
    expect(vault().get('gh', 'dave')).toBeUndefined()
    const still = await whoami(dave.client)
    expect(still.isError).toBe(true)
    expect(still.text).toMatch(LINK)
  })

  it('reports a code bound to another PKCE verifier as a failed sign-in, and stores nothing', async () => {
    as.user = 'dave-on-github'
    as.tamperChallenge = true
    const browser = new Browser()
    const visits: Promise<unknown>[] = []
    const dave = await connect('dave', browser, visits)
    const failed = await whoami(dave.client)
    const [visit] = (await Promise.all(visits)) as { status: number; page: string }[]
    expect(visit.status).toBe(502)
    expect(visit.page).toContain(
      'The sign-in failed: the token endpoint of servers.gh refused the code: HTTP 400 &#34;invalid_grant&#34;',
    )
    expect(as.tokenRequests.at(-1)).toEqual({ ok: false, error: 'invalid_grant' })
    expect(failed.isError).toBe(true)
    expect(failed.text).toMatch(/servers\.gh: the sign-in failed: the token endpoint of servers\.gh refused the code/)
    expect(vault().get('gh', 'dave')).toBeUndefined()
    expect(as.issued.has('dave-on-github')).toBe(false)
  })

  it('answers unknown links and states with 400 and an escaped page', async () => {
    const start = await new Browser().signIn(`${gateway?.origin}/oauth/start?flow=${'A'.repeat(43)}`)
    expect(start.status).toBe(400)
    expect(start.page).toContain('This sign-in link is unknown, used or expired.')
    const callback = await new Browser().signIn(
      `${gateway?.origin}/oauth/callback?state=${'B'.repeat(43)}&code=<script>alert(1)</script>`,
    )
    expect(callback.status).toBe(400)
    expect(callback.page).not.toContain('<script>')
  })

  it('keeps every token, code, verifier and the client secret out of the log, the journal and results', async () => {
    const secrets = [
      CLIENT.secret,
      ...[...as.issued.values()].flatMap((t) => [t.access, t.refresh]),
      ...as.authorizations.map((q) => q.get('state') ?? ''),
      ...as.received.flatMap((line) => {
        const form = new URLSearchParams(line.slice(line.indexOf(' ') + 1))
        return [form.get('code') ?? '', form.get('code_verifier') ?? '']
      }),
    ].filter((s) => s !== '')
    expect(secrets.length).toBeGreaterThan(10)
    const journal = await readFile(path.join(dir, 'journal.jsonl'), 'utf8')
    const file = await readFile(path.join(dir, 'toolgate.vault.json'), 'utf8')
    for (const secret of secrets) {
      expect(gateway?.stderr()).not.toContain(secret)
      expect(journal).not.toContain(secret)
      expect(file, 'sealed at rest').not.toContain(secret)
    }
    // The start links (and their one-time ids) reached their client only: whoever reads the journal
    // (or the viewer, or the log) could otherwise open one first and bind their own upstream account
    // to that person. The journal records a placeholder in their place.
    expect(links.length).toBeGreaterThanOrEqual(3)
    for (const link of links) {
      const flow = new URL(link).searchParams.get('flow') ?? ''
      expect(flow).toMatch(/^[A-Za-z0-9_-]{43}$/)
      for (const text of [journal, gateway?.stderr() ?? '']) {
        expect(text).not.toContain('/oauth/start')
        expect(text).not.toContain(flow)
      }
    }
    expect(journal).toContain(
      'open [the sign-in link for servers.gh, given to the calling client only] in your browser',
    )
    expect(gateway?.stderr()).toMatch(/servers\.gh: the sign-in of "alice" succeeded/)
    expect(gateway?.stderr()).toMatch(/servers\.gh: the sign-in of "dave" came back in another browser/)
  })
})
