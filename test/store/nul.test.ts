// One record never fails its neighbours (issue 36, item 9): a NUL character in a subject or a tool
// name made PostgreSQL refuse the whole group-commit batch. It is refused where it enters (the
// config, an upstream's tool list), the store writes it anyway if it gets there (the record keeps
// it, the indexed columns do not), and a record the database refuses fails alone.
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/gateway/config.js'
import type { JournalRecord } from '../../src/journal/records.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { serveStdio, tempDir, writeConfig } from '../cli/helpers.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => server?.destroy())

function started(callId: string, n: number, agentId = 'toolgate/alice', toolName = 'write_file'): JournalRecord {
  return {
    v: 1,
    type: 'call-started',
    ts: Date.now(),
    callId,
    rootCallId: callId,
    parentCallId: null,
    agentId,
    toolName,
    identity: { subject: agentId.slice('toolgate/'.length), groups: [], scopes: [] },
    arguments: { n },
  }
}

/** Each append's outcome, bounded: a batch that never settles fails the test instead of hanging it. */
function settle(store: Store, records: JournalRecord[]): Promise<PromiseSettledResult<void>[]> {
  const all = Promise.allSettled(records.map((record) => store.append([record])))
  return Promise.race([
    all,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('appends did not settle within 60 s')), 60_000),
    ),
  ])
}

async function readAll(store: Store): Promise<JournalRecord[]> {
  const out: JournalRecord[] = []
  for await (const { record } of store.read()) out.push(record)
  return out
}

describe('NUL and one bad record (issue 36, item 9)', { timeout: 120_000 }, () => {
  it('20 concurrent appends, one with NUL in its subject and tool name: all 20 are recorded, the NUL kept in the record', async () => {
    const store = await createPostgresStore({ connectionString: server.createDatabase('nul') })
    try {
      const records = Array.from({ length: 20 }, (_, i) =>
        i === 7 ? started('c7', 7, 'toolgate/al\u0000ice', 'up__x\u0000y') : started(`c${i}`, i),
      )
      const outcomes = await settle(store, records)
      expect(outcomes.map((o) => o.status)).toEqual(Array(20).fill('fulfilled'))
      const stored = await readAll(store)
      expect(stored).toHaveLength(20)
      const odd = stored.find((r) => r.callId === 'c7')
      expect(odd).toMatchObject({ agentId: 'toolgate/al\u0000ice', toolName: 'up__x\u0000y' })
      expect(odd?.identity?.subject).toBe('al\u0000ice')
    } finally {
      await store.close()
    }
  })

  it('a record the database refuses, or that cannot be serialized, fails alone; its neighbours are recorded', async () => {
    const url = server.createDatabase('isolation')
    const store = await createPostgresStore({ connectionString: url })
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    // A rule of this database refuses one tool name: the batch holding it is refused as a whole.
    await client.query("ALTER TABLE toolgate_journal ADD CONSTRAINT no_refused CHECK (tool_name <> 'refused')")
    await client.end()
    try {
      const records = Array.from({ length: 20 }, (_, i) => started(`c${i}`, i))
      records[3] = started('c3', 3, 'toolgate/alice', 'refused')
      records[11] = Object.assign(started('c11', 11), { arguments: { big: 1n } as never })
      const outcomes = await settle(store, records)
      const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []))
      expect(failed).toEqual([3, 11])
      expect(String((outcomes[3] as PromiseRejectedResult).reason)).toMatch(/journal append failed/)
      const stored = await readAll(store)
      expect(stored.map((r) => r.callId).sort()).toEqual(
        records
          .map((r) => r.callId)
          .filter((id) => id !== 'c3' && id !== 'c11')
          .sort(),
      )
    } finally {
      await store.close()
    }
  })

  it('the config refuses a NUL in a subject, group or scope, naming its path', () => {
    const sha256 = 'a'.repeat(64)
    const refuse = (config: unknown) => {
      try {
        parseConfig(JSON.stringify(config), 'c.json')
      } catch (error) {
        return String(error)
      }
      return 'accepted'
    }
    expect(refuse({ auth: { tokens: [{ sha256, subject: 'al\u0000ice' }] } })).toMatch(
      /auth\.tokens\[0\]\.subject: contains a NUL character/,
    )
    expect(refuse({ auth: { tokens: [{ sha256, subject: 'alice', groups: ['ok', 'd\u0000ev'] }] } })).toMatch(
      /auth\.tokens\[0\]\.groups\[1\]: contains a NUL character/,
    )
    expect(refuse({ policy: { rules: [{ who: { subject: 'b\u0000ob' }, allow: ['*'] }] } })).toMatch(
      /policy\.rules\[0\]\.who\.subject: contains a NUL character/,
    )
    expect(refuse({ policy: { rules: [{ who: { group: ['x', 'o\u0000ps'] }, allow: ['*'] }] } })).toMatch(
      /policy\.rules\[0\]\.who\.group\[1\]: contains a NUL character/,
    )
  })

  it('an upstream tool whose name holds a NUL is not served, with a clear log; its other tools are', async () => {
    const { dir, cleanup } = await tempDir()
    const config = await writeConfig(dir, {
      root: '.',
      servers: {
        up: {
          command: process.execPath,
          args: [path.resolve(import.meta.dirname, '../fixtures/nul-name-upstream.mjs')],
        },
      },
    })
    const s = await serveStdio(['--config', config])
    try {
      const names = (await s.client.listTools()).tools.map((tool) => tool.name)
      expect(names).toContain('up__good')
      expect(names.some((name) => name.includes('\u0000'))).toBe(false)
      expect(s.stderr()).toContain(
        'servers.up: its tool "bad\\u0000name" is not served: its name contains a NUL character (U+0000)',
      )
      expect(s.stderr()).not.toContain('\u0000')
    } finally {
      await s.close()
      await cleanup()
    }
  })
})
