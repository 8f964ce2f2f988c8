// Issue 39, item 2 with a store: `toolgate vault set|list|delete --store URL` keep each person's
// secret sealed (AES-256-GCM, subject and server as associated data) in the PostgreSQL store, and
// two `serve --store URL` instances on that database both send it; a row edited in the database
// is refused by its authentication tag; no secret reaches a log, an error, the metrics or the journal.
import type { ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EchoUpstream, startEchoUpstream } from '../cli/exchange-servers.js'
import { runCli, spawnServe, tempDir, textOf, writeConfig } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'

const TOKENS = { alice: 'alice-gateway-token-store-0123', bob: 'bob-gateway-token-store-0123' }
const SECRETS = { alice: 'ghp_alice_in_the_store_7e6d', bob: 'ghp_bob_in_the_store_2c3b' }
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let server: PgServer
let url: string
let work: { dir: string; cleanup: () => Promise<void> }
let upstream: EchoUpstream
let config: string
let keyFile: string
const children: ChildProcess[] = []
const clients: Client[] = []

interface Instance {
  endpoint: string
  metrics: string
  stderr(): string
}
let instances: Instance[] = []

/** `toolgate serve --store URL` with the vault key; resolves once it serves MCP and metrics. */
async function serve(): Promise<Instance> {
  const metricsAt = /serving metrics at (http:\/\/\S+)/
  const served = await spawnServe(['--http', '0', '--metrics-port', '0', '--config', config, '--store', url], {
    env: { TOOLGATE_VAULT_KEY_FILE: keyFile },
    children,
    ready: metricsAt,
  })
  const metrics = metricsAt.exec(served.stderr())?.[1] as string
  return { endpoint: served.url, metrics, stderr: served.stderr }
}

async function connect(instance: Instance, who: 'alice' | 'bob'): Promise<Client> {
  const client = new Client({ name: who, version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(instance.endpoint), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } },
    }),
  )
  clients.push(client)
  return client
}

/** The Authorization the upstream saw on the call, and the result's text. */
async function whoami(client: Client): Promise<{ call: string | undefined; isError: boolean; text: string }> {
  const result = await client.callTool({ name: 'gh__whoami', arguments: {} })
  const text = textOf(result)
  return { call: upstream.seen.get(text.split(' | ')[0]), isError: result.isError === true, text }
}

const vaultCli = (...args: string[]) =>
  runCli(['vault', ...args, '--config', config, '--store', url], { TOOLGATE_VAULT_KEY_FILE: keyFile })

async function setSecret(who: 'alice' | 'bob'): Promise<void> {
  const file = path.join(work.dir, `${who}.secret`)
  await writeFile(file, `${SECRETS[who]}\n`)
  const set = await vaultCli('set', '--server', 'gh', '--subject', who, '--value-file', file)
  expect(set.code, set.stderr).toBe(0)
}

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(sql, params)).rows
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('vault')
  work = await tempDir()
  upstream = await startEchoUpstream()
  keyFile = path.join(work.dir, 'vault.key')
  await writeFile(keyFile, randomBytes(32).toString('base64'))
  config = await writeConfig(work.dir, {
    files: false,
    auth: {
      tokens: [
        { sha256: sha256(TOKENS.alice), subject: 'alice' },
        { sha256: sha256(TOKENS.bob), subject: 'bob' },
      ],
    },
    servers: { gh: { url: upstream.url, auth: { perUser: { header: 'Authorization', scheme: 'Bearer' } } } },
  })
}, 120_000)

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  await killChildren(children)
  await upstream?.close()
  server?.destroy()
  await work?.cleanup()
})

