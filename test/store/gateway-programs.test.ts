// Issue 40, item 2 (last bullet): `serve --http --store` with a state key keeps a run_code program
// whose sub-call waits for an approver in the viewer. The gateway is killed (SIGKILL) while B waits;
// a new gateway on the same PostgreSQL resumes the program from its sealed replay log once B is
// approved in the viewer over HTTP: A, B and C each run exactly once, and the result is journaled.
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { spawnServe, tempDir } from '../cli/helpers.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { closeAndKill, pausedCalls, programFiles } from './program-gateways.js'
import { until as waitUntil } from './until.js'
import { approveInViewer as approveInStoreViewer } from './viewer-approval.js'

let server: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
const closers: (() => Promise<unknown>)[] = []
/** What the gateways wrote to stderr, for a failure's message. */
let said = ''

beforeAll(async () => {
  server = await startPgServer()
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  await closeAndKill(closers, children)
  server?.destroy()
  await work?.cleanup()
})

/** How long to wait on the gateways, and what they said when that runs out. */
const waiting = { timeoutMs: 90_000, context: () => `the gateways said:\n${said.slice(-4000)}` }
const until = <T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> =>
  waitUntil(check, what, waiting)

async function gateway(
  config: string,
  url: string,
  keyFile: string,
): Promise<{ child: ChildProcess; endpoint: string }> {
  const { child, url: endpoint } = await spawnServe(['--http', '0', '--config', config, '--store', url], {
    env: { TOOLGATE_STATE_KEY_FILE: keyFile },
    children,
    onStderr: (text) => {
      said += text
    },
  })
  return { child, endpoint }
}

/** A result record of a call that paused (the first run's run_code and B): not a run. */
const suspended = (record: unknown) => JSON.stringify(record).includes('"APPROVAL_SUSPENDED"')

/** Approve `callId` in a viewer over `store`, through its HTTP API. */
const approveInViewer = (store: Store, callId: string, turnId?: string): Promise<Response> =>
  approveInStoreViewer(store, callId, {
    turnId,
    closers,
    wait: waiting,
  })

const CODE = [
  'const a = await tools.step({ n: 1 })',
  'const id = Array.from(crypto.getRandomValues(new Uint8Array(4))).join(".")',
  'const b = await tools.guarded({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, b, c, id }',
].join('\n')

