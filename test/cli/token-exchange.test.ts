// Issue 39 items 1, 4 and 5: an HTTP upstream called with each caller's own rights through RFC 8693
// token exchange, one upstream session per caller, the cache kept apart by caller and renewed on
// expiry and on a 401, and a static-token caller refused with the server's name.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EchoUpstream, type ExchangeServer, startEchoUpstream, startExchangeServer } from './exchange-servers.js'
import { BIN, tempDir, textOf, writeConfig } from './helpers.js'

const SECRET = 'gateway-client-secret-7f3a'
const STATIC = 'carol-static-token-0123456789'

let dir: string
let cleanup: () => Promise<void>
let as: ExchangeServer
let upstream: EchoUpstream
let gateway: { url: string; stderr: () => string; child: ChildProcess }
let audience = ''
const clients: Client[] = []

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  clients.push(client)
  return client
}

/** The bearer token the upstream saw on the call, and the one its session was opened with. */
async function whoami(client: Client): Promise<{ call: string; session: string; isError: boolean; text: string }> {
  const result = await client.callTool({ name: 'gh__whoami', arguments: {} })
  const text = textOf(result)
  const [call, session] = text
    .split(' | ')
    .map((digest) => (upstream.seen.get(digest) ?? digest).replace(/^Bearer /, ''))
  return { call, session, isError: result.isError === true, text }
}

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  as = await startExchangeServer({ id: 'gateway', secret: SECRET })
  upstream = await startEchoUpstream()
  await writeFile(path.join(dir, 'client-secret'), `${SECRET}\n`)
  const port = await freePort()
  audience = `http://127.0.0.1:${port}/mcp`
  const config = await writeConfig(dir, {
    files: false,
    journal: 'journal.jsonl',
    // 100 calls of each caller at once, and 200 upstream calls at once.
    limits: { concurrency: 200, upstreamConcurrency: 200, rate: { perSecond: 1000, burst: 1000 } },
    auth: {
      oauth: { issuer: as.issuer, audience, jwksUri: as.jwksUri },
      tokens: [{ sha256: createHash('sha256').update(STATIC).digest('hex'), subject: 'carol' }],
    },
    servers: {
      gh: {
        url: upstream.url,
        auth: {
          tokenExchange: {
            tokenEndpoint: as.tokenEndpoint,
            clientId: 'gateway',
            clientSecretFile: 'client-secret',
            audience: 'github',
            actor: true,
          },
        },
      },
    },
  })
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--http', String(port), '--config', config, '--log-level', 'debug'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let err = ''
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      if (/serving MCP at/.test(err)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  gateway = { url: audience, stderr: () => err, child }
}, 60_000)

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  if (gateway?.child.exitCode === null) {
    const exited = new Promise((resolve) => gateway.child.once('exit', resolve))
    gateway.child.kill('SIGTERM')
    await exited
  }
  await upstream?.close()
  await as?.close()
  await cleanup?.()
})

