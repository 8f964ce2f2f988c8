// Issue 39 items 2, 4 and 5: the per-caller credential vault. `toolgate vault set|list|delete`
// keep each person's secret encrypted next to the config; a server with auth.perUser sends the
// caller's own secret in its own session, never another's and never the shared `headers`; an
// entry edited on disk is refused by its authentication tag; no secret reaches a log or the journal.
import type { ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CredentialVault, readVaultKey } from '../../src/gateway/vault.js'
import { type EchoUpstream, startEchoUpstream } from './exchange-servers.js'
import { runCli, spawnServe, tempDir, textOf, vaultServeArgs, writeConfig } from './helpers.js'
import { stopChildren } from './spawn-ready.js'

const TOKENS = { alice: 'alice-gateway-token-0123456789', bob: 'bob-gateway-token-0123456789' }
const SECRETS = { alice: 'ghp_alice_personal_9f8e7d6c', bob: 'ghp_bob_personal_1a2b3c4d' }
const SHARED = 'shared-listing-key-5566'
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let dir: string
let cleanup: () => Promise<void>
let upstream: EchoUpstream
let config: string
let keyFile: string
let gateway: { url: string; stderr: () => string; child: ChildProcess } | undefined
const clients: Client[] = []

async function startGateway(): Promise<void> {
  const { child, url, stderr } = await spawnServe(vaultServeArgs(config, keyFile, '--log-level', 'debug'))
  gateway = { url, stderr, child }
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway?.url ?? ''), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  clients.push(client)
  return client
}

async function whoami(client: Client): Promise<{ call: string; session: string; isError: boolean; text: string }> {
  const result = await client.callTool({ name: 'gh__whoami', arguments: {} })
  const text = textOf(result)
  const [call, session] = text.split(' | ').map((digest) => upstream.seen.get(digest) ?? digest)
  return { call, session, isError: result.isError === true, text }
}

const vaultCli = (...args: string[]) => runCli(['vault', ...args, '--config', config, '--vault-key-file', keyFile])

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  upstream = await startEchoUpstream()
  keyFile = path.join(dir, 'vault.key')
  await writeFile(keyFile, randomBytes(32).toString('hex'))
  config = await writeConfig(dir, {
    files: false,
    // run_code too: a program's sub-calls carry its caller's credential.
    mode: 'both',
    journal: 'journal.jsonl',
    limits: { concurrency: 100, rate: { perSecond: 1000, burst: 1000 } },
    auth: {
      tokens: [
        { sha256: sha256(TOKENS.alice), subject: 'alice' },
        { sha256: sha256(TOKENS.bob), subject: 'bob' },
      ],
    },
    servers: {
      gh: {
        url: upstream.url,
        // What lists the tools; a call never falls back to it.
        headers: { Authorization: `Bearer ${SHARED}` },
        auth: { perUser: { header: 'Authorization', scheme: 'Bearer' } },
      },
    },
  })
}, 60_000)

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  if (gateway) await stopChildren([gateway.child])
  await upstream?.close()
  await cleanup?.()
})

