// Issue 39, item 2: "a person can also set their own through the viewer when signed in". The
// viewer's /credentials page lets the signed-in identity set or delete only its own secret, only
// for a server with auth.perUser, only with its session's CSRF token and from its own origin; the
// value is never echoed. Over HTTP, then once in headless Chromium.
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileVaultStorage, type VaultStorage, viewerCredentials } from '../../src/gateway/vault-storage.js'
import { startViewer, type ViewerAccess, type ViewerServer } from '../../src/viewer/server.js'
import { BIN, runCli, writeConfig } from '../cli/helpers.js'
import { launchBrowser } from './browser.js'

const sha = (text: string) => createHash('sha256').update(text).digest('hex')
const ACCESS: ViewerAccess = {
  tokens: [
    { sha256: sha('alice-login'), subject: 'alice' },
    { sha256: sha('bob-login'), subject: 'bob' },
  ],
}
const ALICE_SECRET = 'ghp_alice_from_the_viewer_5f4e'

let dir: string
let journal: string
let vault: VaultStorage
let server: ViewerServer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-credentials-'))
  journal = join(dir, 'session.jsonl')
  await writeFile(journal, '')
  vault = fileVaultStorage(join(dir, 'toolgate.vault.json'), randomBytes(32))
  server = await startViewer({ journal, access: ACCESS, credentials: viewerCredentials(vault, ['gh']) })
})

afterAll(async () => {
  await server?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

function call(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; port?: number } = {},
) {
  const port = init.port ?? server.port
  return new Promise<Reply>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: init.method ?? 'GET',
        headers: { host: `127.0.0.1:${port}`, ...init.headers },
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
    req.end(init.body)
  })
}

async function signIn(token: string, port?: number): Promise<string> {
  const reply = await call('/login', {
    ...(port === undefined ? {} : { port }),
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  })
  expect(reply.status).toBe(303)
  return String(reply.headers['set-cookie']).split(';')[0]
}

async function csrfOf(cookie: string): Promise<string> {
  const page = await call('/credentials', { headers: { cookie } })
  expect(page.status).toBe(200)
  const token = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1]
  if (token === undefined) throw new Error('no CSRF token on the page')
  return token
}

const post = (cookie: string | undefined, form: Record<string, string>, headers: Record<string, string> = {}) =>
  call('/credentials', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie === undefined ? {} : { cookie }),
      ...headers,
    },
    body: new URLSearchParams(form).toString(),
  })

