// Resuming a turn saved in the PostgreSQL store (issue 26): decided by a viewer on one instance,
// resumed by many at once, each approved call runs exactly once.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JsonValue } from '../../src/contract/json-value.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
const dir = mkdtempSync(join(tmpdir(), 'toolgate-resume-store-'))
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => {
  server?.destroy()
  rmSync(dir, { recursive: true, force: true })
})
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])

describe('resume through the PostgreSQL store (issue 26)', { timeout: 180_000 }, () => {
  it('50 concurrent resumes of one state on 5 instances: each approved call runs exactly once', async () => {
    const url = server.createDatabase('resume50')
    const stores: Store[] = await Promise.all(
      Array.from({ length: 5 }, () => createPostgresStore({ connectionString: url })),
    )
    const marker = join(dir, 'marker-50')
    // Instance A runs the turn until it suspends and saves it.
    const a = await setupTurn({ marker, store: stores[0] })
    const first = await runModelLoop({
      tools: a.tools,
      agent: a.agent,
      model: scriptedModel(),
      messages: [{ role: 'user', content: 'update the files' }],
    })
    expect(first.stopReason).toBe('approval-required')
    await stores[0].saveTurn('turn-1', first.state as unknown as JsonValue)
    expect((await stores[1].pendingCalls()).map((c) => c.callId)).toEqual(['call_b', 'call_c'])
    // A viewer on instance B decides.
    expect(await stores[1].decide('turn-1', 'call_b', { kind: 'allowed-once' })).toEqual({ applied: true })
    expect(await stores[1].decide('turn-1', 'call_c', { kind: 'allowed-once' })).toEqual({ applied: true })
    // Five instances (own runtime, own store connection) resume it ten times each, all at once.
    const instances = await Promise.all(stores.map((store) => setupTurn({ marker, store })))
    const settled = await Promise.allSettled(
      Array.from({ length: 50 }, async (_, i) => {
        const store = stores[i % 5]
        const { tools, agent } = instances[i % 5]
        const turn = await store.loadTurn('turn-1')
        return resumeModelLoop({
          state: turn?.state,
          tools,
          agent,
          model: scriptedModel(),
          store,
          turnId: 'turn-1',
        })
      }),
    )
    const writes = lines(marker).filter((l) => l.startsWith('write:'))
    expect(writes.sort()).toEqual(['write:b.txt', 'write:c.txt'])
    const done = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
    expect(done.length).toBeGreaterThan(0)
    for (const result of done) expect(result.stopReason).toBe('done')
    // Every other attempt either found the turn closed (refused before anything ran) or was answered ALREADY_RUN.
    for (const s of settled)
      if (s.status === 'rejected') expect(String(s.reason)).toMatch(/turnId: "turn-1" is closed|could not be claimed/)
    // Each approved call was run by exactly one attempt: every other finished attempt reports it as already run.
    for (const callId of ['call_b', 'call_c']) {
      const skipped = done.filter((r) => r.alreadyRun.some((c) => c.callId === callId)).length
      expect(skipped).toBeLessThanOrEqual(done.length - 1)
    }
    expect((await stores[2].loadTurn('turn-1'))?.closed).toBe(true)
    expect(await stores[2].pendingCalls()).toEqual([])
    // The journal in the store shows one successful result per approved call (besides the suspension).
    const succeeded: string[] = []
    for await (const { record } of stores[3].read())
      if (record.type === 'result' && record.toolName === 'write' && !record.result.isError)
        succeeded.push(record.callId)
    expect(succeeded.sort()).toEqual(['call_b', 'call_c'])
    await Promise.all(stores.map((s) => s.close()))
  })
})
