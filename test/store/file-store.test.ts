// The embedded store (issue 26): the same interface over files, with no server.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { JsonValue } from '../../src/contract/json-value.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { createFileStore } from '../../src/store/index.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-file-store-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const path = (name: string) => join(dir, `${n++}-${name}`)

describe('the file store (issue 26)', () => {
  it('journals calls as JSON lines, saves the turn, records each decision once, and resumes once', async () => {
    const journal = path('journal.jsonl')
    const store = createFileStore({ journal })
    const marker = path('marker')
    const env = await setupTurn({ marker, store })
    const first = await runModelLoop({
      tools: env.tools,
      agent: env.agent,
      model: scriptedModel(),
      messages: [{ role: 'user', content: 'update the files' }],
    })
    expect(first.stopReason).toBe('approval-required')
    await store.saveTurn('t', first.state as unknown as JsonValue)
    expect((await store.pendingCalls()).map((c) => c.callId)).toEqual(['call_b', 'call_c'])
    const [x, y] = await Promise.all([
      store.decide('t', 'call_b', { kind: 'allowed-once' }),
      store.decide('t', 'call_b', { kind: 'denied' }),
    ])
    expect([x.applied, y.applied].filter(Boolean)).toHaveLength(1)
    await store.decide('t', 'call_c', { kind: 'allowed-once' })
    const turn = await store.loadTurn('t')
    const approvedB = turn?.decisions.call_b.kind === 'allowed-once'
    const results = await Promise.allSettled(
      [0, 1, 2].map(() =>
        resumeModelLoop({
          state: turn?.state,
          tools: env.tools,
          agent: env.agent,
          model: scriptedModel(),
          store,
          turnId: 't',
        }),
      ),
    )
    const writes = readFileSync(marker, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('write:'))
      .sort()
    expect(writes).toEqual(approvedB ? ['write:b.txt', 'write:c.txt'] : ['write:c.txt'])
    expect(results.some((r) => r.status === 'fulfilled')).toBe(true)
    expect((await store.loadTurn('t'))?.closed).toBe(true)
    // The journal is the ordinary JSON-lines file.
    const types = readFileSync(journal, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).type)
    expect(types).toContain('call-started')
    const seqs: number[] = []
    for await (const { seq } of store.read()) seqs.push(seq)
    expect(seqs).toEqual(types.map((_, i) => i + 1))
    expect((await store.status()).kind).toBe('file')
  })

  it('a bucket refills over time and refuses past its capacity', async () => {
    const store = createFileStore({ journal: path('b.jsonl') })
    const limit = { capacity: 2, refillPerSecond: 0 }
    const takes = await Promise.all([1, 2, 3].map(() => store.take('k', limit)))
    expect(takes.map((t) => t.allowed)).toEqual([true, true, false])
    await store.setStandingApproval({ agentId: null, toolName: 'x', kind: 'denied-always' })
    expect(await store.standingApprovals(null)).toEqual([{ agentId: null, toolName: 'x', kind: 'denied-always' }])
  })

  it('drops idle buckets under a prefix, a bounded number at a time (issue 38, quota windows)', async () => {
    const store = createFileStore({ journal: path('d.jsonl') })
    const limit = { capacity: 2, refillPerSecond: 0 }
    for (const key of ['quota:a', 'quota:b', 'quota:c', 'rate:a']) await store.take(key, limit)
    expect(await store.dropBuckets('quota:', 60_000, 10)).toBe(0)
    expect(await store.dropBuckets('quota:', -1, 2)).toBe(2)
    expect(await store.dropBuckets('quota:', -1, 10)).toBe(1)
    // a dropped bucket starts full again; one under another prefix kept its count
    expect((await store.take('quota:a', limit)).remaining).toBe(1)
    expect((await store.take('rate:a', limit)).remaining).toBe(0)
    // a refund is a take of minus one
    expect((await store.take('rate:a', limit, -1)).remaining).toBe(1)
  })
})

describe('the schema version', () => {
  it('is the last migration of the PostgreSQL store', async () => {
    const { MIGRATIONS } = await import('../../src/store/migrations.js')
    const { SCHEMA_VERSION } = await import('../../src/store/index.js')
    expect(MIGRATIONS.at(-1)?.version).toBe(SCHEMA_VERSION)
  })
})
