// Issue 40, item 2 (R-EXEC-4): an instance stopped (SIGTERM) while it resumes a kept program does not
// seal the interrupted run as the program's result, and gives its claim on the decision back before
// its store closes, so the next instance on the store finishes the program. The built `serve --http
// --store` on a real PostgreSQL with a state key; a raw MCP 2026-07-28 client's program A, B (asked,
// and held mid-run by the upstream until the test releases it), C; B approved in the store, as the
// viewer does.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { spawnServe, tempDir } from '../cli/helpers.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { HOLD_UPSTREAM, heldProgramAsked, type ProgramFiles, programFiles } from './program-gateways.js'
import { until } from './until.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let pg: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
let files: ProgramFiles
let store: Store
const children: ChildProcess[] = []
let said = ''

beforeAll(async () => {
  pg = await startPgServer()
  work = await tempDir()
  files = await programFiles(pg, work.dir, {
    database: 'programs_stop',
    key: 'programs-stop-test-state-key-0123456789',
    upstream: HOLD_UPSTREAM,
    config: {
      auth: { tokens: [{ sha256: sha256('alice-token'), subject: 'alice' }] },
      policy: { ask: ['hold'] },
    },
  })
  store = await createPostgresStore({ connectionString: files.url, migrate: true })
}, 120_000)

afterAll(async () => {
  await store?.close()
  await stopChildren(children)
  pg?.destroy()
  await work?.cleanup()
})

const serve = () =>
  spawnServe(['--http', '0', '--config', files.config, '--store', files.url], {
    env: { TOOLGATE_STATE_KEY_FILE: files.keyFile },
    children,
    onStderr: (text) => {
      said += text
    },
  })

describe('a resume interrupted by a stop (issue 40, item 2)', { timeout: 300_000 }, () => {
  it('seals nothing, gives its claim back, and the next instance finishes the program', async () => {
    const first = await serve()
    const kept = await heldProgramAsked(first.url, () => said.slice(-2000))
    expect(files.ran()).toEqual(['step:1'])

    // Approved in the store: the instance resumes the program, and B holds it mid-run.
    expect(await store.decide(kept.turn, kept.calls[0], { kind: 'allowed-once', decidedBy: 'operator' })).toEqual({
      applied: true,
    })
    await until(async () => (files.ran().includes('hold:2') ? true : undefined), 'B to run', {
      timeoutMs: 90_000,
      context: () => said.slice(-3000),
    })
    await stopChildren([first.child])
    const turn = await store.loadTurn(kept.turn)
    expect(turn?.closed, JSON.stringify(turn?.state)).toBe(false)

    // The next instance on the store resumes the program from its log: A is not run again.
    writeFileSync(`${files.marker}.release`, '')
    await serve()
    const ended = await until(
      async () => {
        const loaded = await store.loadTurn(kept.turn)
        return loaded?.closed ? loaded : undefined
      },
      'the program to end on the next instance',
      { timeoutMs: 120_000, context: () => said.slice(-3000) },
    )
    const result = (ended.state as { result?: { isError?: boolean } }).result
    expect(result?.isError, JSON.stringify(result)).toBe(false)
    expect(JSON.stringify(result)).toContain('step 3 done')
    // B was interrupted, so it ran again (at least once, as after a lease takeover); A and C once.
    expect(files.ran()).toEqual(['step:1', 'hold:2', 'hold:2', 'step:3'])
    expect(said).toMatch(/its resume was interrupted by a stop; its claim is given back/)
  })
})