describe('the credential vault in the store (issue 39, item 2)', { timeout: 120_000 }, () => {
  it('a secret set by the CLI in the store is sent by both instances; one set later is seen at once', async () => {
    await setSecret('alice')
    instances = await Promise.all([serve(), serve()])
    for (const instance of instances) {
      const alice = await whoami(await connect(instance, 'alice'))
      expect(alice.isError, alice.text).toBe(false)
      expect(alice.call).toBe(`Bearer ${SECRETS.alice}`)
    }
    const bob = await connect(instances[1], 'bob')
    const missing = await whoami(bob)
    expect(missing.isError).toBe(true)
    expect(missing.text).toMatch(/servers\.gh needs your own credential, and none is stored for "bob"/)
    await setSecret('bob')
    const found = await whoami(bob)
    expect(found.isError, found.text).toBe(false)
    expect(found.call).toBe(`Bearer ${SECRETS.bob}`)
    // Sealed at rest: the table holds no secret in the clear, and no file vault was written.
    const rows = await query<{ subject: string; data: string }>('SELECT subject, data FROM toolgate_vault')
    expect(rows.map((r) => r.subject).sort()).toEqual(['alice', 'bob'])
    const dump = JSON.stringify(rows)
    for (const secret of Object.values(SECRETS)) {
      expect(dump).not.toContain(secret)
      expect(dump).not.toContain(Buffer.from(secret).toString('base64'))
    }
  })

  it('lists names and dates only, and deletes, through --store', async () => {
    const listed = await vaultCli('list')
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/^gh\t"alice"\t\d{4}-\d\d-\d\dT/m)
    expect(listed.stdout).toMatch(/^gh\t"bob"\t/m)
    for (const secret of Object.values(SECRETS)) expect(listed.stdout).not.toContain(secret)
    const file = path.join(work.dir, 'x.secret')
    await writeFile(file, 'temporary')
    expect((await vaultCli('set', '--server', 'gh', '--subject', 'carol', '--value-file', file)).code).toBe(0)
    expect((await vaultCli('delete', '--server', 'gh', '--subject', 'carol')).code).toBe(0)
    expect((await vaultCli('list')).stdout).not.toMatch(/"carol"/)
    expect((await vaultCli('delete', '--server', 'gh', '--subject', 'carol')).code).toBe(1)
  })

  it("refuses a row edited in the database: alice's sealed secret moved under bob, or a flipped byte", async () => {
    const [a] = await query<{ iv: string; tag: string; data: string }>(
      "SELECT iv, tag, data FROM toolgate_vault WHERE subject = 'alice'",
    )
    await query("UPDATE toolgate_vault SET iv = $1, tag = $2, data = $3 WHERE subject = 'bob'", [a.iv, a.tag, a.data])
    const moved = await whoami(await connect(instances[0], 'bob'))
    expect(moved.isError).toBe(true)
    expect(moved.text).toMatch(/servers\.gh: the vault entry of "bob" fails its authentication check/)
    expect(moved.text).toMatch(/the row in the store was changed/)
    expect(moved.text).not.toContain(SECRETS.alice)
    const data = Buffer.from(a.data, 'base64')
    data[0] ^= 1
    await query("UPDATE toolgate_vault SET data = $1 WHERE subject = 'alice'", [data.toString('base64')])
    const flipped = await whoami(await connect(instances[1], 'alice'))
    expect(flipped.isError).toBe(true)
    expect(flipped.text).toMatch(/the vault entry of "alice" fails its authentication check/)
    // Set again, it works again.
    await setSecret('alice')
    expect((await whoami(await connect(instances[1], 'alice'))).call).toBe(`Bearer ${SECRETS.alice}`)
  })

  it('keeps every secret out of the logs, the metrics and the journal, which records the credential kind', async () => {
    const journal = await query<{ record: string }>('SELECT record FROM toolgate_journal ORDER BY seq')
    const text = journal.map((r) => r.record).join('\n')
    for (const instance of instances) {
      const metrics = await (await fetch(instance.metrics)).text()
      expect(metrics).toMatch(/toolgate_/)
      for (const secret of [...Object.values(SECRETS), ...Object.values(TOKENS)]) {
        expect(instance.stderr()).not.toContain(secret)
        expect(metrics).not.toContain(secret)
        expect(text).not.toContain(secret)
      }
    }
    const results = journal
      .map((r) => JSON.parse(r.record))
      .filter((r) => r.type === 'result' && r.toolName === 'gh__whoami' && r.result.isError !== true)
    expect(results.length).toBeGreaterThan(0)
    for (const record of results)
      expect(record.credential).toEqual({ kind: 'vault', upstreamSubject: record.identity.subject })
  })
})
