// Issue 40, item 2, and issue 35, item 4 (R-EXEC-4, R-CODE-2, R-SCHED-3), on the stdio face with a
// store: `serve --store URL` over stdio (the built CLI, a state key, a real PostgreSQL) keeps a
// 2026-07-28 client's paused run_code program in the store, as the HTTP face does. The official
// SDK v2 client pinned to 2026-07-28 runs A, B (approved on the retry), C, each once; on raw lines
// the kept turn named by the sealed state is in the store and closed once the program ended, with
// nothing left pending, and a tampered state is refused and runs nothing.
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { tempDir } from '../cli/helpers.js'
import { modernStdioClient } from '../cli/modern-client.js'
import { APPROVAL_KEY } from '../cli/raw-modern-call.js'
import { rawStdioServe } from '../cli/raw-stdio-serve.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { ABC_CODE, keptOf, type ProgramFiles, programFiles } from './program-gateways.js'

const BOUND_MS = 60_000

let pg: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
let files: ProgramFiles
let config: string
let url: string
let env: Record<string, string>
let store: Store
const children: ChildProcessWithoutNullStreams[] = []

beforeAll(async () => {
  pg = await startPgServer()
  work = await tempDir()
  files = await programFiles(pg, work.dir, {
    database: 'stdio_programs',
    key: 'stdio-programs-test-state-key-0123456789',
  })
  ;({ url, config } = files)
  env = { ...(process.env as Record<string, string>), TOOLGATE_STATE_KEY_FILE: files.keyFile }
  store = await createPostgresStore({ connectionString: url })
}, 120_000)

afterAll(async () => {
  await stopChildren(children)
  await store?.close()
  pg?.destroy()
  await work?.cleanup()
})

const ran = () => files.ran()

const accept = { action: 'accept', content: { approve: true } }

describe('serve --store over stdio keeps a 2026-07-28 client’s run_code program in the store (issue 40, item 2)', {
  timeout: 4 * BOUND_MS,
}, () => {
  it('a v2 client: A, B (approved on the retry), C each run once', async () => {
    const before = ran().length
    const questions: string[] = []
    const client = await modernStdioClient(['--config', config, '--store', url], {
      env,
      answer: (params) => {
        questions.push(String(params.message))
        return accept
      },
    })
    let result: unknown
    try {
      result = await client.callTool({ name: 'run_code', arguments: { code: ABC_CODE, description: 'a, b, c' } })
    } finally {
      await client.close()
    }
    expect((result as { isError?: boolean }).isError, JSON.stringify(result)).not.toBe(true)
    expect(questions).toHaveLength(1)
    for (const part of ['step 1 done', 'guarded 2 done', 'step 3 done']) expect(JSON.stringify(result)).toContain(part)
    expect(ran().slice(before)).toEqual(['step:1', 'guarded:2', 'step:3'])
    expect(await store.pendingCalls()).toEqual([])
  })

  it('the kept turn is in the store while the program waits, and closed once it ended; a tampered state runs nothing', async () => {
    const args = { code: ABC_CODE.replace('n: 1', 'n: 11').replace('n: 3 ', 'n: 13 '), description: 'raw' }
    const before = ran().length
    const serve = rawStdioServe(['--config', config, '--store', url], children, { env, boundMs: BOUND_MS })
    expect((await serve.request('server/discover', {})).error).toBeUndefined()
    const call = (retry?: { state: string; answers: Record<string, unknown> }) =>
      serve.request('tools/call', {
        name: 'run_code',
        arguments: args,
        ...(retry ? { requestState: retry.state, inputResponses: retry.answers } : {}),
      })
    const first = await call()
    expect(first.result?.resultType, JSON.stringify(first)).toBe('input_required')
    const state = first.result?.requestState as string
    const { turn, calls } = keptOf(state)!
    expect(await store.pendingCalls()).toEqual([expect.objectContaining({ turnId: turn, callId: calls[0] })])
    expect((await store.loadTurn(turn))?.closed).toBe(false)

    const [name, version, body, mac] = state.split('.')
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>
    const forged = Buffer.from(JSON.stringify({ ...decoded, kept: { turn: 'gateway-program:other', calls } })).toString(
      'base64url',
    )
    const tampered = await call({ state: `${name}.${version}.${forged}.${mac}`, answers: { [APPROVAL_KEY]: accept } })
    expect(tampered.error?.code).toBe(-32602)
    expect(tampered.error?.message).toMatch(/seal does not verify/)
    expect(ran().slice(before)).toEqual(['step:11'])

    const retried = await call({ state, answers: { [APPROVAL_KEY]: accept } })
    expect(retried.error, JSON.stringify(retried)).toBeUndefined()
    expect(retried.result?.isError).not.toBe(true)
    expect(ran().slice(before)).toEqual(['step:11', 'guarded:2', 'step:13'])
    expect((await store.loadTurn(turn))?.closed).toBe(true)
    expect(await store.pendingCalls()).toEqual([])
  })
})
