// Issue 40, item 2, and issue 35, item 4 (R-EXEC-4, R-CODE-2, R-SCHED-3): a Code Mode program kept for an MCP 2026-07-28
// client, which holds no connection. Two `serve --http --store` processes (the built CLI, one state
// key) on a real PostgreSQL; a v2 SDK client pinned to 2026-07-28 runs a program A, B (needs
// approval), C. Its run_code call answers input-required with a sealed state naming the kept
// program; the client's retry lands on the other instance, which records the decision and resumes
// the program from its replay log: A, B and C each ran once, and the result equals an uninterrupted
// run's. Then, on raw requests: one instance killed and restarted between ask and retry, a declined
// approval (rejects inside the program), two approvals in Promise.all (two rounds), and the hostile cases (a
// replayed, a tampered, another caller's state, a retry after the program ended), which run nothing.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { BIN, tempDir, writeConfig } from '../cli/helpers.js'
import type { ModernReply } from '../cli/raw-modern-call.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { keptOf } from './program-gateways.js'

const MODERN = '2026-07-28'
const UPSTREAM = resolve(import.meta.dirname, '../fixtures/marker-upstream.mjs')
const KEY = 'toolgate/approval'
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
}
const CODE = [
  'const a = await tools.step({ n: 1 })',
  'const b = await tools.guarded({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, b, c }',
].join('\n')
const PROGRAM = { code: CODE, description: 'a, b, c' }

let pg: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
let marker: string
let config: string
let url: string
let keyFile: string
let store: Store
const children: ChildProcess[] = []
/** The instances' endpoints (http://127.0.0.1:port/mcp) and processes. */
const instances: { endpoint: string; child: ChildProcess }[] = []
let proxy: Server
let proxyUrl: string
/** Which instance each request through the proxy went to, with its JSON-RPC body. */
const routed: { instance: number; body: { method?: string; params?: Record<string, unknown> } }[] = []
let said = ''

function serve(configPath: string, storeUrl?: string): Promise<{ endpoint: string; child: ChildProcess }> {
  const args = [BIN, 'serve', '--http', '0', '--config', configPath, ...(storeUrl ? ['--store', storeUrl] : [])]
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TOOLGATE_STATE_KEY_FILE: keyFile },
  })
  children.push(child)
  let err = ''
  return new Promise((done, fail) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      said += chunk.toString()
      const match = /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)
      if (match) done({ endpoint: match[1], child })
    })
    child.once('exit', (code) => fail(new Error(`toolgate serve exited with ${code}: ${err}`)))
  })
}

/** A proxy that sends a first round to instance 0 and a retry (it carries a requestState) to instance 1. */
function splitProxy(): Promise<Server> {
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      let parsed: (typeof routed)[number]['body'] = {}
      try {
        parsed = body.length > 0 ? JSON.parse(body.toString('utf8')) : {}
      } catch {}
      const instance = typeof parsed.params?.requestState === 'string' ? 1 : 0
      routed.push({ instance, body: parsed })
      const target = new URL(instances[instance].endpoint)
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      upstream.on('error', (error) => res.writeHead(502).end(String(error)))
      upstream.end(body)
    })
  })
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)))
}

