// The store's journal is the same audit trail as the file journal (issue 36, item 6): a call made by
// an authenticated identity carries the same `identity` in both, record for record.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { shareStore } from '../../src/gateway/serve-store.js'
import { readJournal } from '../../src/journal/read-journal.js'
import type { JournalRecord } from '../../src/journal/records.js'
import { identityOf } from '../../src/mcp/protocol/identity.js'
import { createMcpServer } from '../../src/mcp/server/server.js'
import { createPostgresStore } from '../../src/store/index.js'
import { tempDir } from '../cli/helpers.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => server?.destroy())

const shape = (r: JournalRecord) => ({ type: r.type, toolName: r.toolName, agentId: r.agentId, identity: r.identity })

describe('the store journal records identities (issue 36, item 6)', { timeout: 120_000 }, () => {
  it('a call by an authenticated identity carries the same identity in the store as in the file journal', async () => {
    const { dir, cleanup } = await tempDir()
    const journal = path.join(dir, 'audit.jsonl')
    const sink = { write: () => true } as unknown as NodeJS.WritableStream
    const log = createLog(sink, false)
    const gateway = await openGateway(
      {
        root: dir,
        bash: false,
        mode: 'native',
        servers: {},
        policy: { rules: [{ who: { group: ['dev'] }, allow: ['*'] }] },
        verbose: false,
        access: { allowedHosts: [], allowedOrigins: [] },
        journal,
      },
      log,
    )
    const url = server.createDatabase('identity')
    const shared = await shareStore(gateway, await createPostgresStore({ connectionString: url }), log)
    try {
      const authInfo: AuthInfo = {
        token: 't',
        clientId: 'bob',
        scopes: ['tools:write'],
        extra: { subject: 'bob', groups: ['dev'] },
      }
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      const send = clientSide.send.bind(clientSide)
      clientSide.send = (message: JSONRPCMessage, options) => send(message, { ...options, authInfo })
      const mcp = shared.acknowledging(
        createMcpServer(gateway.agent.ctx, {
          agent: gateway.agent,
          agentFor: (info) => gateway.identities.agentFor(identityOf(info)),
          name: 'toolgate',
          version: '0.0.0',
        }),
      )
      await mcp.connect(serverSide)
      const client = new Client({ name: 'test', version: '0.0.0' })
      await client.connect(clientSide)
      const written = await client.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'hi' } })
      expect(written.isError).toBeFalsy()
      await client.close()

      const fromFile: JournalRecord[] = []
      for await (const record of readJournal(journal)) fromFile.push(record)
      const fromStore: JournalRecord[] = []
      for await (const { record } of shared.store.read()) fromStore.push(record)
      const bob = { subject: 'bob', groups: ['dev'], scopes: ['tools:write'] }
      expect(fromFile.map(shape)).toEqual([
        { type: 'call-started', toolName: 'write_file', agentId: expect.any(String), identity: bob },
        { type: 'result', toolName: 'write_file', agentId: expect.any(String), identity: bob },
      ])
      expect(fromStore.map(shape)).toEqual(fromFile.map(shape))
    } finally {
      await gateway.close()
      await shared.close()
      await cleanup()
    }
  })
})