describe('token exchange (issue 39, items 1, 4, 5)', { timeout: 60_000 }, () => {
  it("carries alice's exchanged token on alice's calls and bob's on bob's, at 200 concurrent calls", async () => {
    const aliceToken = await as.mint('alice', audience)
    const bobToken = await as.mint('bob', audience)
    const [alice, bob] = await Promise.all([connect(aliceToken), connect(bobToken)])
    const calls = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 'alice' : 'bob'))
    const seen = await Promise.all(
      calls.map((who) => whoami(who === 'alice' ? alice : bob).then((r) => ({ who, ...r }))),
    )
    for (const { who, call, session, isError, text } of seen) {
      expect(isError, text).toBe(false)
      const claims = decodeJwt(call)
      expect(claims.sub).toBe(who)
      expect(claims.aud).toBe('github')
      // Delegation: the gateway is the actor.
      expect(claims.act).toEqual({ sub: 'gateway' })
      // The session the call ran on was opened with the same person's token: never a shared session.
      expect(decodeJwt(session).sub).toBe(who)
      // The caller's own token never reaches the upstream.
      expect(call).not.toBe(aliceToken)
      expect(call).not.toBe(bobToken)
    }
    // Cached per caller: one exchange each, however many calls.
    expect(as.exchanges.filter((e) => e.subject === 'alice')).toHaveLength(1)
    expect(as.exchanges.filter((e) => e.subject === 'bob')).toHaveLength(1)
    expect(as.exchanges.every((e) => e.actor === 'gateway' && e.audience === 'github')).toBe(true)
  })

  it('exchanges again once when the upstream answers 401 to the cached token', async () => {
    const alice = await connect(await as.mint('alice', audience))
    const before = await whoami(alice)
    const exchanges = as.exchanges.length
    upstream.revoked.add(`Bearer ${before.call}`)
    const refusals = upstream.refusals
    const after = await whoami(alice)
    expect(after.isError, after.text).toBe(false)
    expect(after.call).not.toBe(before.call)
    expect(decodeJwt(after.call).sub).toBe('alice')
    expect(as.exchanges.length).toBe(exchanges + 1)
    expect(upstream.refusals).toBe(refusals + 1)
    // The next call uses the renewed token, without another exchange.
    expect((await whoami(alice)).call).toBe(after.call)
    expect(as.exchanges.length).toBe(exchanges + 1)
  })

  it('exchanges again when the cached token expires', async () => {
    as.ttl = 2
    const dave = await connect(await as.mint('dave', audience))
    const first = await whoami(dave)
    // The gateway received the token before the call returned, so it is due 2 s after this at the latest.
    const due = Date.now() + 2000
    const count = () => as.exchanges.filter((e) => e.subject === 'dave').length
    expect(count()).toBe(1)
    while (Date.now() <= due) await new Promise((resolve) => setTimeout(resolve, 100))
    const second = await whoami(dave)
    expect(second.isError, second.text).toBe(false)
    expect(second.call).not.toBe(first.call)
    expect(count()).toBe(2)
    as.ttl = 600
  })

  it('refuses a returned token whose subject is not the caller (hostile token endpoint)', async () => {
    as.impostor.set('mallory', 'alice')
    const mallory = await connect(await as.mint('mallory', audience))
    const result = await whoami(mallory)
    expect(result.isError).toBe(true)
    expect(result.text).toMatch(/servers\.gh: the token endpoint answered with a token for another subject/)
    expect(result.text).not.toMatch(/eyJ/)
  })

  it('refuses a static-token caller with an error that names the server', async () => {
    const carol = await connect(STATIC)
    const result = await whoami(carol)
    expect(result.isError).toBe(true)
    expect(result.text).toMatch(/servers\.gh exchanges the caller's OAuth token/)
    expect(result.text).toMatch(/"carol" did not sign in with an OAuth token/)
  })

  it('sends the client secret only to the token endpoint, and no secret or token reaches the log, the journal or the metrics', async () => {
    // The upstream only ever saw Bearer tokens (never the client secret's Basic header).
    expect(as.received.every((r) => r.startsWith('Basic '))).toBe(true)
    const journal = await readFile(path.join(dir, 'journal.jsonl'), 'utf8')
    const secrets = [SECRET, Buffer.from(`gateway:${SECRET}`).toString('base64'), STATIC]
    for (const secret of secrets) {
      expect(journal).not.toContain(secret)
      expect(gateway.stderr()).not.toContain(secret)
    }
    const metrics = await fetch(new URL('/metrics', gateway.url), {
      headers: { authorization: `Bearer ${await as.mint('alice', audience)}` },
    })
    expect(metrics.status).toBe(200)
    const exposed = await metrics.text()
    expect(exposed).toMatch(/gh__whoami/)
    for (const secret of secrets) expect(exposed).not.toContain(secret)
    expect(exposed).not.toMatch(/eyJ[\w-]+\.eyJ/)
    expect(journal).not.toMatch(/eyJ[\w-]+\.eyJ/)
    expect(gateway.stderr()).not.toMatch(/eyJ[\w-]+\.eyJ/)
    // Each call of the exchange server is journaled with the credential kind and who the upstream saw.
    const results = journal
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((r) => r.type === 'result' && r.toolName === 'gh__whoami' && r.result.isError !== true)
    expect(results.length).toBeGreaterThan(0)
    for (const record of results) {
      expect(record.credential.kind).toBe('exchange')
      expect(record.credential.upstreamSubject).toBe(record.identity.subject)
    }
  })
})