describe('the credential vault (issue 39, items 2, 4, 5)', { timeout: 60_000 }, () => {
  it('sets, lists (names and dates only) and deletes entries from the command line', async () => {
    await writeFile(path.join(dir, 'alice.secret'), `${SECRETS.alice}\n`)
    await writeFile(path.join(dir, 'bob.secret'), SECRETS.bob)
    const first = await vaultCli(
      'set',
      '--server',
      'gh',
      '--subject',
      'alice',
      '--value-file',
      path.join(dir, 'alice.secret'),
    )
    expect(first.code, first.stderr).toBe(0)
    const set = await vaultCli(
      'set',
      '--server',
      'gh',
      '--subject',
      'bob',
      '--value-file',
      path.join(dir, 'bob.secret'),
    )
    expect(set.code, set.stderr).toBe(0)
    const listed = await vaultCli('list')
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/^gh\t"alice"\t\d{4}-\d\d-\d\dT/m)
    expect(listed.stdout).toMatch(/^gh\t"bob"\t/m)
    const file = await readFile(path.join(dir, 'toolgate.vault.json'), 'utf8')
    for (const secret of Object.values(SECRETS)) {
      expect(listed.stdout).not.toContain(secret)
      expect(file, 'encrypted at rest').not.toContain(secret)
    }
    expect((await vaultCli('delete', '--server', 'gh', '--subject', 'bob')).code).toBe(0)
    expect((await vaultCli('list')).stdout).not.toMatch(/"bob"/)
    const wrong = await vaultCli(
      'set',
      '--server',
      'nope',
      '--subject',
      'x',
      '--value-file',
      path.join(dir, 'alice.secret'),
    )
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toMatch(/servers\.nope is not a server with "auth": \{ "perUser"/)
  })

  it("sends alice's own secret in alice's own session, and refuses bob (no secret) without the shared header", async () => {
    await startGateway()
    const [alice, bob] = await Promise.all([connect(TOKENS.alice), connect(TOKENS.bob)])
    const seen = await Promise.all(
      Array.from({ length: 40 }, (_, i) => whoami(i % 2 ? bob : alice).then((r) => ({ i, ...r }))),
    )
    for (const { i, call, session, isError, text } of seen) {
      if (i % 2 === 0) {
        expect(isError, text).toBe(false)
        expect(call).toBe(`Bearer ${SECRETS.alice}`)
        expect(session).toBe(`Bearer ${SECRETS.alice}`)
      } else {
        expect(isError).toBe(true)
        expect(text).toMatch(/servers\.gh needs your own credential, and none is stored for "bob"/)
        expect(text).toMatch(/toolgate vault set --server gh --subject "bob"/)
      }
    }
    // The shared header listed the tools; no call carried it, and no session of bob's was opened.
    expect([...upstream.seen.values()].filter((v) => v === `Bearer ${SHARED}`)).toHaveLength(0)
    expect([...upstream.sessions.values()].filter((v) => v === `Bearer ${SHARED}`)).toHaveLength(1)
    expect([...upstream.sessions.values()].filter((v) => v?.includes('bob'))).toHaveLength(0)
  })

  it('picks up a secret set while serving, for the next call', async () => {
    const set = await vaultCli(
      'set',
      '--server',
      'gh',
      '--subject',
      'bob',
      '--value-file',
      path.join(dir, 'bob.secret'),
    )
    expect(set.code, set.stderr).toBe(0)
    const bob = await connect(TOKENS.bob)
    const result = await whoami(bob)
    expect(result.isError, result.text).toBe(false)
    expect(result.call).toBe(`Bearer ${SECRETS.bob}`)
  })

  it("runs a Code Mode program's sub-calls with its own caller's secret, alice and bob at once", async () => {
    const [alice, bob] = await Promise.all([connect(TOKENS.alice), connect(TOKENS.bob)])
    const program = {
      description: 'who am i, three times',
      code: 'const all = await Promise.all([1, 2, 3].map(() => tools.gh__whoami({}))); return JSON.stringify(all)',
    }
    const [a, b] = await Promise.all([
      alice.callTool({ name: 'run_code', arguments: program }),
      bob.callTool({ name: 'run_code', arguments: program }),
    ])
    const seenIn = (result: object) =>
      [...textOf(result).matchAll(/\b[0-9a-f]{16}\b/g)].map((m) => upstream.seen.get(m[0]))
    expect(a.isError, textOf(a)).toBeFalsy()
    expect(b.isError, textOf(b)).toBeFalsy()
    // Each sub-call's own header and its session's: six per program.
    expect(seenIn(a)).toEqual(Array(6).fill(`Bearer ${SECRETS.alice}`))
    expect(seenIn(b)).toEqual(Array(6).fill(`Bearer ${SECRETS.bob}`))
  })

  it("refuses an entry edited on disk: alice's sealed secret moved under bob, or a flipped byte", async () => {
    const file = path.join(dir, 'toolgate.vault.json')
    const original = await readFile(file, 'utf8')
    const vault = JSON.parse(original) as { entries: { subject: string; data: string; iv: string; tag: string }[] }
    const a = vault.entries.find((e) => e.subject === 'alice')
    const b = vault.entries.find((e) => e.subject === 'bob')
    if (a === undefined || b === undefined) throw new Error('both entries are expected')
    // bob's entry now holds alice's ciphertext: the associated data (subject) no longer matches.
    Object.assign(b, { data: a.data, iv: a.iv, tag: a.tag })
    await writeFile(file, JSON.stringify(vault))
    // A new session of bob's must read the vault (the one from before holds the old headers only per request).
    const bob = await connect(TOKENS.bob)
    const moved = await whoami(bob)
    expect(moved.isError).toBe(true)
    expect(moved.text).toMatch(/servers\.gh: the vault entry of "bob" fails its authentication check/)
    expect(moved.text).not.toContain(SECRETS.alice)
    // A flipped byte of alice's own ciphertext is refused the same way.
    const data = Buffer.from(a.data, 'base64')
    data[0] ^= 1
    a.data = data.toString('base64')
    await writeFile(file, JSON.stringify(vault))
    const alice = await whoami(await connect(TOKENS.alice))
    expect(alice.isError).toBe(true)
    expect(alice.text).toMatch(/the vault entry of "alice" fails its authentication check/)
    await writeFile(file, original)
  })

  it('keeps every secret out of the log and the journal, and records the credential kind', async () => {
    const journal = await readFile(path.join(dir, 'journal.jsonl'), 'utf8')
    for (const secret of [...Object.values(SECRETS), SHARED, ...Object.values(TOKENS)]) {
      expect(journal).not.toContain(secret)
      expect(gateway?.stderr()).not.toContain(secret)
    }
    const results = journal
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((r) => r.type === 'result' && r.toolName === 'gh__whoami' && r.result.isError !== true)
    expect(results.length).toBeGreaterThan(0)
    for (const record of results)
      expect(record.credential).toEqual({ kind: 'vault', upstreamSubject: record.identity.subject })
  })

  it('a key that is not the one the vault was written with reads nothing', async () => {
    const other = path.join(dir, 'other.key')
    await writeFile(other, randomBytes(32))
    const vault = new CredentialVault(path.join(dir, 'toolgate.vault.json'), readVaultKey(other))
    expect(
      vault
        .list()
        .map((e) => e.subject)
        .sort(),
    ).toEqual(['alice', 'bob'])
    expect(() => vault.get('gh', 'alice')).toThrow(/fails its authentication check/)
  })
})
