// Issue 35, items 4 (last bullet) and 6: no sticky sessions. Two `serve --http --store URL`
// processes (the built CLI, one config, one state key) on a real PostgreSQL, behind a round-robin
// proxy on 127.0.0.1 that sends each request to the next instance. A v2 SDK client pinned to
// 2026-07-28 calls one tool after another, approvals included: the input-required retry lands on
// the other instance, which opens the state sealed by the first and runs the call. The upstream
// counts every run: each call ran exactly once. A used state replayed on either instance, a state
// raced to both at once, a tampered one and another caller's one are refused (-32602), and run
// nothing; with the database down a retry is refused (-32603) without being spent, and so is a retry
// missing its answer (-32602).
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnServe, tempDir, writeConfig } from '../cli/helpers.js'
import { rawModernCall } from '../cli/raw-modern-call.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from '../store/pg-server.js'

const MODERN = '2026-07-28'
const UPSTREAM = resolve(import.meta.dirname, '../fixtures/marker-upstream.mjs')
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let pg: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
let marker: string
const children: ChildProcess[] = []
/** The two instances' endpoints (http://127.0.0.1:port/mcp). */
let instances: string[] = []
let proxy: Server
let proxyUrl: string
/** What went through the proxy: which instance took it, and the JSON-RPC body. */
const routed: { instance: number; body: { method?: string; params?: Record<string, unknown> } }[] = []
let said = ''

async function serve(config: string, url: string, keyFile: string): Promise<string> {
  const served = await spawnServe(['--http', '0', '--config', config, '--store', url], {
    env: { TOOLGATE_STATE_KEY_FILE: keyFile },
    children,
    onStderr: (text) => {
      said += text
    },
  })
  return served.url
}

/** A round-robin HTTP proxy: request n goes to instance n mod 2, streamed both ways. */
function roundRobin(): Promise<Server> {
  let next = 0
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const instance = next++ % 2
      const body = Buffer.concat(chunks)
      try {
        routed.push({ instance, body: body.length > 0 ? JSON.parse(body.toString('utf8')) : {} })
      } catch {
        routed.push({ instance, body: {} })
      }
      const target = new URL(instances[instance])
      const headers = { ...req.headers, host: target.host }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      upstream.on('error', (error) => {
        res.writeHead(502).end(String(error))
      })
      upstream.end(body)
    })
  })
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)))
}

