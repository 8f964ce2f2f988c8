// Issue 35, item 4: a tool that needs toolgate's own approval and whose upstream also asks input.
// A 2026-07-28 client (the v2 SDK, answering each round itself) through the built `serve --http`:
// the approval is asked once, then the upstream's question comes as the next round's input
// request, and the retry that answers it runs on the approval sealed in the state (it is not asked
// again). Against a 2026-07-28 upstream (its input-required result relayed) and a 2025-11-25
// upstream (its elicitation held in memory). The upstream runs the call once; a used, tampered or
// re-pointed state of a later round is refused and runs nothing.
import type { ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, tempDir, writeConfig } from '../cli/helpers.js'
import {
  callRound as call,
  modernClient as connectModern,
  type Round,
  roundText as textOf,
} from '../cli/modern-client.js'
import { spawnReady, stopChildren } from '../cli/spawn-ready.js'
import { buildServer } from '../fixtures/conformance-server/build.js'

const LEGACY = path.resolve(import.meta.dirname, '../fixtures/legacy-asking-upstream.mjs')
const APPROVAL = 'toolgate/approval'
const UPSTREAM_INPUT = 'toolgate/upstream-input'
const ASKING = 'modern__test_input_required_result_elicitation'

const children: ChildProcess[] = []
let cleanup: (() => Promise<void>) | undefined
let modern: Server
let gatewayUrl: string
/** The 2026 upstream's tools/call requests, as it received them. */
const upstreamCalls: { name: string; inputResponses?: Record<string, unknown>; requestState?: unknown }[] = []

