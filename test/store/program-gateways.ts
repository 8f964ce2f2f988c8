// What the kept-program gateway tests (gateway-programs*.test.ts) set up for a program: a database
// on the test's PostgreSQL, the upstream's marker file (the fixture upstreams append each sub-call
// that ran), a state key file and a Code Mode config naming that upstream; and their clean-up.
import type { ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { PendingCall, Store } from '../../src/store/index.js'
import { writeConfig } from '../cli/helpers.js'
import type { PgServer } from './pg-server.js'

/** The upstream whose `step` and `guarded` tools append `tool:n` to the marker file. */
export const MARKER_UPSTREAM = resolve(import.meta.dirname, '../fixtures/marker-upstream.mjs')

/** The program A, B, C: `step` 1, then `guarded` 2 (asked about), then `step` 3. */
export const ABC_CODE = [
  'const a = await tools.step({ n: 1 })',
  'const b = await tools.guarded({ n: 2 })',
  'const c = await tools.step({ n: 3 })',
  'return { a, b, c }',
].join('\n')

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
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
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