describe('a gateway program waiting in the viewer survives a restart (issue 40, item 2)', { timeout: 240_000 }, () => {
  it('A, B (approved in the viewer after a SIGKILL), C: each runs once, and the result is journaled', async () => {
    const { url, keyFile, config, ran } = await programFiles(server, work.dir, {
      database: 'programs',
      key: 'gateway-programs-test-key-0123456789',
    })

    const first = await gateway(config, url, keyFile)
    // A client without the elicitation capability: nobody on the connection can approve B.
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(first.endpoint)))
    const call = client
      .callTool({ name: 'run_code', arguments: { code: CODE, description: 'a, b, c' } }, undefined, {
        timeout: 600_000,
      })
      .catch((error: unknown) => error)
    void call

    const store: Store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => store.close())
    const pending = await until(pausedCalls(store), 'the paused program in the store')
    expect(pending).toEqual([
      expect.objectContaining({ toolName: 'guarded', callId: expect.stringMatching(/:code:2$/) }),
    ])
    expect(ran()).toEqual(['step:1'])
    const turn = await store.loadTurn(pending[0].turnId)
    const state = turn?.state as { seal?: string; program?: { log?: { calls?: unknown[] } } }
    expect(state.seal).toMatch(/.+/)
    expect(state.program?.log?.calls).toHaveLength(2)

    first.child.kill('SIGKILL')
    await new Promise((done) => first.child.once('exit', done))
    await gateway(config, url, keyFile)

    // Approve B in the viewer, over HTTP.
    expect((await approveInViewer(store, pending[0].callId)).status).toBe(200)

    // The new gateway resumes the program: B and C run, A does not run again.
    const result = await until(async () => {
      for await (const { record } of store.read()) {
        const r = record as unknown as { type: string; toolName: string; result?: { isError?: boolean } }
        if (r.type === 'result' && r.toolName === 'run_code' && !suspended(r)) return r
      }
      return undefined
    }, 'the program result in the journal')
    expect(result.result?.isError, JSON.stringify(result)).toBe(false)
    expect(ran()).toEqual(['step:1', 'guarded:2', 'step:3'])
    expect(JSON.stringify(result)).toContain('step 3 done')
    // The turn is closed once the program ended: nothing is left to decide.
    await until(async () => ((await store.pendingCalls()).length === 0 ? true : undefined), 'the turn to close')
    // Exactly once, also in the journal: one result record per sub-call.
    const results: string[] = []
    for await (const { record } of store.read())
      if (record.type === 'result' && !suspended(record)) results.push(record.toolName)
    expect(results.sort()).toEqual(['guarded', 'run_code', 'step', 'step'])
  })

  it('the client still waiting on the gateway gets the result once B is approved in the viewer', async () => {
    const { url, marker, keyFile, config } = await programFiles(server, work.dir, {
      database: 'programs_live',
      suffix: '-live',
      key: 'gateway-programs-live-key-0123456789',
    })
    const { endpoint } = await gateway(config, url, keyFile)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)))
    closers.push(() => client.close())
    const call = client.callTool({ name: 'run_code', arguments: { code: CODE, description: 'a, b, c' } }, undefined, {
      timeout: 600_000,
    })
    const store: Store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => store.close())
    const pending = await until(pausedCalls(store), 'the paused program in the store')
    expect((await approveInViewer(store, pending[0].callId)).status).toBe(200)
    const result = (await call) as { isError?: boolean; structuredContent?: { result?: Record<string, unknown> } }
    expect(result.isError).not.toBe(true)
    const text = JSON.stringify(result.structuredContent?.result)
    for (const part of ['step 1 done', 'guarded 2 done', 'step 3 done']) expect(text).toContain(part)
    expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean)).toEqual(['step:1', 'guarded:2', 'step:3'])
  })

  it('a kept program whose log was edited in the store is left alone, even when decided', async () => {
    const { url, marker, keyFile, config } = await programFiles(server, work.dir, {
      database: 'programs_tampered',
      suffix: '-tampered',
      key: 'gateway-programs-tamper-key-0123456789',
    })
    const { endpoint } = await gateway(config, url, keyFile)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)))
    closers.push(() => client.close())
    void client
      .callTool({ name: 'run_code', arguments: { code: CODE, description: 'a, b, c' } }, undefined, {
        timeout: 600_000,
      })
      .catch(() => {})
    const store: Store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => store.close())
    const pending = await until(pausedCalls(store), 'the paused program in the store')
    // A copy whose first sub-call's recorded result was edited (the seal no longer verifies).
    const state = structuredClone((await store.loadTurn(pending[0].turnId))?.state) as {
      program: { log: { calls: { outcome?: unknown }[] } }
    }
    state.program.log.calls[0].outcome = { ok: true, value: 'forged' }
    const forged = 'gateway-program:forged'
    await store.saveTurn(forged, state as never)
    expect((await approveInViewer(store, pending[0].callId, forged)).status).toBe(200)
    await until(
      () => (said.includes(`program turn ${forged} is not sealed with this gateway's state key`) ? true : undefined),
      'the gateway to refuse the edited turn',
    )
    expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean)).toEqual(['step:1'])
  })
  // Issue 40, item 2 ("approvals inside Promise.all branches work, each exactly once"): two
  // guarded sub-calls in one Promise.all, each approved in the viewer in turn; the client waiting on
  // the gateway gets the result, and every sub-call ran exactly once.
  it('two approvals inside Promise.all branches: both honoured, each sub-call runs once', async () => {
    const { url, marker, keyFile, config } = await programFiles(server, work.dir, {
      database: 'programs_branches',
      suffix: '-branches',
      key: 'gateway-programs-branches-key-0123456789',
    })
    const { endpoint } = await gateway(config, url, keyFile)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)))
    closers.push(() => client.close())
    const code = [
      'const a = await tools.step({ n: 1 })',
      'const [b, d] = await Promise.all([tools.guarded({ n: 2 }), tools.guarded({ n: 4 })])',
      'const c = await tools.step({ n: 3 })',
      'return { a, b, d, c }',
    ].join('\n')
    const call = client.callTool({ name: 'run_code', arguments: { code, description: 'a, b|d, c' } }, undefined, {
      timeout: 600_000,
    })
    const store: Store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => store.close())
    const approved = new Set<string>()
    // Approve whatever waits, until the program has no more waiting sub-calls.
    const settled = call.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    )
    let done: { value?: unknown; error?: unknown } | undefined
    void settled.then((value) => {
      done = value
    })
    while (done === undefined) {
      const next = await until(async () => {
        if (done !== undefined) return 'done'
        const calls = (await store.pendingCalls()).filter((c) => !approved.has(c.callId))
        return calls.length > 0 ? calls : undefined
      }, 'a waiting sub-call or the result')
      if (next === 'done') break
      for (const pending of next) {
        expect(pending.toolName).toBe('guarded')
        approved.add(pending.callId)
        expect((await approveInViewer(store, pending.callId, pending.turnId)).status).toBe(200)
      }
    }
    const result = (await call) as { isError?: boolean; structuredContent?: { result?: Record<string, unknown> } }
    expect(result.isError, JSON.stringify(result)).not.toBe(true)
    const text = JSON.stringify(result.structuredContent?.result)
    for (const part of ['step 1 done', 'guarded 2 done', 'guarded 4 done', 'step 3 done']) expect(text).toContain(part)
    expect(approved.size).toBe(2)
    const ran = readFileSync(marker, 'utf8').split('\n').filter(Boolean)
    expect(ran.sort()).toEqual(['guarded:2', 'guarded:4', 'step:1', 'step:3'])
  })
})
