// What the kept-program gateway tests (gateway-programs*.test.ts) set up for a program: a database
// on the test's PostgreSQL, the upstream's marker file (the fixture upstreams append each sub-call
// that ran), a state key file and a Code Mode config naming that upstream; and their clean-up. For
// the tests across instances, two `serve --http --store` gateways on one PostgreSQL as well.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import pg from 'pg'
import { afterAll, beforeAll, expect } from 'vitest'
import { createPostgresStore, type PendingCall, type Store } from '../../src/store/index.js'
import { type ServeProcess, spawnServe, tempDir, writeConfig } from '../cli/helpers.js'
import { type ModernReply, rawModernCall } from '../cli/raw-modern-call.js'
import { killChildren, stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { until } from './until.js'

/** The upstream whose `step` and `guarded` tools append `tool:n` to the marker file. */
export const MARKER_UPSTREAM = resolve(import.meta.dirname, '../fixtures/marker-upstream.mjs')
/** The upstream whose `step` appends `step:n`; its `hold` appends `hold:n`, then answers once `<marker>.release` exists. */
export const HOLD_UPSTREAM = resolve(import.meta.dirname, '../fixtures/hold-upstream.mjs')

/** The program A, B, C: `step` 1, then `guarded` 2 (asked about), then `step` 3. */
export const ABC_CODE = [
  'const a = await tools.step({ n: 1 })',
  'const b = await tools.guarded({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, b, c }',
].join('\n')

/** The program A, B, C with HOLD_UPSTREAM: `step` 1, then `hold` 2 (asked about, held), then `step` 3. */
const HELD_CODE = [
  'const a = await tools.step({ n: 1 })',
  'const b = await tools.hold({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, b, c }',
].join('\n')

/** The kept program a sealed approval state names (its turn and waiting sub-calls), if it names one. */
export interface KeptProgram {
  turn: string
  calls: string[]
}

/**
 * The kept program the approval state `state` (a `requestState` as the gateway sent it) names, or
 * undefined when it names none: the state is signed, not encrypted, so its body reads without the key.
 */
export function keptOf(state: unknown): KeptProgram | undefined {
  const body = String(state).split('.')[2]
  return (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { kept?: KeptProgram }).kept
}

/**
 * HELD_CODE called on `url` as `alice-token` by a raw 2026-07-28 client: it must answer
 * input_required (`said` is added to the failure); the kept turn and the waiting sub-call its
 * state names.
 */
export async function heldProgramAsked(url: string, said: () => string): Promise<KeptProgram> {
  const asked = await rawModernCall<ModernReply>(url, 'alice-token', 'run_code', {
    code: HELD_CODE,
    description: 'a, b held, c',
  })
  expect(asked.result?.resultType, JSON.stringify(asked) + said()).toBe('input_required')
  return keptOf(asked.result?.requestState)!
}

export interface ProgramFiles {
  /** The database's connection string. */
  readonly url: string
  /** The file the upstream appends each sub-call that ran to. */
  readonly marker: string
  /** The file of the gateways' state key (`TOOLGATE_STATE_KEY_FILE`). */
  readonly keyFile: string
  /** The config file. */
  readonly config: string
  /** The sub-calls that ran so far, in order (`step:1`, `guarded:2`, …). */
  ran(): string[]
}

export interface ProgramFilesOptions {
  /** The database to create. */
  readonly database: string
  /** Added to the marker's, key's and config's file names (tests of one file share its folder). */
  readonly suffix?: string
  /** The state key's text. */
  readonly key: string
  /** The upstream's script (default MARKER_UPSTREAM). */
  readonly upstream?: string
  /** Config beside `files: false`, `mode: 'code'` and the upstream (`policy` defaults to asking for `guarded`). */
  readonly config?: Record<string, unknown>
}

/** A database on `server` and the marker, state key and config files in `dir` for one program. */
export async function programFiles(server: PgServer, dir: string, options: ProgramFilesOptions): Promise<ProgramFiles> {
  const suffix = options.suffix ?? ''
  const url = server.createDatabase(options.database)
  const marker = join(dir, `marker${suffix}`)
  writeFileSync(marker, '')
  const keyFile = join(dir, `state${suffix}.key`)
  writeFileSync(keyFile, options.key)
  const config = await writeConfig(
    dir,
    {
      files: false,
      mode: 'code',
      servers: { m: { command: process.execPath, args: [options.upstream ?? MARKER_UPSTREAM, marker], prefix: '' } },
      policy: { ask: ['guarded'] },
      ...options.config,
    },
    suffix === '' ? undefined : `${suffix.slice(1)}.json`,
  )
  return { url, marker, keyFile, config, ran: () => readFileSync(marker, 'utf8').split('\n').filter(Boolean) }
}

/** Runs `closers` last first (ignoring their failures), then SIGKILLs each child still running. */
export async function closeAndKill(
  closers: (() => Promise<unknown>)[],
  children: readonly ChildProcess[],
): Promise<void> {
  for (const close of closers.reverse()) await close().catch(() => {})
  await killChildren(children)
}

/** For `until`: the store's pending calls once there are any. */
export const pausedCalls = (store: Store) => async (): Promise<PendingCall[] | undefined> => {
  const calls = await store.pendingCalls()
  return calls.length > 0 ? calls : undefined
}

/** An MCP client of `url` (no elicitation: nobody on its connection can approve) as the bearer of `token`; closed with `closers`. */
export async function bearerClient(
  url: string,
  name: string,
  token: string,
  closers: (() => Promise<unknown>)[],
): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  closers.push(() => client.close())
  return client
}

