// Issue 36, item 3: a standing approval ("always") kept in the store belongs to the identity that
// gave it, on every instance: another token of the same subject, which rules may treat differently,
// is still asked even where it arrived first.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, spawnServe, tempDir, writeConfig } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let url: string
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
const clients: Client[] = []
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('standing_identity')
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  await killChildren(children)
  server?.destroy()
  await work?.cleanup()
})

async function gateway(config: string): Promise<string> {
  const served = await spawnServe(['--http', '0', '--root', work.dir, '--config', config, '--store', url], {
    children,
  })
  return served.url
}

/** A client of `endpoint` as the bearer of `token`, answering every approval request with `answer`. */
async function connect(endpoint: string, token: string, answer: { approve: boolean; always?: boolean }) {
  const asked: string[] = []
  const client = new Client({ name: 'test', version: '1' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message)
    return { action: 'accept', content: answer }
  })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  clients.push(client)
  return { client, asked }
}

describe('standing approvals and two tokens of one subject (issue 36, item 3)', { timeout: 180_000 }, () => {
  it("alice's broad token's always, given on A, does not answer for her narrow token on B", async () => {
    expect((await runCli(['store', 'migrate', '--store', url])).code).toBe(0)
    const config = await writeConfig(work.dir, {
      auth: {
        tokens: [
          { sha256: sha256('alice-broad'), subject: 'alice', groups: ['leads'] },
          { sha256: sha256('alice-narrow'), subject: 'alice' },
        ],
      },
      policy: { rules: [{ who: { subject: 'alice' }, allow: ['*'], ask: ['write_file'] }] },
    })
    const a = await gateway(config)
    const b = await gateway(config)
    const write = (client: Client, file: string) =>
      client.callTool({ name: 'write_file', arguments: { path: file, content: 'x' } })

    // On A the broad token arrives first and answers "always".
    const broadA = await connect(a, 'alice-broad', { approve: true, always: true })
    expect((await write(broadA.client, 'broad-a.txt')).isError).not.toBe(true)
    expect(broadA.asked).toHaveLength(1)

    // On B the narrow token arrives first: it is asked (and declines), so nothing is written.
    const narrowB = await connect(b, 'alice-narrow', { approve: false })
    const refused = await write(narrowB.client, 'narrow-b.txt')
    expect(narrowB.asked).toHaveLength(1)
    expect(refused.isError).toBe(true)
    expect(existsSync(join(work.dir, 'narrow-b.txt'))).toBe(false)

    // The broad token on B is the same identity as on A: its always holds there.
    const broadB = await connect(b, 'alice-broad', { approve: false })
    expect((await write(broadB.client, 'broad-b.txt')).isError).not.toBe(true)
    expect(broadB.asked).toHaveLength(0)
    expect(existsSync(join(work.dir, 'broad-b.txt'))).toBe(true)
  })
})