/** The reference server's 2026-07-28 instance on 127.0.0.1, recording each tools/call it gets. */
async function startModern(): Promise<string> {
  const handler = toNodeHandler(createMcpHandler(() => buildServer('modern'), { legacy: 'reject' }))
  modern = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const body = text === '' ? undefined : JSON.parse(text)
    if (body?.method === 'tools/call') upstreamCalls.push(body.params)
    handler(req, res, body).catch(() => {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  })
  await new Promise<void>((resolve) => modern.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(modern.address() as AddressInfo).port}/mcp`
}

beforeAll(async () => {
  const [[legacyUrl], modernUrl] = await Promise.all([
    spawnReady([LEGACY], /http:\/\/127\.0\.0\.1:\d+\/mcp/, children),
    startModern(),
  ])
  const temp = await tempDir()
  cleanup = temp.cleanup
  const config = await writeConfig(temp.dir, {
    files: false,
    servers: { legacy: { url: legacyUrl, prefix: '' }, modern: { url: modernUrl } },
    policy: { ask: ['greet', ASKING] },
  })
  const [, url] = await spawnReady(
    [BIN, 'serve', '--http', '0', '--config', config],
    /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    children,
  )
  gatewayUrl = url as string
}, 120_000)

afterAll(async () => {
  await stopChildren(children)
  await new Promise((resolve) => {
    modern?.closeAllConnections()
    modern?.close(resolve)
  })
  await cleanup?.()
})

const modernClient = (): Promise<Client> => connectModern(gatewayUrl)
const approve = { [APPROVAL]: { action: 'accept', content: { approve: true } } }

/** A refused retry's message (a JSON-RPC error), or what came instead. */
async function refusal(promise: Promise<Round>): Promise<string> {
  try {
    const round = await promise
    return round.resultType === 'input_required'
      ? `asked again: ${Object.keys(round.inputRequests ?? {})}`
      : textOf(round)
  } catch (error) {
    return (error as Error).message
  }
}

/** Runs a call round by round, answering each input request with `answer`; every round's input keys. */
async function rounds(
  client: Client,
  params: { name: string; arguments: Record<string, unknown> },
  answer: (key: string) => unknown,
): Promise<{ asked: string[][]; states: string[]; result: Round }> {
  const asked: string[][] = []
  const states: string[] = []
  let round = await call(client, params)
  for (let i = 0; round.resultType === 'input_required' && i < 5; i++) {
    const keys = Object.keys(round.inputRequests ?? {})
    asked.push(keys)
    states.push(round.requestState as string)
    const inputResponses = Object.fromEntries(keys.map((key) => [key, answer(key)]))
    round = await call(client, { ...params, inputResponses, requestState: round.requestState })
  }
  return { asked, states, result: round }
}

describe('an approval and an upstream question in one call of a 2026-07-28 client', { timeout: 90_000 }, () => {
  it('2026 upstream: approval asked once, its input-required result relayed, the retry runs on the approval', async () => {
    const client = await modernClient()
    try {
      upstreamCalls.length = 0
      const { asked, states, result } = await rounds(client, { name: ASKING, arguments: {} }, (key) =>
        key === APPROVAL ? approve[APPROVAL] : { action: 'accept', content: { name: 'Ada' } },
      )
      expect(asked).toEqual([[APPROVAL], ['user_name']])
      expect(result.isError).toBeFalsy()
      expect(textOf(result)).toBe('Hello, Ada!')
      // The upstream got the call once (after the approval) and its retry once, with the answer.
      const mine = upstreamCalls.filter((params) => params.name === 'test_input_required_result_elicitation')
      expect(mine).toHaveLength(2)
      expect(mine[0].inputResponses).toBeUndefined()
      expect(mine[1].inputResponses).toEqual({ user_name: { action: 'accept', content: { name: 'Ada' } } })

      // The later round's state, replayed after use, is refused and reaches no upstream.
      const replay = await refusal(
        call(client, {
          name: ASKING,
          arguments: {},
          inputResponses: { user_name: { action: 'accept', content: { name: 'Eve' } } },
          requestState: states[1],
        }),
      )
      expect(replay).toMatch(/requestState refused: it has already been used/)
      expect(upstreamCalls.filter((params) => params.name === 'test_input_required_result_elicitation')).toHaveLength(2)
    } finally {
      await client.close()
    }
  })

  it('2025 upstream: approval asked once, its elicitation held, the answer goes up once', async () => {
    const client = await modernClient()
    try {
      const before = JSON.parse(textOf(await call(client, { name: 'answers', arguments: {} })))
      const { asked, result } = await rounds(client, { name: 'greet', arguments: { greeting: 'Hi' } }, (key) =>
        key === APPROVAL ? approve[APPROVAL] : { action: 'accept', content: { name: 'Lin' } },
      )
      expect(asked).toEqual([[APPROVAL], [UPSTREAM_INPUT]])
      expect(textOf(result)).toBe('Hi, Lin!')
      const after = JSON.parse(textOf(await call(client, { name: 'answers', arguments: {} })))
      expect(after).toEqual({ runs: before.runs + 1, answers: before.answers + 1 })
    } finally {
      await client.close()
    }
  })

  it('a later round carrying the approval is bound: tampered or re-pointed, it is refused and runs nothing', async () => {
    const client = await modernClient()
    try {
      const args = { greeting: 'Yo' }
      const first = await call(client, { name: 'greet', arguments: args })
      expect(Object.keys(first.inputRequests ?? {})).toEqual([APPROVAL])
      const second = await call(client, {
        name: 'greet',
        arguments: args,
        inputResponses: approve,
        requestState: first.requestState,
      })
      expect(Object.keys(second.inputRequests ?? {})).toEqual([UPSTREAM_INPUT])
      const state = second.requestState as string
      const body = JSON.parse(Buffer.from(state.split('.')[2], 'base64url').toString('utf8'))
      expect(body.approved).toMatchObject({ asked: 'greet' })

      // Its approval cannot be stretched: the seal covers it.
      const [name, version, , mac] = state.split('.')
      const stretched = Buffer.from(
        JSON.stringify({ ...body, approved: { ...body.approved, until: Date.now() + 86_400_000 } }),
      ).toString('base64url')
      const answer = { [UPSTREAM_INPUT]: { action: 'accept', content: { name: 'Mallory' } } }
      expect(
        await refusal(
          call(client, {
            name: 'greet',
            arguments: args,
            inputResponses: answer,
            requestState: `${name}.${version}.${stretched}.${mac}`,
          }),
        ),
      ).toMatch(/seal does not verify/)
      // Nor carried to other arguments.
      expect(
        await refusal(
          call(client, { name: 'greet', arguments: { greeting: 'Hey' }, inputResponses: answer, requestState: state }),
        ),
      ).toMatch(/other arguments/)
      // The real retry still goes through once; its replay does not.
      const done = await call(client, {
        name: 'greet',
        arguments: args,
        inputResponses: { [UPSTREAM_INPUT]: { action: 'accept', content: { name: 'Bo' } } },
        requestState: state,
      })
      expect(textOf(done)).toBe('Yo, Bo!')
      expect(
        await refusal(call(client, { name: 'greet', arguments: args, inputResponses: answer, requestState: state })),
      ).toMatch(/already been used/)
    } finally {
      await client.close()
    }
  })

  it('without the approval the upstream is never called', async () => {
    const client = await modernClient()
    try {
      upstreamCalls.length = 0
      const first = await call(client, { name: ASKING, arguments: {} })
      const declined = await call(client, {
        name: ASKING,
        arguments: {},
        inputResponses: { [APPROVAL]: { action: 'decline' } },
        requestState: first.requestState,
      })
      expect(declined.isError).toBe(true)
      expect(upstreamCalls).toHaveLength(0)
    } finally {
      await client.close()
    }
  })
})
