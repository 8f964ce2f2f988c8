// Issue 35, item 4 (the reverse bridge) and "Done when": a 2026-07-28 client through toolgate serve
// in front of a 2025-11-25-only upstream. The upstream's elicitation during a call becomes an
// input-required result (its request held in toolgate's memory, the upstream call still running);
// the retry's answer goes to the upstream and the tool's result comes back. The sealed requestState
// of that round is refused when replayed, tampered with, presented for other arguments or to
// another gateway instance, and the upstream receives each answer at most once.
import type { ChildProcess } from 'node:child_process'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, tempDir, writeConfig } from '../cli/helpers.js'
import { callRound as call, modernClient, type Round, roundText as textOf } from '../cli/modern-client.js'
import { spawnReady, stopChildren } from '../cli/spawn-ready.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/legacy-asking-upstream.mjs')
const ANSWER_KEY = 'toolgate/upstream-input'

const children: ChildProcess[] = []
let cleanup: (() => Promise<void>) | undefined
let gatewayUrl: string
let otherGatewayUrl: string

beforeAll(async () => {
  const [upstreamUrl] = await spawnReady([UPSTREAM], /http:\/\/127\.0\.0\.1:\d+\/mcp/, children)
  const temp = await tempDir()
  cleanup = temp.cleanup
  const config = await writeConfig(temp.dir, { files: false, servers: { legacy: { url: upstreamUrl, prefix: '' } } })
  const serve = (): Promise<string> =>
    spawnReady(
      [BIN, 'serve', '--http', '0', '--config', config],
      /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
      children,
    ).then((match) => match[1] as string)
  ;[gatewayUrl, otherGatewayUrl] = await Promise.all([serve(), serve()])
}, 120_000)

afterAll(async () => {
  await stopChildren(children)
  await cleanup?.()
})

const accept = (name: string) => ({ [ANSWER_KEY]: { action: 'accept', content: { name } } })

/** A refused retry: a JSON-RPC error (thrown by the client) or an error result. */
async function refusal(promise: Promise<Round>): Promise<string> {
  try {
    const round = await promise
    expect(round.resultType === 'input_required' || round.isError === true).toBe(true)
    return round.isError ? textOf(round) : 'asked again'
  } catch (error) {
    return (error as Error).message
  }
}

describe('a 2026-07-28 client through toolgate serve in front of a 2025-11-25-only upstream', () => {
  it('lists and calls its tools; its elicitation becomes an input-required result, the answer goes upstream', async () => {
    const client = await modernClient(gatewayUrl)
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(['answers', 'greet', 'plain'])
      expect(textOf(await call(client, { name: 'plain', arguments: {} }))).toBe('plain result')

      const first = await call(client, { name: 'greet', arguments: { greeting: 'Hi' } })
      expect(first.resultType).toBe('input_required')
      expect(first.inputRequests?.[ANSWER_KEY]).toMatchObject({
        method: 'elicitation/create',
        params: { message: 'What is your name?' },
      })
      expect(typeof first.requestState).toBe('string')
      const done = await call(client, {
        name: 'greet',
        arguments: { greeting: 'Hi' },
        inputResponses: accept('Ada'),
        requestState: first.requestState,
      })
      expect(done.isError).toBeFalsy()
      expect(textOf(done)).toBe('Hi, Ada!')
    } finally {
      await client.close()
    }
  }, 60_000)

  it('refuses a replayed, tampered, re-targeted or foreign requestState, and the upstream gets one answer', async () => {
    const client = await modernClient(gatewayUrl)
    const other = await modernClient(otherGatewayUrl)
    try {
      const before = JSON.parse(textOf(await call(client, { name: 'answers', arguments: {} })))
      const args = { greeting: 'Hey' }
      const first = await call(client, { name: 'greet', arguments: args })
      const state = first.requestState as string
      expect(first.resultType).toBe('input_required')

      const tampered = `${state.slice(0, -2)}${state.endsWith('A') ? 'B' : 'A'}${state.slice(-1)}`
      expect(
        await refusal(
          call(client, { name: 'greet', arguments: args, inputResponses: accept('T'), requestState: tampered }),
        ),
      ).toMatch(/requestState refused: its seal does not verify/)
      expect(
        await refusal(
          call(client, {
            name: 'greet',
            arguments: { greeting: 'Yo' },
            inputResponses: accept('O'),
            requestState: state,
          }),
        ),
      ).toMatch(/requestState refused: it was issued for other arguments/)
      // Another instance did not seal it and does not hold the upstream's question.
      expect(
        await refusal(
          call(other, { name: 'greet', arguments: args, inputResponses: accept('F'), requestState: state }),
        ),
      ).toMatch(/requestState refused: its seal does not verify/)

      const done = await call(client, {
        name: 'greet',
        arguments: args,
        inputResponses: accept('Bo'),
        requestState: state,
      })
      expect(textOf(done)).toBe('Hey, Bo!')
      expect(
        await refusal(
          call(client, { name: 'greet', arguments: args, inputResponses: accept('R'), requestState: state }),
        ),
      ).toMatch(/requestState refused: it has already been used/)

      const after = JSON.parse(textOf(await call(client, { name: 'answers', arguments: {} })))
      // One run of the tool upstream, answered exactly once.
      expect(after).toEqual({ runs: before.runs + 1, answers: before.answers + 1 })
    } finally {
      await client.close()
      await other.close()
    }
  }, 60_000)

  it('a 2026 client that declared no elicitation gets the upstream refused, not a held question', async () => {
    const bare = new Client({ name: 'bare', version: '1.0.0' }, {
      capabilities: {},
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    } as never)
    await bare.connect(new StreamableHTTPClientTransport(new URL(gatewayUrl)))
    try {
      const round = (await bare.callTool({ name: 'greet', arguments: {} })) as Round
      expect(round.isError).toBe(true)
      expect(textOf(round)).toMatch(/did not declare the elicitation capability/)
    } finally {
      await bare.close()
    }
  }, 60_000)
})
