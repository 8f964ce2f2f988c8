// Issue 39, item 4 with issue 23's relay: an upstream whose sessions are per caller (auth.perUser)
// asks its client for elicitation and sampling while serving a call, and each request reaches the
// MCP client that made that call, alice's to alice and bob's to bob, at once, as it does for an
// upstream with one shared session. Before the fix, a per-caller session declared no capability and
// answered nothing, so the upstream's request failed.
import type { ChildProcess } from 'node:child_process'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, spawnServe, tempDir, textOf, vaultServeArgs, writeConfig } from './helpers.js'
import { stopChildren } from './spawn-ready.js'

const TOKENS = { alice: 'alice-gateway-token-relay-0123', bob: 'bob-gateway-token-relay-0123' }
const SECRETS = { alice: 'alice-personal-key-relay', bob: 'bob-personal-key-relay' }
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * An upstream (the official SDK server, one session per client, streaming responses) whose `ask`
 * tool elicits a name and samples a message from its client during the call, and answers with both
 * and the Authorization of the session it ran in.
 */
async function startAskingUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const http: Server = createServer(async (req, res) => {
    let text = ''
    for await (const chunk of req) text += chunk
    const id = req.headers['mcp-session-id']
    let transport = typeof id === 'string' ? transports.get(id) : undefined
    if (transport === undefined) {
      if (typeof id === 'string') return void res.writeHead(404).end()
      const opener = req.headers.authorization ?? 'none'
      const mcp = new McpServer({ name: 'asking-upstream', version: '1.0.0' })
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void transports.set(sid, fresh),
      })
      mcp.registerTool('ask', { description: 'Elicit and sample during the call.' }, async (extra) => {
        const elicited = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: 'Your name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
            },
          },
          ElicitResultSchema,
        )
        const sampled = await extra.sendRequest(
          {
            method: 'sampling/createMessage',
            params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 },
          },
          CreateMessageResultSchema,
        )
        const session =
          opener === `Bearer ${SECRETS.alice}` ? 'alice' : opener === `Bearer ${SECRETS.bob}` ? 'bob' : '?'
        return {
          content: [
            {
              type: 'text' as const,
              text: JSON.stringify({ elicited: elicited.content, model: sampled.model, session }),
            },
          ],
        }
      })
      await mcp.connect(fresh)
      transport = fresh
    }
    await transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text))
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close().catch(() => {})))
      await new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      })
    },
  }
}

let dir: string
let cleanup: () => Promise<void>
let upstream: Awaited<ReturnType<typeof startAskingUpstream>>
let gateway: { url: string; stderr: () => string; child: ChildProcess } | undefined
const clients: Client[] = []

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  upstream = await startAskingUpstream()
  const keyFile = path.join(dir, 'vault.key')
  await writeFile(keyFile, randomBytes(32).toString('hex'))
  const config = await writeConfig(dir, {
    files: false,
    auth: {
      tokens: [
        { sha256: sha256(TOKENS.alice), subject: 'alice' },
        { sha256: sha256(TOKENS.bob), subject: 'bob' },
      ],
    },
    servers: { up: { url: upstream.url, auth: { perUser: { header: 'Authorization', scheme: 'Bearer' } } } },
  })
  for (const who of ['alice', 'bob'] as const) {
    const file = path.join(dir, `${who}.secret`)
    await writeFile(file, SECRETS[who])
    const set = await runCli(
      ['vault', 'set', '--server', 'up', '--subject', who, '--value-file', file, '--config', config],
      { TOOLGATE_VAULT_KEY_FILE: keyFile },
    )
    expect(set.code, set.stderr).toBe(0)
  }
  const { child, url, stderr } = await spawnServe(vaultServeArgs(config, keyFile))
  gateway = { url, stderr, child }
}, 60_000)

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  if (gateway) await stopChildren([gateway.child])
  await upstream?.close()
  await cleanup?.()
})

/** A client of `who` that answers elicitation and sampling with its own name. */
async function connect(who: 'alice' | 'bob'): Promise<Client> {
  const client = new Client({ name: who, version: '1' }, { capabilities: { elicitation: { form: {} }, sampling: {} } })
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: who } }))
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: `hi from ${who}` },
    model: `model-of-${who}`,
  }))
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway?.url ?? ''), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } },
    }),
  )
  clients.push(client)
  return client
}

describe('per-caller upstream sessions relay elicitation and sampling (issue 39, item 4; issue 23)', () => {
  it("sends alice's upstream requests to alice and bob's to bob, while both call at once", {
    timeout: 60_000,
  }, async () => {
    const [alice, bob] = await Promise.all([connect('alice'), connect('bob')])
    const calls = Array.from({ length: 6 }, (_, i) => {
      const who = i % 2 === 0 ? 'alice' : 'bob'
      return (who === 'alice' ? alice : bob)
        .callTool({ name: 'up__ask', arguments: {} })
        .then((result) => ({ who, result }))
    })
    for (const { who, result } of await Promise.all(calls)) {
      expect(result.isError, textOf(result)).toBeFalsy()
      expect(JSON.parse(textOf(result))).toEqual({ elicited: { name: who }, model: `model-of-${who}`, session: who })
    }
    for (const secret of Object.values(SECRETS)) expect(gateway?.stderr()).not.toContain(secret)
  })
})
