// The audit trail (issue 24 item 5): with the config's `journal`, the gateway records who made every
// call, sub-call, approval request and decision; an approval asked over elicitation records the
// client that decided. Old journals (no identity) still read.
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import { ElicitRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { type Gateway, openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { readJournal } from '../../src/journal/read-journal.js'
import type { JournalRecord } from '../../src/journal/records.js'
import { identityOf } from '../../src/mcp/protocol/identity.js'
import { createMcpServer } from '../../src/mcp/server/server.js'
import { tempDir } from './helpers.js'

function auth(subject: string, groups: string[], scopes: string[] = []): AuthInfo {
  return { token: `t-${subject}`, clientId: subject, scopes, extra: { subject, groups } }
}

async function connect(gateway: Gateway, authInfo: AuthInfo | undefined, approve: boolean): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const send = clientSide.send.bind(clientSide)
  clientSide.send = (message: JSONRPCMessage, options) => send(message, { ...options, authInfo })
  const server = createMcpServer(gateway.agent.ctx, {
    agent: gateway.agent,
    agentFor: (info) => gateway.identities.agentFor(identityOf(info)),
    name: 'toolgate',
    version: '0.0.0',
  })
  await server.connect(serverSide)
  const client = new Client({ name: 'test', version: '0.0.0' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { approve } }))
  await client.connect(clientSide)
  return client
}

async function records(file: string): Promise<JournalRecord[]> {
  const all: JournalRecord[] = []
  for await (const record of readJournal(file)) all.push(record)
  return all
}

describe('the audit journal records identities (issue 24 item 5)', () => {
  it('records who called, who was asked about and who decided, sub-calls included', async () => {
    const { dir, cleanup } = await tempDir()
    const journal = path.join(dir, 'audit.jsonl')
    const sink = { write: () => true } as unknown as NodeJS.WritableStream
    await writeFile(path.join(dir, 'a.txt'), 'alpha\n')
    const gateway = await openGateway(
      {
        root: dir,
        bash: false,
        mode: 'both',
        servers: {},
        policy: {
          rules: [
            { who: { group: ['dev'] }, allow: ['*'], ask: ['write_file'] },
            { who: { group: ['ops'] }, allow: ['*'] },
          ],
        },
        verbose: false,
        access: { allowedHosts: [], allowedOrigins: [] },
        journal,
      },
      createLog(sink, false),
    )
    try {
      const bob = await connect(gateway, auth('bob', ['dev'], ['tools:write']), true)
      const written = await bob.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'hi' } })
      expect(written.isError).toBeFalsy()
      const carol = await connect(gateway, auth('carol', ['ops']), false)
      const run = await carol.callTool({
        name: 'run_code',
        arguments: { description: 'read', code: "return await tools.read_file({ path: 'a.txt' })" },
      })
      expect(run.isError).toBeFalsy()
      const local = await connect(gateway, undefined, false)
      expect((await local.callTool({ name: 'list_dir', arguments: { path: '.' } })).isError).toBeFalsy()
      await Promise.all([bob.close(), carol.close(), local.close()])

      const all = await records(journal)
      const bobs = all.filter((r) => r.toolName === 'write_file')
      expect(bobs.map((r) => r.type)).toEqual(['call-started', 'approval-asked', 'approval-answered', 'result'])
      for (const record of bobs)
        expect(record.identity).toEqual({ subject: 'bob', groups: ['dev'], scopes: ['tools:write'] })
      const answered = bobs.find((r) => r.type === 'approval-answered')
      expect(answered).toMatchObject({ decidedBy: 'bob', outcome: { kind: 'allowed-once', decidedBy: 'bob' } })

      const carols = all.filter((r) => r.identity?.subject === 'carol')
      expect(carols.map((r) => `${r.type} ${r.toolName}`).sort()).toEqual([
        'call-started read_file',
        'call-started run_code',
        'code-dispatch read_file',
        'result read_file',
        'result run_code',
      ])
      const locals = all.filter((r) => r.toolName === 'list_dir')
      expect(locals).toHaveLength(2)
      for (const record of locals) expect(record.identity).toBeUndefined()
    } finally {
      await gateway.close()
      await cleanup()
    }
  })

  it('a declined elicitation records the client that declined', async () => {
    const { dir, cleanup } = await tempDir()
    const journal = path.join(dir, 'audit.jsonl')
    const sink = { write: () => true } as unknown as NodeJS.WritableStream
    const gateway = await openGateway(
      {
        root: dir,
        bash: false,
        mode: 'native',
        servers: {},
        policy: { rules: [{ who: { subject: ['dan'] }, allow: ['write_file'], ask: ['*'] }] },
        verbose: false,
        access: { allowedHosts: [], allowedOrigins: [] },
        journal,
      },
      createLog(sink, false),
    )
    try {
      const dan = await connect(gateway, auth('dan', []), false)
      const refused = await dan.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } })
      expect(refused.isError).toBe(true)
      await expect(readFile(path.join(dir, 'x.txt'), 'utf8')).rejects.toThrow(/ENOENT/)
      await dan.close()
      const answered = (await records(journal)).find((r) => r.type === 'approval-answered')
      expect(answered).toMatchObject({ decidedBy: 'dan', outcome: { kind: 'denied' }, identity: { subject: 'dan' } })
    } finally {
      await gateway.close()
      await cleanup()
    }
  })

  it('a journal that cannot be appended to stops the gateway before it serves', async () => {
    const { dir, cleanup } = await tempDir()
    const sink = { write: () => true } as unknown as NodeJS.WritableStream
    try {
      await expect(
        openGateway(
          {
            root: dir,
            bash: false,
            mode: 'native',
            servers: {},
            policy: {},
            verbose: false,
            access: { allowedHosts: [], allowedOrigins: [] },
            journal: path.join(dir, 'missing', 'audit.jsonl'),
          },
          createLog(sink, false),
        ),
      ).rejects.toThrow(/journal: cannot append to .*audit\.jsonl/)
    } finally {
      await cleanup()
    }
  })

  it('a journal written before identities were recorded still reads', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const file = path.join(dir, 'old.jsonl')
      const base = { v: 1, ts: 1, callId: 'c1', rootCallId: 'c1', parentCallId: null, agentId: null, toolName: 't' }
      await writeFile(
        file,
        `${JSON.stringify({ ...base, type: 'call-started', arguments: {} })}\n` +
          `${JSON.stringify({ ...base, type: 'result', result: { isError: false, value: 1, content: [] }, durationMs: 1 })}\n`,
      )
      const all = await records(file)
      expect(all.map((r) => r.type)).toEqual(['call-started', 'result'])
      expect(all[0].identity).toBeUndefined()
    } finally {
      await cleanup()
    }
  })
})
