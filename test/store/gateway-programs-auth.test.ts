// Issue 40, item 2 (last bullet), for authenticated callers (issue 24, item 1): `serve --http --store` with
// OAuth (JWTs signed with jose) keeps a run_code program of an identity bound to that identity. The
// gateway is killed (SIGKILL) while B waits; after the restart, another identity that names its
// program the same gets nothing of it, the owner waits for it again by its name on a new
// connection, B is approved in the viewer, and the owner gets the result: A, B and C each ran once,
// under the owner's identity in the journal.
import type { ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { namedProgramTurnId } from '../../src/gateway/program-keeper.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { spawnServe, tempDir } from '../cli/helpers.js'
import { type AuthServer, startAuthServer } from '../cli/oauth-server.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { ABC_CODE, bearerClient, closeAndKill, pausedCalls, programFiles } from './program-gateways.js'
import { until as waitUntil } from './until.js'
import { approveInViewer as approveInStoreViewer } from './viewer-approval.js'

let server: PgServer
let as: AuthServer
let audience = ''
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
const closers: (() => Promise<unknown>)[] = []
/** What the gateways wrote to stderr, for a failure's message. */
let said = ''

beforeAll(async () => {
  server = await startPgServer()
  work = await tempDir()
  as = await startAuthServer({ clients: {}, audience: () => audience })
}, 120_000)
afterAll(async () => {
  await closeAndKill(closers, children)
  await as?.close()
  server?.destroy()
  await work?.cleanup()
})

/** How long to wait on the gateways, and what they said when that runs out. */
const waiting = { timeoutMs: 90_000, context: () => `the gateways said:\n${said.slice(-4000)}` }
const until = <T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> =>
  waitUntil(check, what, waiting)

/** A port nobody listens on now: the token's audience names the gateway's port, the same after the restart. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((done) => probe.close(() => done()))
  return port
}

async function gateway(config: string, url: string, keyFile: string, port: number): Promise<ChildProcess> {
  const { child } = await spawnServe(['--http', String(port), '--config', config, '--store', url], {
    env: { TOOLGATE_STATE_KEY_FILE: keyFile },
    children,
    onStderr: (text) => {
      said += text
    },
  })
  return child
}

/** An MCP client (without elicitation: nobody on its connection can approve) as the bearer of a JWT for `sub`. */
async function clientAs(sub: string): Promise<Client> {
  return bearerClient(audience, `test-${sub}`, await as.mint({ sub, scope: 'mcp:tools' }), closers)
}

/** Approve `callId` in a viewer over `store`, through its HTTP API. */
const approveInViewer = (store: Store, callId: string, turnId: string): Promise<Response> =>
  approveInStoreViewer(store, callId, {
    turnId,
    closers,
    wait: waiting,
  })

const PROGRAM = 'nightly-report-7'
const named = (name: string) => ({ 'toolgate/program': name })
const textOf = (result: unknown) =>
  JSON.stringify((result as { structuredContent?: unknown }).structuredContent ?? result)

describe('an identity’s gateway program survives a restart, and is only its own (issue 40, item 2)', {
  timeout: 300_000,
}, () => {
  it('A, B (approved after a SIGKILL and restart), C run once; the owner gets the result, another identity nothing', async () => {
    const port = await freePort()
    audience = `http://127.0.0.1:${port}/mcp`
    const { url, keyFile, config, ran } = await programFiles(server, work.dir, {
      database: 'programs_auth',
      key: 'gateway-programs-auth-key-0123456789',
      config: {
        auth: {
          oauth: { issuer: as.issuer, audience, jwksUri: as.jwksUri, requiredScopes: ['mcp:tools'], jwksCooldownMs: 0 },
        },
      },
    })
    const alice = { subject: 'alice', groups: [], scopes: ['mcp:tools'], claims: { iss: as.issuer } }
    const turnId = namedProgramTurnId(alice, PROGRAM)

    const first = await gateway(config, url, keyFile, port)
    const before = await clientAs('alice')
    void before
      .callTool(
        { name: 'run_code', arguments: { code: ABC_CODE, description: 'a, b, c' }, _meta: named(PROGRAM) },
        undefined,
        {
          timeout: 600_000,
        },
      )
      .catch(() => {})
    const store: Store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => store.close())
    const pending = await until(pausedCalls(store), 'the paused program in the store')
    // Kept under the owner's name for it, as the owner's scope, sealed with the owner inside.
    expect(pending).toEqual([
      expect.objectContaining({ turnId, toolName: 'guarded', agentId: expect.stringMatching(/\/alice#/) }),
    ])
    const kept = (await store.loadTurn(turnId))?.state as { seal?: string; owner?: { subject?: string } }
    expect(kept.seal).toMatch(/.+/)
    expect(kept.owner?.subject).toBe('alice')
    expect(ran()).toEqual(['step:1'])

    first.kill('SIGKILL')
    await new Promise((done) => first.once('exit', done))
    await gateway(config, url, keyFile, port)

    // Hostile: bob presents alice's program itself under the same name. He reaches nothing of
    // alice's program: it is his own new program, which runs A as bob and waits for B in a turn of
    // his own; alice's turn is not touched.
    const bob = await clientAs('bob')
    const bobCopy = bob
      .callTool(
        { name: 'run_code', arguments: { code: ABC_CODE, description: 'a, b, c' }, _meta: named(PROGRAM) },
        undefined,
        {
          timeout: 600_000,
        },
      )
      .catch((error: unknown) => error)
    const bobsTurn = await until(async () => {
      const calls = (await store.pendingCalls()).filter((c) => c.turnId !== turnId)
      return calls.length > 0 ? calls[0] : undefined
    }, "bob's own paused program")
    expect(bobsTurn.agentId).toMatch(/\/bob#/)
    expect(ran()).toEqual(['step:1', 'step:1'])
    // Bob presents other code under that name: the name is his own program's (a name names one
    // run), so he is refused, and the refusal says nothing of alice's program.
    const bobs = await bob.callTool({
      name: 'run_code',
      arguments: { code: 'return "only bob\'s"', description: 'mine' },
      _meta: named(PROGRAM),
    })
    expect(bobs.isError).toBe(true)
    expect(textOf(bobs)).toContain('PROGRAM_ID_TAKEN')
    for (const part of ['step', 'guarded', 'alice', turnId]) expect(textOf(bobs)).not.toContain(part)
    expect(ran()).toEqual(['step:1', 'step:1'])

    // The owner, on a new connection to the new gateway, waits for its program again by its name.
    const after = await clientAs('alice')
    const again = after.callTool(
      { name: 'run_code', arguments: { code: ABC_CODE, description: 'a, b, c' }, _meta: named(PROGRAM) },
      undefined,
      { timeout: 600_000 },
    )
    await until(
      () => (said.includes(`waits again for the run_code program kept in turn ${turnId}`) ? true : undefined),
      'alice to wait for her program again',
    )
    // Approve alice's B in the viewer, over HTTP.
    expect((await approveInViewer(store, pending[0].callId, turnId)).status).toBe(200)
    const result = await again
    expect(result.isError, textOf(result)).not.toBe(true)
    for (const part of ['step 1 done', 'guarded 2 done', 'step 3 done']) expect(textOf(result)).toContain(part)
    // A (before the restart), B and C (after it) each ran once for alice; bob's copy still waits.
    expect(ran()).toEqual(['step:1', 'step:1', 'guarded:2', 'step:3'])
    expect((await store.pendingCalls()).map((c) => c.turnId)).toEqual([bobsTurn.turnId])
    // Bob's waiting call got nothing: it is still open.
    let bobDone = false
    void bobCopy.then(() => {
      bobDone = true
    })
    await new Promise((done) => setImmediate(done))
    expect(bobDone).toBe(false)

    // The journal: alice's sub-calls each once, all as alice; the resumed program names its turn.
    const records: { type: string; toolName: string; identity?: { subject?: string }; storedTurnId?: string }[] = []
    for await (const { record } of store.read())
      if (record.type === 'result' && !JSON.stringify(record).includes('"APPROVAL_SUSPENDED"'))
        records.push(record as never)
    const alices = records.filter((r) => r.identity?.subject === 'alice')
    expect(alices.map((r) => r.toolName).sort()).toEqual(['guarded', 'run_code', 'step', 'step'])
    expect(alices.find((r) => r.toolName === 'run_code')?.storedTurnId).toBe(turnId)
    // Bob's journal records are his own program's A (it still waits; his refused call ran nothing),
    // never alice's sub-calls.
    expect(
      records
        .filter((r) => r.identity?.subject === 'bob')
        .map((r) => r.toolName)
        .sort(),
    ).toEqual(['step'])
  })
})