/** How long a test across instances waits for anything before failing: generous, for a loaded machine. */
const BOUND_MS = 120_000

export interface TwoGatewaysOptions {
  /** The database to create. */
  readonly database: string
  /** The state key's text. */
  readonly key: string
  /** The tools the policy asks about. */
  readonly ask: readonly string[]
  /** The program lease (`store.programLeaseMs`). */
  readonly leaseMs: number
}

/** Two gateways on one PostgreSQL, serving `alice-token` (subject `alice`) and HOLD_UPSTREAM. */
export interface TwoGateways {
  /** The program's database and files. */
  readonly files: ProgramFiles
  /** The test's own store on that database (the first gateway migrated it). */
  readonly store: Store
  /** A plain client of that database, for what the store has no reader for (a turn's lease). */
  readonly db: pg.Client
  /** The two instances, in the order they started. */
  readonly gateways: readonly ServeProcess[]
  /** The end of what each instance wrote to stderr, for failure messages. */
  allSaid(): string
  /** `until` bounded generously, its failure saying what the gateways said. */
  wait<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T>
  /** `promise`, or a failure naming `what` (and what the gateways said) after the same bound. */
  within<T>(promise: Promise<T>, what: string): Promise<T>
}

/**
 * Two `serve --http --store` instances on one real PostgreSQL, started in the test file's
 * `beforeAll` and stopped (with the server and the folder) in its `afterAll`; the config's own
 * store URL names a database nobody serves, so `--store` wins while `programLeaseMs` still applies.
 * What it returns is ready once `beforeAll` ran.
 */
export function twoGatewaysOnPostgres(options: TwoGatewaysOptions): TwoGateways {
  let server: PgServer | undefined
  let work: { dir: string; cleanup: () => Promise<void> } | undefined
  let files: ProgramFiles | undefined
  let store: Store | undefined
  let db: pg.Client | undefined
  const children: ChildProcess[] = []
  const gateways: ServeProcess[] = []

  beforeAll(async () => {
    server = await startPgServer()
    work = await tempDir()
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
    const made = await programFiles(server, work.dir, {
      database: options.database,
      key: options.key,
      upstream: HOLD_UPSTREAM,
      config: {
        auth: { tokens: [{ sha256: sha256('alice-token'), subject: 'alice' }] },
        policy: { ask: options.ask },
        store: { url: 'postgres://nobody@127.0.0.1:1/none', programLeaseMs: options.leaseMs },
      },
    })
    files = made
    const start = () =>
      spawnServe(['--http', '0', '--config', made.config, '--store', made.url], {
        env: { TOOLGATE_STATE_KEY_FILE: made.keyFile },
        children,
      })
    // The first instance migrates the store; the second starts after it.
    gateways.push(await start())
    gateways.push(await start())
    store = await createPostgresStore({ connectionString: made.url, migrate: false })
    db = new pg.Client({ connectionString: made.url })
    await db.connect()
  }, 180_000)

  afterAll(async () => {
    // An unreleased hold (a failed run) must not keep the upstreams, hence the gateways, from stopping.
    if (files !== undefined) writeFileSync(`${files.marker}.release`, '')
    await db?.end().catch(() => {})
    await store?.close()
    await stopChildren(children)
    server?.destroy()
    await work?.cleanup()
  }, 120_000)

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the two gateways' ${what} is there only once beforeAll ran`)
    return value
  }
  const allSaid = () => gateways.map((g, i) => `--- instance ${i + 1}:\n${g.stderr().slice(-3000)}`).join('\n')
  return {
    get files() {
      return ready(files, 'files')
    },
    get store() {
      return ready(store, 'store')
    },
    get db() {
      return ready(db, 'database client')
    },
    gateways,
    allSaid,
    wait: (check, what) =>
      until(check, what, { timeoutMs: BOUND_MS, everyMs: 25, context: () => `the gateways said:\n${allSaid()}` }),
    within: (promise, what) => {
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<never>((_, fail) => {
        timer = setTimeout(
          () => fail(new Error(`timed out waiting for ${what}; the gateways said:\n${allSaid()}`)),
          BOUND_MS,
        )
      })
      return Promise.race([promise, late]).finally(() => clearTimeout(timer))
    },
  }
}