beforeAll(async () => {
  pg = await startPgServer()
  work = await tempDir()
  const url = pg.createDatabase('round_robin')
  marker = join(work.dir, 'marker')
  writeFileSync(marker, '')
  const keyFile = join(work.dir, 'state.key')
  writeFileSync(keyFile, 'round-robin-test-state-key-0123456789')
  const config = await writeConfig(work.dir, {
    files: false,
    auth: {
      tokens: [
        { sha256: sha256('alice-token'), subject: 'alice' },
        { sha256: sha256('bob-token'), subject: 'bob' },
      ],
    },
    servers: { m: { command: process.execPath, args: [UPSTREAM, marker], prefix: '' } },
    policy: { ask: ['guarded'] },
  })
  // One after the other: the first applies the store's migrations, the second finds them done.
  instances = [await serve(config, url, keyFile)]
  instances.push(await serve(config, url, keyFile))
  proxy = await roundRobin()
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`
}, 120_000)

afterAll(async () => {
  await new Promise((done) => (proxy ? proxy.close(done) : done(undefined)))
  await stopChildren(children)
  pg?.destroy()
  await work?.cleanup()
})

const ran = () => readFileSync(marker, 'utf8').split('\n').filter(Boolean)

interface Reply {
  error?: { code: number; message: string }
  result?: { resultType?: string; requestState?: string; isError?: boolean; content?: unknown }
}

/** A raw 2026-07-28 tools/call to one instance, as `token`'s caller; with `retry`, the answer and state. */
const rawCall = (
  endpoint: string,
  token: string,
  name: string,
  args: Record<string, unknown>,
  retry?: { state: string; answer: unknown },
): Promise<Reply> => rawModernCall<Reply>(endpoint, token, name, args, retry)

const accept = { action: 'accept', content: { approve: true } }

/** A first round on `endpoint`: the sealed state of an approval asked for `guarded` with `args`. */
async function asked(endpoint: string, token: string, args: Record<string, unknown>): Promise<string> {
  const first = await rawCall(endpoint, token, 'guarded', args)
  expect(first.result?.resultType).toBe('input_required')
  expect(typeof first.result?.requestState).toBe('string')
  return first.result?.requestState as string
}

describe('two instances behind a round-robin proxy (issue 35, items 4 and 6)', { timeout: 180_000 }, () => {
  it('serve a pinned 2026-07-28 client call after call, approvals included; each call runs once', async () => {
    let answers = 0
    const decisions = [true, false]
    const client = new Client(
      { name: 'round-robin', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: { form: {} } } },
    )
    client.setRequestHandler('elicitation/create', async () => {
      const approve = decisions[answers++]
      return approve ? { action: 'accept', content: { approve: true } } : { action: 'decline' }
    })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(proxyUrl), {
        requestInit: { headers: { authorization: 'Bearer alice-token' } },
      }),
    )
    try {
      const text = (result: unknown) => JSON.stringify((result as { content?: unknown }).content)
      const first = await client.callTool({ name: 'step', arguments: { n: 1 } })
      expect(text(first)).toContain('step 1 done')
      const approved = await client.callTool({ name: 'guarded', arguments: { n: 2 } })
      expect(approved.isError, said.slice(-2000)).not.toBe(true)
      expect(text(approved)).toContain('guarded 2 done')
      expect(text(await client.callTool({ name: 'step', arguments: { n: 3 } }))).toContain('step 3 done')
      const declined = await client.callTool({ name: 'guarded', arguments: { n: 4 } })
      expect(declined.isError).toBe(true)
      expect(text(declined)).toMatch(/declined/)
      expect(text(await client.callTool({ name: 'step', arguments: { n: 5 } }))).toContain('step 5 done')
      expect(answers).toBe(2)
    } finally {
      await client.close()
    }
    // Each call ran exactly once; the declined one never.
    expect(ran()).toEqual(['step:1', 'guarded:2', 'step:3', 'step:5'])

    // Both instances served the client, and each approval's retry went to the other instance.
    const calls = routed.filter((r) => r.body.method === 'tools/call')
    expect(new Set(calls.map((r) => r.instance))).toEqual(new Set([0, 1]))
    const retries = calls.filter((r) => typeof r.body.params?.requestState === 'string')
    expect(retries).toHaveLength(2)
    for (const retry of retries) {
      const round = calls.indexOf(retry)
      expect(calls[round - 1].body.params?.requestState).toBeUndefined()
      expect(calls[round - 1].instance).not.toBe(retry.instance)
    }

    // The used state of the approved call, replayed on each instance: refused, and nothing runs.
    const used = retries[0].body.params as { requestState: string; arguments: Record<string, unknown> }
    expect(used.arguments).toEqual({ n: 2 })
    for (const endpoint of instances) {
      const replay = await rawCall(endpoint, 'alice-token', 'guarded', used.arguments, {
        state: used.requestState,
        answer: accept,
      })
      expect(replay.error?.code).toBe(-32602)
      expect(replay.error?.message).toMatch(/already been used/)
    }
    expect(ran()).toEqual(['step:1', 'guarded:2', 'step:3', 'step:5'])
  })

  it('a state sent to both instances at once runs the call once', async () => {
    const before = ran().length
    const args = { n: 6 }
    const state = await asked(instances[0], 'alice-token', args)
    const replies = await Promise.all(
      instances.map((endpoint) => rawCall(endpoint, 'alice-token', 'guarded', args, { state, answer: accept })),
    )
    const accepted = replies.filter((reply) => reply.error === undefined)
    expect(accepted).toHaveLength(1)
    expect(accepted[0].result?.isError).not.toBe(true)
    const refused = replies.filter((reply) => reply.error !== undefined)
    expect(refused.map((reply) => reply.error?.code)).toEqual([-32602])
    expect(refused[0].error?.message).toMatch(/already been used/)
    expect(ran().slice(before)).toEqual(['guarded:6'])
  })

  it("refuses on the other instance a tampered state and another caller's state; nothing runs", async () => {
    const before = ran().length
    const args = { n: 7 }
    const state = await asked(instances[0], 'alice-token', args)
    // Another caller (bob) presenting alice's state on the other instance.
    const foreign = await rawCall(instances[1], 'bob-token', 'guarded', args, { state, answer: accept })
    expect(foreign.error?.code).toBe(-32602)
    expect(foreign.error?.message).toMatch(/another caller/)
    // The same state with its expiry pushed out, its seal kept.
    const [name, version, body, mac] = state.split('.')
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>
    const forged = Buffer.from(JSON.stringify({ ...decoded, expires: Date.now() + 365 * 86_400_000 })).toString(
      'base64url',
    )
    const tampered = await rawCall(instances[1], 'alice-token', 'guarded', args, {
      state: `${name}.${version}.${forged}.${mac}`,
      answer: accept,
    })
    expect(tampered.error?.code).toBe(-32602)
    expect(tampered.error?.message).toMatch(/seal does not verify/)
    expect(ran().length).toBe(before)
    // Refusals spend nothing: alice's own retry on the other instance still runs, once.
    const retried = await rawCall(instances[1], 'alice-token', 'guarded', args, { state, answer: accept })
    expect(retried.error).toBeUndefined()
    expect(ran().slice(before)).toEqual(['guarded:7'])
  })

  it('a retry missing its answer is refused and spends nothing; the complete retry runs once on the other instance', async () => {
    const before = ran().length
    const args = { n: 9 }
    const state = await asked(instances[0], 'alice-token', args)
    const missing = await rawCall(instances[0], 'alice-token', 'guarded', args, { state, answer: undefined })
    expect(missing.error?.code).toBe(-32602)
    expect(missing.error?.message).toMatch(/inputResponses\.toolgate\/approval: expected the answer/)
    expect(ran().length).toBe(before)
    const retried = await rawCall(instances[1], 'alice-token', 'guarded', args, { state, answer: accept })
    expect(retried.error).toBeUndefined()
    expect(retried.result?.isError).not.toBe(true)
    expect(ran().slice(before)).toEqual(['guarded:9'])
    const replay = await rawCall(instances[0], 'alice-token', 'guarded', args, { state, answer: accept })
    expect(replay.error?.code).toBe(-32602)
    expect(replay.error?.message).toMatch(/already been used/)
    expect(ran().slice(before)).toEqual(['guarded:9'])
  })

  it('a retry while the store is down is refused with -32603 and runs nothing; the same retry works once it is back', async () => {
    const before = ran().length
    const args = { n: 8 }
    const state = await asked(instances[0], 'alice-token', args)
    pg.stop()
    try {
      const refused = await rawCall(instances[1], 'alice-token', 'guarded', args, { state, answer: accept })
      expect(refused.error?.code).toBe(-32603)
      expect(refused.error?.message).toMatch(/requestState could not be checked/)
      expect(refused.error?.message).toMatch(/nothing ran, retry later/)
      // Where the store lives is not the client's business.
      expect(refused.error?.message).not.toMatch(/postgres|127\.0\.0\.1/i)
    } finally {
      pg.start()
    }
    expect(ran().length).toBe(before)
    // The state was not spent: once the database is back, the same retry runs the call, once.
    const deadline = Date.now() + 60_000
    let retried = await rawCall(instances[1], 'alice-token', 'guarded', args, { state, answer: accept })
    while (retried.error?.code === -32603 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 200))
      retried = await rawCall(instances[1], 'alice-token', 'guarded', args, { state, answer: accept })
    }
    expect(retried.error).toBeUndefined()
    expect(ran().slice(before)).toEqual(['guarded:8'])
  })
})
