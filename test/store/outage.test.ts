// PostgreSQL stopped mid-traffic (issue 36, item 7): a tool's result goes out only once its journal
// record is committed. The gateway waits, bounded, for the database to come back; a result whose
// record still cannot be committed goes out as the distinct error RESULT_NOT_RECORDED (-32010).
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { RESULT_NOT_RECORDED, shareStore } from '../../src/gateway/serve-store.js'
import type { JournalRecord } from '../../src/journal/records.js'
import { createMcpServer } from '../../src/mcp/server/server.js'
import { createPostgresStore } from '../../src/store/index.js'
import { tempDir } from '../cli/helpers.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => server?.destroy())

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A gateway with bash over the store at `url`, its appends waiting `appendWaitMs` for the database. */
async function setup(url: string, appendWaitMs: number) {
  const work = await tempDir()
  const sink = { write: () => true } as unknown as NodeJS.WritableStream
  const log = createLog(sink, false)
  const gateway = await openGateway(
    {
      root: work.dir,
      bash: true,
      mode: 'native',
      servers: {},
      policy: {},
      verbose: false,
      access: { allowedHosts: [], allowedOrigins: [] },
    },
    log,
  )
  const store = await createPostgresStore({ connectionString: url, appendWaitMs })
  const shared = await shareStore(gateway, store, log)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await shared
    .acknowledging(createMcpServer(gateway.agent.ctx, { agent: gateway.agent, name: 'toolgate', version: '0.0.0' }))
    .connect(serverSide)
  const client = new Client({ name: 'test', version: '0.0.0' })
  await client.connect(clientSide)
  /** Two concurrent bash calls that run until the file `go` exists (each says it started). */
  const calls = () =>
    [1, 2].map((n) =>
      client
        .callTool(
          {
            name: 'bash',
            arguments: {
              command: `touch started${n}; while [ ! -f go ]; do sleep 0.05; done; touch done${n}; echo ok${n}`,
            },
          },
          undefined,
          { timeout: 120_000 },
        )
        .then(
          (result) => ({ ok: true as const, result }),
          (error: unknown) => ({ ok: false as const, error }),
        ),
    )
  return {
    dir: work.dir,
    calls,
    async close() {
      await client.close()
      await gateway.close()
      await shared.close()
      await work.cleanup()
    },
  }
}

async function bashRecords(url: string): Promise<JournalRecord[]> {
  const store = await createPostgresStore({ connectionString: url, migrate: false })
  try {
    const out: JournalRecord[] = []
    for await (const { record } of store.read()) if (record.toolName === 'bash') out.push(record)
    return out
  } finally {
    await store.close()
  }
}

describe('PostgreSQL stopped mid-traffic (issue 36, item 7)', { timeout: 240_000 }, () => {
  it('the database comes back within the bound: both calls succeed, each with its result record', async () => {
    const url = server.createDatabase('outage_back')
    const g = await setup(url, 120_000)
    try {
      const calls = g.calls()
      await until(
        () => existsSync(path.join(g.dir, 'started1')) && existsSync(path.join(g.dir, 'started2')),
        'both bodies',
      )
      server.crash()
      await writeFile(path.join(g.dir, 'go'), '')
      await until(
        () => existsSync(path.join(g.dir, 'done1')) && existsSync(path.join(g.dir, 'done2')),
        'both bodies to end',
      )
      server.start()
      const outcomes = await Promise.all(calls)
      for (const outcome of outcomes) {
        expect(outcome.ok).toBe(true)
        expect(outcome.ok && outcome.result.isError).not.toBe(true)
      }
      const records = await bashRecords(url)
      expect(records.filter((r) => r.type === 'call-started')).toHaveLength(2)
      expect(records.filter((r) => r.type === 'result')).toHaveLength(2)
    } finally {
      if (!existsSync(path.join(server.dir, 'data', 'postmaster.pid'))) server.start()
      await g.close()
    }
  })

  it('the database stays down past the bound: no call returns success, each gets RESULT_NOT_RECORDED', async () => {
    const url = server.createDatabase('outage_down')
    const g = await setup(url, 1000)
    try {
      const calls = g.calls()
      await until(
        () => existsSync(path.join(g.dir, 'started1')) && existsSync(path.join(g.dir, 'started2')),
        'both bodies',
      )
      server.crash()
      await writeFile(path.join(g.dir, 'go'), '')
      const outcomes = await Promise.all(calls)
      for (const outcome of outcomes) {
        expect(outcome.ok).toBe(false)
        const error = outcome.ok ? undefined : outcome.error
        expect(error).toBeInstanceOf(McpError)
        expect((error as McpError).code).toBe(RESULT_NOT_RECORDED)
        expect((error as McpError).data).toEqual({ reason: 'RESULT_NOT_RECORDED' })
      }
      server.start()
      // The store holds both starts and no result: what the clients were told agrees with the audit trail.
      const records = await bashRecords(url)
      expect(records.map((r) => r.type).sort()).toEqual(['call-started', 'call-started'])
    } finally {
      if (!existsSync(path.join(server.dir, 'data', 'postmaster.pid'))) server.start()
      await g.close()
    }
  })
})