describe("the viewer's own-credentials page (issue 39, item 2)", () => {
  it('is there only for a signed-in person, and lists only the perUser servers', async () => {
    expect((await call('/credentials')).status).toBe(401)
    expect((await post(undefined, { server: 'gh', action: 'set', value: 'x' })).status).toBe(401)
    const alice = await signIn('alice-login')
    const page = await call('/credentials', { headers: { cookie: alice } })
    expect(page.status).toBe(200)
    expect(page.body).toContain('Signed in as <b id="subject">alice</b>')
    expect(page.body).toContain('data-server="gh"')
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'.*form-action 'self'/)
    expect(page.body).not.toContain('<script')
  })

  it("sets the session's own secret, whatever subject the form names, and never echoes it", async () => {
    const alice = await signIn('alice-login')
    const csrf = await csrfOf(alice)
    const saved = await post(alice, { csrf, server: 'gh', action: 'set', value: ALICE_SECRET, subject: 'bob' })
    expect(saved.status).toBe(200)
    expect(saved.body).toContain('Saved your credential for gh.')
    expect(saved.body).not.toContain(ALICE_SECRET)
    expect(await vault.get('gh', 'alice')).toBe(ALICE_SECRET)
    expect(await vault.get('gh', 'bob')).toBeUndefined()
    // At rest it is sealed.
    expect(await readFile(join(dir, 'toolgate.vault.json'), 'utf8')).not.toContain(ALICE_SECRET)
    // Bob sees his own state only: none stored, no delete button, nothing of alice's.
    const bob = await signIn('bob-login')
    const bobsPage = await call('/credentials', { headers: { cookie: bob } })
    expect(bobsPage.body).toContain('none stored')
    expect(bobsPage.body).not.toContain('value="delete"')
  })

  it('refuses a post without the CSRF token, with another session’s, or from another origin', async () => {
    const alice = await signIn('alice-login')
    const bob = await signIn('bob-login')
    const bobsCsrf = await csrfOf(bob)
    const before = await vault.list()
    expect((await post(bob, { server: 'gh', action: 'delete' })).status).toBe(403)
    expect((await post(bob, { csrf: 'wrong', server: 'gh', action: 'delete' })).status).toBe(403)
    // Bob's token on alice's session (a page of bob's cannot act as alice).
    expect((await post(alice, { csrf: bobsCsrf, server: 'gh', action: 'delete' })).status).toBe(403)
    const aliceCsrf = await csrfOf(alice)
    const crossSite = await post(
      alice,
      { csrf: aliceCsrf, server: 'gh', action: 'delete' },
      { origin: 'http://evil.example' },
    )
    expect(crossSite.status).toBe(403)
    expect(await vault.list()).toEqual(before)
    expect(await vault.get('gh', 'alice')).toBe(ALICE_SECRET)
  })

  it('refuses a server that does not take a personal credential', async () => {
    const bob = await signIn('bob-login')
    const csrf = await csrfOf(bob)
    const refused = await post(bob, { csrf, server: 'shared', action: 'set', value: 'x' })
    expect(refused.status).toBe(400)
    expect(refused.body).toContain('That server does not take a personal credential.')
    expect((await vault.list()).map((e) => e.server)).not.toContain('shared')
  })

  it("bob's delete removes only bob's entry; alice's stays", async () => {
    const bob = await signIn('bob-login')
    const csrf = await csrfOf(bob)
    expect((await post(bob, { csrf, server: 'gh', action: 'set', value: 'bob-token' })).status).toBe(200)
    const deleted = await post(bob, { csrf, server: 'gh', action: 'delete', subject: 'alice' })
    expect(deleted.body).toContain('Deleted your credential for gh.')
    expect(await vault.get('gh', 'bob')).toBeUndefined()
    expect(await vault.get('gh', 'alice')).toBe(ALICE_SECRET)
  })

  it('needs token login to be offered at all', async () => {
    await expect(startViewer({ journal, credentials: viewerCredentials(vault, ['gh']) })).rejects.toThrow(
      /credentials.*need token login/,
    )
  })

  it('in a browser: sign in, save a secret, see it stored but not shown', { timeout: 60_000 }, async () => {
    let browser: Browser | undefined
    try {
      browser = await launchBrowser()
      const page = await browser.newPage()
      await page.goto(`${server.url}login`)
      await page.fill('#token', 'bob-login')
      await Promise.all([page.waitForURL(`${server.url}`), page.click('button[type=submit]')])
      await page.goto(`${server.url}credentials`)
      await page.fill('section[data-server="gh"] input[name=value]', 'bob-browser-token')
      await Promise.all([
        page.waitForSelector('#credentials-done'),
        page.click('section[data-server="gh"] button[value=set]'),
      ])
      expect(await page.textContent('#credentials-done')).toBe('Saved your credential for gh.')
      expect(await page.textContent('section[data-server="gh"] .state')).toMatch(/^stored \(set \d{4}-/)
      expect(await page.content()).not.toContain('bob-browser-token')
      expect(await vault.get('gh', 'bob')).toBe('bob-browser-token')
    } finally {
      await browser?.close()
    }
  })

  it('toolgate view --config --vault-key-file offers it over the vault the gateway reads', {
    timeout: 60_000,
  }, async () => {
    const key = join(dir, 'cli.key')
    await writeFile(key, randomBytes(32).toString('hex'))
    const access = join(dir, 'access.json')
    await writeFile(access, JSON.stringify(ACCESS))
    const cliDir = await mkdtemp(join(tmpdir(), 'toolgate-view-credentials-'))
    const config = await writeConfig(cliDir, {
      servers: {
        tracker: { url: 'http://127.0.0.1:9/mcp', auth: { perUser: { header: 'Authorization' } } },
        plain: { url: 'http://127.0.0.1:9/mcp' },
      },
    })
    const child = spawn(
      process.execPath,
      [BIN, 'view', journal, '--access', access, '--config', config, '--vault-key-file', key],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    try {
      let out = ''
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString()
          const match = /toolgate viewer on http:\/\/127\.0\.0\.1:(\d+)\//.exec(out)
          if (match) resolve(Number(match[1]))
        })
        child.once('exit', (code) => reject(new Error(`toolgate view exited with ${code}`)))
      })
      const alice = await signIn('alice-login', port)
      const page = await call('/credentials', { port, headers: { cookie: alice } })
      expect(page.body).toContain('data-server="tracker"')
      expect(page.body).not.toContain('data-server="plain"')
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
      const saved = await call('/credentials', {
        port,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: alice },
        body: new URLSearchParams({ csrf, server: 'tracker', action: 'set', value: 'alice-cli-token' }).toString(),
      })
      expect(saved.status).toBe(200)
      const listed = await runCli(['vault', 'list', '--config', config, '--vault-key-file', key])
      expect(listed.stdout).toMatch(/^tracker\t"alice"\t/m)
    } finally {
      child.kill('SIGTERM')
      await rm(cliDir, { recursive: true, force: true })
    }
  })
})
