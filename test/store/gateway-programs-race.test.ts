// Issue 40, item 2 (last bullet), across instances (issue 24, item 1): two `serve --http --store` processes
// on one PostgreSQL, callers authenticated with JWTs signed by jose. A client names its run_code
// program (`_meta["toolgate/program"]`); the name names one run on every instance:
// - calls that name the same program at the same moment, on both instances, run it once: the
//   instance that creates the program's turn runs it, every other call with its code waits for that
//   run and gets its result, a call with other code under the name is PROGRAM_ID_TAKEN, and another
//   identity's same name is a program of its own (run once among its own calls);
// - a client that waits by name on the instance that does not run the program gets the result when
//   the run on the other instance ends (the store's NOTIFY wakes it).
// The upstream's `hold` tool keeps a program mid-run until the test releases it, so the race holds
// on a loaded machine with no sleep; the marker file counts every sub-call that ran.
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { namedProgramTurnId } from '../../src/gateway/program-keeper.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { BIN, tempDir } from '../cli/helpers.js'
import { type AuthServer, startAuthServer } from '../cli/oauth-server.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { bearerClient, closeAndKill, programFiles } from './program-gateways.js'

const UPSTREAM = resolve(import.meta.dirname, '../fixtures/hold-upstream.mjs')
/** Both instances serve one resource (as behind one load balancer): a token is good on either. */
const AUDIENCE = 'https://toolgate.test/mcp'
let server: PgServer
let as: AuthServer
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
const closers: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  server = await startPgServer()
  work = await tempDir()
  as = await startAuthServer({ clients: {}, audience: () => AUDIENCE })
}, 120_000)
afterAll(async () => {
  await closeAndKill(closers, children)
  await as?.close()
  server?.destroy()
  await work?.cleanup()
})

interface Gateway {
  readonly url: string
  /** What it wrote to stderr so far. */
  said(): string
}

const gateways: Gateway[] = []
const allSaid = () => gateways.map((g, i) => `--- instance ${i + 1}:\n${g.said().slice(-3000)}`).join('\n')

