// Issue 40, item 3: a gateway instance learns that a kept program's waiting sub-call was decided
// through PostgreSQL's LISTEN/NOTIFY (the store's `watchTurns`), not only by polling. With the
// fallback poll set out of reach, a decision recorded by another process still resumes the program.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Agent, ApprovalRequest, ToolExecutionResult } from '../../src/contract/execution.js'
import { createProgramKeeper } from '../../src/gateway/program-keeper.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { until as waitUntil } from './until.js'

let server: PgServer
const closers: (() => Promise<unknown>)[] = []
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {})
  server?.destroy()
})

const until = <T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> =>
  waitUntil(check, what, { everyMs: 20 })

describe('kept programs wake on LISTEN/NOTIFY (issue 40, item 3)', { timeout: 180_000 }, () => {
  it("a store's watchTurns hears another process save a turn and decide a call", async () => {
    const url = server.createDatabase('watch_turns')
    const watching = await createPostgresStore({ connectionString: url })
    closers.push(() => watching.close())
    const other = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => other.close())
    let heard = 0
    const stop = watching.watchTurns?.(() => {
      heard++
    })
    expect(stop).toBeTypeOf('function')
    // Told once when the LISTEN connection is up (a change may have been missed before it).
    await until(() => (heard > 0 ? true : undefined), 'the watch to connect')
    const before = heard
    await other.saveTurn('t1', {
      pending: { calls: [{ callId: 'c1', name: 'guarded', arguments: {} }], requests: [{ callId: 'c1' }] },
    })
    await until(() => (heard > before ? true : undefined), 'the saved turn to be heard')
    const saved = heard
    expect((await other.decide('t1', 'c1', { kind: 'allowed-once' })).applied).toBe(true)
    await until(() => (heard > saved ? true : undefined), 'the decision to be heard')
    stop?.()
  })

  it('a decision from another process resumes a kept program with the fallback poll out of reach', async () => {
    const url = server.createDatabase('watch_keeper')
    const store: Store = await createPostgresStore({ connectionString: url })
    closers.push(() => store.close())
    const approver: Store = await createPostgresStore({ connectionString: url, migrate: false })
    closers.push(() => approver.close())
    const resumed: unknown[] = []
    const keeper = createProgramKeeper({
      store,
      key: new TextEncoder().encode('program-keeper-notify-key-0123456789'),
      execute: async (_input, options) => {
        resumed.push((options as { program?: unknown }).program)
        return { isError: false, value: 'finished' } as unknown as ToolExecutionResult
      },
      agent: {} as Agent,
      log: { info: () => {}, debug: () => {} },
      flush: async () => {},
      // An hour: within the test only a notification can wake the keeper.
      pollMs: 3_600_000,
    })
    closers.push(async () => keeper.close())
    const waiting = {
      callId: 'p1:code:2',
      parentCallId: 'p1',
      toolName: 'guarded',
      arguments: { n: 2 },
    } as unknown as ApprovalRequest
    const result = keeper.run(
      {
        callId: 'p1',
        name: 'run_code',
        arguments: { code: '', description: 'x' },
        signal: new AbortController().signal,
      },
      {},
      async (options) => {
        options.onSuspended?.(waiting, { waiting: [waiting], log: { v: 1 } })
        return { isError: true, error: { message: 'suspended' } } as unknown as ToolExecutionResult
      },
    )
    const [pending] = await until(async () => {
      const calls = await approver.pendingCalls()
      return calls.length > 0 ? calls : undefined
    }, 'the kept program in the store')
    expect((await approver.decide(pending.turnId, pending.callId, { kind: 'allowed-once' })).applied).toBe(true)
    // Bounded: without the notification the keeper would not look again for an hour.
    const answered = await Promise.race([
      result,
      new Promise((done) => setTimeout(done, 90_000, 'not resumed')).then((v) => v),
    ])
    expect(answered).toMatchObject({ isError: false, value: 'finished' })
    expect(resumed).toEqual([{ log: { v: 1 }, decisions: { 'p1:code:2': { kind: 'allowed-once' } } }])
  })
})