beforeAll(async () => {
  pg = await startPgServer()
  work = await tempDir()
  url = pg.createDatabase('programs_modern')
  marker = join(work.dir, 'marker')
  writeFileSync(marker, '')
  keyFile = join(work.dir, 'state.key')
  writeFileSync(keyFile, 'programs-modern-test-state-key-0123456789')
  config = await writeConfig(work.dir, {
    files: false,
    mode: 'code',
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
  instances.push(await serve(config, url))
  instances.push(await serve(config, url))
  proxy = await splitProxy()
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`
  store = await createPostgresStore({ connectionString: url, migrate: false })
}, 120_000)

afterAll(async () => {
  await new Promise((done) => (proxy ? proxy.close(done) : done(undefined)))
  await store?.close()
  await stopChildren(children)
  pg?.destroy()
  await work?.cleanup()
})

const ran = () => readFileSync(marker, 'utf8').split('\n').filter(Boolean)

type Reply = ModernReply

let rawId = 0
/** A raw 2026-07-28 run_code call to one endpoint as `token`'s caller; with `retry`, the answers and state. */
async function rawCall(
  endpoint: string,
  token: string,
  args: Record<string, unknown>,
  retry?: { state: string; answers: Record<string, unknown> },
): Promise<Reply> {
  const reply = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 'run_code',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++rawId,
      method: 'tools/call',
      params: {
        name: 'run_code',
        arguments: args,
        _meta: ENVELOPE,
        ...(retry ? { requestState: retry.state, inputResponses: retry.answers } : {}),
      },
    }),
  })
  const text = await reply.text()
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}')
  return JSON.parse(data) as Reply
}

const accept = { action: 'accept', content: { approve: true } }
const decline = { action: 'decline' }
const textOf = (reply: Reply) => JSON.stringify(reply.result?.structuredContent ?? reply.result?.content ?? reply)

/** A first round that pauses: its input-required result. */
async function asked(endpoint: string, token: string, args: Record<string, unknown>): Promise<Reply['result'] & {}> {
  const first = await rawCall(endpoint, token, args)
  expect(first.result?.resultType, JSON.stringify(first) + said.slice(-2000)).toBe('input_required')
  expect(typeof first.result?.requestState).toBe('string')
  return first.result as Reply['result'] & {}
}

describe('a kept program for a 2026-07-28 client (issue 40, item 2; issue 35, item 4)', { timeout: 240_000 }, () => {
  let usedRetry: { state: string; arguments: Record<string, unknown> }

  it('a v2 client: A, B (approved on the retry, on the other instance), C each run once; the result is an uninterrupted run’s', async () => {
    const questions: string[] = []
    const client = new Client(
      { name: 'programs-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: { form: {} } } },
    )
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push(String((request.params as { message?: unknown }).message))
      return { action: 'accept', content: { approve: true } }
    })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(proxyUrl), {
        requestInit: { headers: { authorization: 'Bearer alice-token' } },
      }),
    )
    let result: unknown
    try {
      result = await client.callTool({ name: 'run_code', arguments: PROGRAM })
    } finally {
      await client.close()
    }
    expect((result as { isError?: boolean }).isError, JSON.stringify(result) + said.slice(-3000)).not.toBe(true)
    expect(questions).toHaveLength(1)
    expect(questions[0]).toContain('Allow the call to guarded?')
    expect(ran()).toEqual(['step:1', 'guarded:2', 'step:3'])

    // The first round went to instance 0, its retry (with the state) to instance 1.
    const calls = routed.filter((r) => r.body.method === 'tools/call')
    expect(calls.map((r) => r.instance)).toEqual([0, 1])
    const params = calls[1].body.params as { requestState: string; arguments: Record<string, unknown> }
    usedRetry = { state: params.requestState, arguments: params.arguments }
    // The kept turn is closed, its pending calls gone.
    const turn = await store.loadTurn(keptOf(usedRetry.state)!.turn)
    expect(turn?.closed).toBe(true)
    expect(await store.pendingCalls()).toEqual([])

    // The same program on a gateway that asks nothing, without a store: the same result.
    const plainMarker = join(work.dir, 'plain-marker')
    writeFileSync(plainMarker, '')
    const plainConfig = await writeConfig(
      work.dir,
      {
        files: false,
        mode: 'code',
        servers: { m: { command: process.execPath, args: [UPSTREAM, plainMarker], prefix: '' } },
      },
      'plain.json',
    )
    const plain = await serve(plainConfig)
    const uninterrupted = await rawCall(plain.endpoint, 'none', PROGRAM)
    plain.child.kill('SIGTERM')
    expect(uninterrupted.result?.isError).not.toBe(true)
    const { content, structuredContent } = result as { content?: unknown; structuredContent?: unknown }
    expect({ content, structuredContent }).toEqual({
      content: uninterrupted.result?.content,
      structuredContent: uninterrupted.result?.structuredContent,
    })
  })

  it('a replayed retry is refused on either instance, and nothing runs again', async () => {
    const before = ran()
    for (const { endpoint } of instances) {
      const replay = await rawCall(endpoint, 'alice-token', usedRetry.arguments, {
        state: usedRetry.state,
        answers: { [KEY]: accept },
      })
      expect(replay.error?.code).toBe(-32602)
      expect(replay.error?.message).toMatch(/already been used/)
    }
    expect(ran()).toEqual(before)
  })

  it('the instance that asked is killed; the retry on it after its restart resumes the program once', async () => {
    const args = { code: CODE.replace('n: 1', 'n: 31').replace('n: 3 ', 'n: 33 '), description: 'restart' }
    const before = ran().length
    const first = await asked(instances[0].endpoint, 'alice-token', args)
    expect(Object.keys(first.inputRequests ?? {})).toEqual([KEY])
    expect(ran().slice(before)).toEqual(['step:31'])
    const dead = instances[0].child
    dead.kill('SIGKILL')
    await new Promise((done) => dead.once('exit', done))
    instances[0] = await serve(config, url)
    const retried = await rawCall(instances[0].endpoint, 'alice-token', args, {
      state: first.requestState as string,
      answers: { [KEY]: accept },
    })
    expect(retried.error, said.slice(-3000)).toBeUndefined()
    expect(retried.result?.isError, textOf(retried)).not.toBe(true)
    for (const part of ['step 31 done', 'guarded 2 done', 'step 33 done']) expect(textOf(retried)).toContain(part)
    expect(ran().slice(before)).toEqual(['step:31', 'guarded:2', 'step:33'])
  })

  it('a declined approval rejects inside the program; B never runs, C does', async () => {
    const args = {
      code: [
        'const a = await tools.step({ n: 41 })',
        'let b',
        'try { b = await tools.guarded({ n: 42 }) } catch (error) { b = "refused: " + error.message }',
        'const c = await tools.step({ n: 43 })',
        'return { a, b, c }',
      ].join('\n'),
      description: 'declined',
    }
    const before = ran().length
    const first = await asked(instances[0].endpoint, 'alice-token', args)
    const retried = await rawCall(instances[1].endpoint, 'alice-token', args, {
      state: first.requestState as string,
      answers: { [KEY]: decline },
    })
    expect(retried.error, said.slice(-3000)).toBeUndefined()
    expect(retried.result?.isError).not.toBe(true)
    expect(textOf(retried)).toMatch(/refused: .*declined/)
    expect(ran().slice(before)).toEqual(['step:41', 'step:43'])
  })

  it('two approvals in Promise.all: a round each (the upstream runs one call at a time), each runs once', async () => {
    const args = {
      code: 'return await Promise.all([tools.guarded({ n: 51 }), tools.guarded({ n: 52 })])',
      description: 'both',
    }
    const before = ran().length
    const first = await asked(instances[1].endpoint, 'alice-token', args)
    expect(Object.keys(first.inputRequests ?? {})).toEqual([KEY])
    // A retry without the answer is refused before its state is spent or anything is recorded.
    const unanswered = await rawCall(instances[0].endpoint, 'alice-token', args, {
      state: first.requestState as string,
      answers: {},
    })
    expect(unanswered.error?.code).toBe(-32602)
    expect(unanswered.error?.message).toContain(`inputResponses.${KEY}: expected the answer`)
    expect(ran().length).toBe(before)
    // The same state, answered: the first approval runs, and the program asks the second in a new round.
    const second = await rawCall(instances[0].endpoint, 'alice-token', args, {
      state: first.requestState as string,
      answers: { [KEY]: accept },
    })
    expect(second.result?.resultType, JSON.stringify(second) + said.slice(-3000)).toBe('input_required')
    expect(second.result?.inputRequests?.[KEY]?.params?.message).toContain('Allow the call to guarded?')
    expect(keptOf(second.result?.requestState)!.turn).toBe(keptOf(first.requestState)!.turn)
    expect(ran().slice(before)).toEqual(['guarded:51'])
    const retried = await rawCall(instances[1].endpoint, 'alice-token', args, {
      state: second.result?.requestState as string,
      answers: { [KEY]: accept },
    })
    expect(retried.error, said.slice(-3000)).toBeUndefined()
    for (const part of ['guarded 51 done', 'guarded 52 done']) expect(textOf(retried)).toContain(part)
    expect(ran().slice(before)).toEqual(['guarded:51', 'guarded:52'])
  })

  it("a tampered state and another caller's state are refused and run nothing; the owner's retry still works", async () => {
    const args = { code: CODE.replace('n: 1', 'n: 61').replace('n: 3 ', 'n: 63 '), description: 'hostile' }
    const before = ran().length
    const first = await asked(instances[0].endpoint, 'alice-token', args)
    const state = first.requestState as string
    // Bob presents alice's state (on the other instance).
    const foreign = await rawCall(instances[1].endpoint, 'bob-token', args, { state, answers: { [KEY]: accept } })
    expect(foreign.error?.code).toBe(-32602)
    expect(foreign.error?.message).toMatch(/another caller/)
    // The state pointed at another kept program, its seal kept.
    const [name, version, body, mac] = state.split('.')
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>
    const forged = Buffer.from(
      JSON.stringify({ ...decoded, kept: { turn: 'gateway-program:other', calls: ['x'] } }),
    ).toString('base64url')
    const tampered = await rawCall(instances[1].endpoint, 'alice-token', args, {
      state: `${name}.${version}.${forged}.${mac}`,
      answers: { [KEY]: accept },
    })
    expect(tampered.error?.code).toBe(-32602)
    expect(tampered.error?.message).toMatch(/seal does not verify/)
    expect(ran().slice(before)).toEqual(['step:61'])
    // Refusals spend nothing and decide nothing: the owner's retry resumes the program, once.
    const retried = await rawCall(instances[1].endpoint, 'alice-token', args, { state, answers: { [KEY]: accept } })
    expect(retried.error, said.slice(-3000)).toBeUndefined()
    expect(ran().slice(before)).toEqual(['step:61', 'guarded:2', 'step:63'])
  })

  it('a retry after the program already ended (approved in the viewer meanwhile) is refused, and nothing re-runs', async () => {
    const args = { code: CODE.replace('n: 1', 'n: 71').replace('n: 3 ', 'n: 73 '), description: 'finished' }
    const before = ran().length
    const first = await asked(instances[0].endpoint, 'alice-token', args)
    const { turn, calls } = keptOf(first.requestState)!
    // The operator approves B in the store (as the viewer does); a keeper resumes the program to its end.
    expect(await store.decide(turn, calls[0], { kind: 'allowed-once', decidedBy: 'operator' })).toEqual({
      applied: true,
    })
    const deadline = Date.now() + 90_000
    while (!(await store.loadTurn(turn))?.closed) {
      if (Date.now() > deadline)
        throw new Error(`the program was not resumed; the gateways said:\n${said.slice(-3000)}`)
      await new Promise((done) => setTimeout(done, 50))
    }
    expect(ran().slice(before)).toEqual(['step:71', 'guarded:2', 'step:73'])
    const late = await rawCall(instances[1].endpoint, 'alice-token', args, {
      state: first.requestState as string,
      answers: { [KEY]: accept },
    })
    expect(late.error?.code).toBe(-32602)
    expect(late.error?.message).toMatch(/already finished/)
    expect(ran().slice(before)).toEqual(['step:71', 'guarded:2', 'step:73'])
  })
})