async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 120_000
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the gateways said:\n${allSaid()}`)
    await new Promise((done) => setTimeout(done, 25))
  }
}

function gateway(config: string, url: string, keyFile: string): Promise<Gateway> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--config', config, '--store', url], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TOOLGATE_STATE_KEY_FILE: keyFile },
  })
  children.push(child)
  let err = ''
  const said = () => err
  return new Promise((done, fail) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const at = /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)
      if (at && !gateways.some((g) => g.said === said)) {
        const g = { url: at[1], said }
        gateways.push(g)
        done(g)
      }
    })
    child.once('exit', (code) => fail(new Error(`toolgate serve exited with ${code}: ${err}`)))
  })
}

/** An MCP client (without elicitation) on `g` as the bearer of a JWT for `sub`. */
async function clientAs(g: Gateway, sub: string): Promise<Client> {
  return bearerClient(g.url, `test-${sub}`, await as.mint({ sub, scope: 'mcp:tools' }), closers)
}

const program = (n: number) =>
  [`const a = await tools.step({ n: ${n} })`, `const h = await tools.hold({ n: ${n} })`, 'return { a, h }'].join('\n')
type Outcome = { isError?: boolean; structuredContent?: unknown; content?: unknown }
const call = (client: Client, code: string, name: string): Promise<Outcome> =>
  client.callTool(
    { name: 'run_code', arguments: { code, description: 'step, then hold' }, _meta: { 'toolgate/program': name } },
    undefined,
    { timeout: 600_000 },
  ) as Promise<Outcome>
const textOf = (result: unknown) =>
  JSON.stringify((result as { structuredContent?: unknown }).structuredContent ?? result)
const waitsAgain = (turnId: string) =>
  gateways.reduce(
    (n, g) => n + g.said().split(`waits again for the run_code program kept in turn ${turnId}`).length - 1,
    0,
  )
const identity = (subject: string) => ({ subject, groups: [], scopes: ['mcp:tools'], claims: { iss: as.issuer } })

describe('a named program runs once across two instances (issue 40, item 2)', { timeout: 600_000 }, () => {
  let store: Store
  let marker = ''
  const ran = () => readFileSync(marker, 'utf8').split('\n').filter(Boolean)
  const release = () => writeFileSync(`${marker}.release`, '')

  beforeAll(async () => {
    const files = await programFiles(server, work.dir, {
      database: 'programs_race',
      key: 'gateway-programs-race-key-0123456789',
      upstream: UPSTREAM,
      config: {
        policy: undefined,
        auth: {
          oauth: {
            issuer: as.issuer,
            audience: AUDIENCE,
            jwksUri: as.jwksUri,
            requiredScopes: ['mcp:tools'],
            jwksCooldownMs: 0,
          },
        },
      },
    })
    const { url, keyFile, config } = files
    marker = files.marker
    // The first instance migrates the store; the second starts beside it.
    await gateway(config, url, keyFile)
    await gateway(config, url, keyFile)
    store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => store.close())
  }, 180_000)

  it('eight calls naming one program at once on two instances: each program runs once, its callers share its result', async () => {
    const [one, two] = gateways
    const NAME = 'race-report'
    // Alice's program (step 1) from two clients on each instance, the same name with other code
    // (step 2) from one client on each, and bob's program of that name (step 5) from one on each.
    const clients = await Promise.all([
      ...[one, one, two, two].map((g) => clientAs(g, 'alice').then((c) => ({ c, who: 'alice', n: 1 }))),
      ...[one, two].map((g) => clientAs(g, 'alice').then((c) => ({ c, who: 'alice', n: 2 }))),
      ...[one, two].map((g) => clientAs(g, 'bob').then((c) => ({ c, who: 'bob', n: 5 }))),
    ])
    const calls = clients.map(({ c, n }) => call(c, program(n), NAME))
    const settled: (Outcome | undefined)[] = clients.map(() => undefined)
    for (const [i, p] of calls.entries())
      p.then(
        (r) => {
          settled[i] = r
        },
        (error: unknown) => {
          settled[i] = { isError: true, content: String(error) }
        },
      )

    // Two programs hold: alice's (whichever code took the name) and bob's.
    const holding = await until(() => {
      const holds = ran().filter((line) => line.startsWith('hold:'))
      return holds.length === 2 ? ran() : undefined
    }, 'two programs to hold')
    const aliceN = holding.includes('step:1') ? 1 : 2
    expect(holding.sort()).toEqual([`hold:${aliceN}`, 'hold:5', `step:${aliceN}`, 'step:5'])
    // Every other call is judged by the turn that holds its name: alice's calls with other code are
    // refused at once; her calls with the running code, and bob's other call, wait for that run.
    const aliceTurn = namedProgramTurnId(identity('alice'), NAME)
    const bobTurn = namedProgramTurnId(identity('bob'), NAME)
    const same = clients.filter((x) => x.who === 'alice' && x.n === aliceN).length
    await until(
      () => (waitsAgain(aliceTurn) === same - 1 && waitsAgain(bobTurn) === 1 ? true : undefined),
      'the other calls to wait for the running programs',
    )
    await until(
      () => (clients.every((x, i) => x.who !== 'alice' || x.n === aliceN || settled[i]) ? true : undefined),
      'the calls with other code to be refused',
    )
    for (const [i, x] of clients.entries())
      if (x.who === 'alice' && x.n !== aliceN) {
        expect(settled[i]?.isError, textOf(settled[i])).toBe(true)
        expect(textOf(settled[i])).toContain('PROGRAM_ID_TAKEN')
      } else expect(settled[i]).toBeUndefined()
    // Both turns hold their names without a pending call (nothing waits for a person).
    expect(await store.pendingCalls()).toEqual([])
    expect(await store.loadTurn(aliceTurn)).toMatchObject({ closed: false })

    release()
    const results = await Promise.all(calls)
    // Nothing ran twice: one step and one hold for each program.
    expect(ran().sort()).toEqual([`hold:${aliceN}`, 'hold:5', `step:${aliceN}`, 'step:5'])
    const answers = (who: string, n: number) =>
      results.filter((_, i) => clients[i].who === who && clients[i].n === n).map(textOf)
    const alices = answers('alice', aliceN)
    expect(alices).toHaveLength(same)
    expect(alices[0]).toContain(`step ${aliceN} done`)
    expect(alices[0]).toContain(`hold ${aliceN} released`)
    for (const answer of alices) expect(answer).toBe(alices[0])
    const bobs = answers('bob', 5)
    expect(bobs[0]).toContain('step 5 done')
    expect(bobs[1]).toBe(bobs[0])
    for (const answer of [...alices, ...bobs]) expect(answer).not.toContain('isError')

    // The name's turn is closed with the result sealed in it: a later call by name, on either
    // instance, answers that result and runs nothing.
    expect(await store.loadTurn(aliceTurn)).toMatchObject({ closed: true })
    for (const g of [one, two]) {
      const later = await call(await clientAs(g, 'alice'), program(aliceN), NAME)
      expect(textOf(later)).toBe(alices[0])
    }
    expect(ran()).toHaveLength(4)

    // The journal: alice's program and its sub-calls each once, as alice.
    const records: { type: string; toolName: string; identity?: { subject?: string } }[] = []
    for await (const { record } of store.read()) if (record.type === 'result') records.push(record as never)
    expect(
      records
        .filter((r) => r.identity?.subject === 'alice')
        .map((r) => r.toolName)
        .sort(),
    ).toEqual(['hold', 'run_code', 'step'])
  })

  it('a client that waits by name on the other instance gets the result when the run there ends', async () => {
    const [one, two] = gateways
    const NAME = 'cross-instance'
    writeFileSync(marker, '')
    // A fresh hold: the release file of the race above is gone.
    rmSync(`${marker}.release`, { force: true })
    const turnId = namedProgramTurnId(identity('alice'), NAME)
    const first = call(await clientAs(one, 'alice'), program(7), NAME)
    await until(() => (ran().includes('hold:7') ? true : undefined), 'the program to hold on instance 1')
    // The run is instance 1's: the turn holds the name; instance 2 never starts it.
    const before = two.said().split(`waits again for the run_code program kept in turn ${turnId}`).length
    const again = call(await clientAs(two, 'alice'), program(7), NAME)
    await until(
      () =>
        two.said().split(`waits again for the run_code program kept in turn ${turnId}`).length > before
          ? true
          : undefined,
      'the client on instance 2 to wait',
    )
    release()
    const [there, here] = await Promise.all([first, again])
    expect(textOf(there)).toContain('hold 7 released')
    expect(textOf(here)).toBe(textOf(there))
    expect(here.isError).not.toBe(true)
    expect(ran()).toEqual(['step:7', 'hold:7'])
  })
})
