// Issue 23 item 1 (gateway part): what an upstream server asks its client while a tool call runs
// (sampling, elicitation in form and URL mode, roots) reaches the MCP client session that made the
// call, with its answer, its errors, its cancellation and a timeout; a client without the
// capability gets a clear error; roots/list_changed goes upstream. Real parts: SDK clients with
// handlers → createMcpServer (one per session, one McpClientDirectory) → connectMcpServer with the
// relay's handlers → an SDK McpServer whose tool calls createMessage / elicitInput / listRoots.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  RootsListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer, createMcpRelay, createMcpServer, McpClientDirectory } from '../../src/mcp/index.js'
import type { McpRelayTimeouts } from '../../src/mcp/relay/relay.js'

const METHOD_NOT_FOUND = -32601
const REQUEST_TIMEOUT = -32001

type Kind = 'sample' | 'elicit' | 'url' | 'roots'

/** The upstream: `ask` sends one request to its client and reports the answer or the error. */
function upstreamServer() {
  const server = new McpServer({ name: 'asker', version: '1.0.0' })
  const seen = {
    capabilities: undefined as unknown,
    rootsAfterChange: [] as unknown[],
    /** What each `ask` got from its client, also when its caller has gone. */
    answers: [] as unknown[],
    /** `stubborn` has started; it asks its client once `go` is called. */
    stubbornStarted: false,
    go: () => {},
  }
  const going = new Promise<void>((resolve) => {
    seen.go = resolve
  })
  // Ignores the cancel of its call, then asks the client late (issue 36, item 11).
  server.registerTool('stubborn', { description: 'Asks its client late.' }, async () => {
    seen.stubbornStarted = true
    await going
    try {
      seen.answers.push({
        result: await server.server.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'late' } }],
          maxTokens: 5,
        }),
      })
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown }
      seen.answers.push({ error: { code: e.code ?? null, message: String(e.message) } })
    }
    return { content: [{ type: 'text', text: 'late' }] }
  })
  server.registerTool(
    'ask',
    { description: 'Ask the client.', inputSchema: { kind: z.enum(['sample', 'elicit', 'url', 'roots']) } },
    async ({ kind }) => {
      seen.capabilities = server.server.getClientCapabilities()
      let report: unknown
      try {
        const result =
          kind === 'sample'
            ? await server.server.createMessage({
                messages: [{ role: 'user', content: { type: 'text', text: 'say hi' } }],
                maxTokens: 5,
              })
            : kind === 'elicit'
              ? await server.server.elicitInput({
                  message: 'Your name?',
                  requestedSchema: {
                    type: 'object',
                    properties: { name: { type: 'string' }, color: { type: 'string', default: 'green' } },
                    required: ['name'],
                  },
                })
              : kind === 'url'
                ? await server.server.elicitInput({
                    mode: 'url',
                    message: 'Sign in',
                    url: 'https://example.test/login',
                    elicitationId: 'e-1',
                  })
                : await server.server.listRoots()
        if (kind === 'url') await server.server.createElicitationCompletionNotifier('e-1')()
        report = { result }
      } catch (error) {
        const e = error as { code?: unknown; message?: unknown }
        report = { error: { code: e.code ?? null, message: String(e.message) } }
      }
      seen.answers.push(report)
      return { content: [{ type: 'text', text: JSON.stringify(report) }] }
    },
  )
  // Asked outside any call: the roots again whenever the client says they changed.
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    try {
      seen.rootsAfterChange.push((await server.server.listRoots()).roots)
    } catch (error) {
      seen.rootsAfterChange.push({ error: (error as Error).message })
    }
  })
  return { server, seen }
}

interface Handlers {
  sampling?: (signal: AbortSignal) => Promise<unknown> | unknown
  elicitation?: (params: Record<string, unknown>) => unknown
  roots?: () => unknown
  onComplete?: (id: string) => void
}

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {})
})

async function gateway(timeouts?: McpRelayTimeouts, mode: 'native' | 'code' = 'native') {
  const runtime = await createToolRuntime({ mode })
  const directory = new McpClientDirectory()
  const relay = createMcpRelay(directory, { timeouts })
  const upstream = upstreamServer()
  const [near, far] = InMemoryTransport.createLinkedPair()
  await upstream.server.connect(far)
  const connection = await connectMcpServer(
    runtime.ctx,
    { transport: near },
    { name: 'asker', ...relay.handlers, onElicitationComplete: (id) => relay.onElicitationComplete(id) },
  )
  directory.onRootsChanged(() => void connection.notifyRootsChanged())
  cleanups.push(
    () => connection.close(),
    () => upstream.server.close(),
  )

  /** A client session of the gateway with the given handlers (a capability per handler). */
  const session = async (handlers: Handlers) => {
    const capabilities: Record<string, unknown> = {}
    if (handlers.sampling) capabilities.sampling = {}
    if (handlers.elicitation) capabilities.elicitation = { form: {}, url: {} }
    if (handlers.roots) capabilities.roots = { listChanged: true }
    const client = new Client({ name: 'downstream', version: '1.0.0' }, { capabilities })
    const { sampling, elicitation, roots, onComplete } = handlers
    if (sampling)
      client.setRequestHandler(CreateMessageRequestSchema, async (_request, extra) => {
        return (await sampling(extra.signal)) as never
      })
    if (elicitation)
      client.setRequestHandler(ElicitRequestSchema, async (request) => elicitation(request.params) as never)
    if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => roots() as never)
    if (onComplete)
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => onComplete(n.params.elicitationId))
    const server = createMcpServer(runtime.ctx, { name: 'gateway', version: '1.0.0', clients: directory })
    const [c, s] = InMemoryTransport.createLinkedPair()
    await server.connect(s)
    await client.connect(c)
    cleanups.push(() => client.close())
    const ask = async (kind: Kind, signal?: AbortSignal) => {
      const result = await client.callTool({ name: 'ask', arguments: { kind } }, CallToolResultSchema, { signal })
      const text = (result.content as { type: string; text: string }[])[0].text
      return JSON.parse(text) as { result?: Record<string, unknown>; error?: { code: number; message: string } }
    }
    return { client, ask }
  }
  return { directory, session, upstream, connection }
}

const sampled = (model: string) => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model })

describe('relay of sampling, elicitation and roots through the gateway (issue 23 item 1)', () => {
  it('relays each request to the calling client and its answer back; every capability is declared upstream', async () => {
    const { session, upstream } = await gateway()
    const completed: string[] = []
    const a = await session({
      sampling: () => sampled('model-a'),
      elicitation: (params) =>
        params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } },
      roots: () => ({ roots: [{ uri: 'file:///a', name: 'a' }] }),
      onComplete: (id) => completed.push(id),
    })
    expect((await a.ask('sample')).result).toEqual(sampled('model-a'))
    expect(upstream.seen.capabilities).toEqual({
      elicitation: { form: {}, url: {} },
      sampling: {},
      roots: { listChanged: true },
    })
    // The relay passes the answer on; the upstream's connectMcpServer fills the schema default.
    expect((await a.ask('elicit')).result).toEqual({ action: 'accept', content: { name: 'Ada', color: 'green' } })
    expect((await a.ask('url')).result).toEqual({ action: 'accept' })
    expect((await a.ask('roots')).result).toEqual({ roots: [{ uri: 'file:///a', name: 'a' }] })
    // The upstream's notifications/elicitation/complete reached the client that got the URL.
    await expect.poll(() => completed, { timeout: 10_000 }).toEqual(['e-1'])
  })

  it('a client that did not declare the capability: the upstream gets a clear method-not-found', async () => {
    const { session } = await gateway()
    const plain = await session({ roots: () => ({ roots: [] }) })
    for (const [kind, name] of [
      ['sample', 'sampling'],
      ['elicit', 'elicitation'],
      ['url', 'URL-mode elicitation'],
    ] as const) {
      const { error } = await plain.ask(kind)
      expect(error).toEqual({
        code: METHOD_NOT_FOUND,
        message: expect.stringContaining(`the MCP client that made this call did not declare the ${name} capability`),
      })
    }
    expect((await plain.ask('roots')).result).toEqual({ roots: [] })
  })

  it('a Code Mode program calling the upstream tool: the request reaches the client that called run_code', async () => {
    const { session } = await gateway(undefined, 'code')
    const a = await session({ sampling: () => sampled('model-code') })
    const result = await a.client.callTool({
      name: 'run_code',
      arguments: { description: 'ask', code: "const r = await tools.ask({ kind: 'sample' }); return r" },
    })
    expect(result.isError).toBeFalsy()
    expect(JSON.stringify(result.content)).toContain('model-code')
  })

  it("the client's error comes back with its code and message", async () => {
    const { session } = await gateway()
    const a = await session({
      sampling: () => {
        throw Object.assign(new Error('no model here'), { code: -32050 })
      },
    })
    // Not -32002: the gateway's upstream session (the SDK v2 Client) sends that one as -32602, the
    // code MCP 2026-07-28 gives "resource not found".
    expect((await a.ask('sample')).error).toEqual({ code: -32050, message: expect.stringContaining('no model here') })
  })

  it('cancelling the client call cancels the relayed request', async () => {
    const { session } = await gateway()
    let started!: () => void
    const waiting = new Promise<void>((resolve) => {
      started = resolve
    })
    let aborted = false
    const a = await session({
      roots: () => ({ roots: [] }),
      sampling: (signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted = true
            reject(new Error('aborted'))
          })
          started()
        }),
    })
    // The SDK cannot cancel request id 0, so the session's first request to the client is answered first.
    await a.ask('roots')
    const controller = new AbortController()
    const call = a.ask('sample', controller.signal)
    await waiting
    controller.abort()
    await expect(call).rejects.toThrow()
    await expect.poll(() => aborted, { timeout: 10_000 }).toBe(true)
  })

  it('a relayed request withdrawn by a cancel tells the upstream it was cancelled, not a timeout (issue 36)', async () => {
    const { session, upstream } = await gateway()
    let started!: () => void
    const waiting = new Promise<void>((resolve) => {
      started = resolve
    })
    const a = await session({
      roots: () => ({ roots: [] }),
      sampling: () =>
        new Promise(() => {
          started()
        }),
    })
    await a.ask('roots')
    const controller = new AbortController()
    const call = a.ask('sample', controller.signal)
    await waiting
    controller.abort()
    await expect(call).rejects.toThrow()
    await expect.poll(() => upstream.seen.answers.length, { timeout: 10_000 }).toBe(2)
    expect(upstream.seen.answers[1]).toEqual({
      error: {
        code: -32800,
        message: expect.stringContaining('the sampling request was cancelled: the tool call it served was cancelled'),
      },
    })
    expect(JSON.stringify(upstream.seen.answers[1])).not.toMatch(/did not answer within/)
  })

  it('an upstream that ignores a cancel and asks after its caller left reaches no other client (issue 36, item 11)', async () => {
    const { session, upstream } = await gateway()
    const asked: string[] = []
    const alice = await session({
      sampling: () => {
        asked.push('alice')
        return sampled('model-alice')
      },
    })
    const bob = await session({
      sampling: () => {
        asked.push('bob')
        return sampled('model-bob')
      },
    })
    // Alice's call starts, she cancels it (the upstream ignores that) and leaves.
    await alice.client.listTools()
    const controller = new AbortController()
    const call = alice.client.callTool({ name: 'stubborn', arguments: {} }, CallToolResultSchema, {
      signal: controller.signal,
    })
    await expect.poll(() => upstream.seen.stubbornStarted, { timeout: 10_000 }).toBe(true)
    controller.abort()
    await expect(call).rejects.toThrow()
    await alice.client.close()
    // Now the upstream asks: bob, the only client left, must not be asked on alice's behalf.
    upstream.seen.go()
    await expect.poll(() => upstream.seen.answers.length, { timeout: 10_000 }).toBe(1)
    expect(upstream.seen.answers[0]).toEqual({
      error: {
        code: -32603,
        message: expect.stringMatching(/a tool call that has ended .* is sent to no other client/),
      },
    })
    expect(asked).toEqual([])
    // Bob's own calls are his: while the abandoned call may still run there, the shared upstream's
    // requests cannot be told apart, and are refused rather than misrouted.
    expect((await bob.ask('sample')).error?.message).toMatch(/sent to no other client/)
    expect(asked).toEqual([])
  })

  it('a client that does not answer in time: the upstream gets a timeout naming the limit', async () => {
    const { session } = await gateway({ samplingMs: 300 })
    let cancelled = false
    const a = await session({
      roots: () => ({ roots: [] }),
      sampling: (signal) =>
        new Promise(() => {
          signal.addEventListener('abort', () => {
            cancelled = true
          })
        }),
    })
    await a.ask('roots')
    const { error } = await a.ask('sample')
    expect(error).toEqual({
      code: REQUEST_TIMEOUT,
      message: expect.stringContaining('the MCP client did not answer the sampling request within 300 ms'),
    })
    // The request the client was left with is cancelled too.
    await expect.poll(() => cancelled, { timeout: 10_000 }).toBe(true)
  })

  it('two client sessions each get their own requests; calls from both at once are refused, not misrouted', async () => {
    const { session } = await gateway()
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let holdA = false
    const asked: string[] = []
    const a = await session({
      sampling: async () => {
        asked.push('a')
        if (holdA) await held
        return sampled('model-a')
      },
    })
    const b = await session({
      sampling: () => {
        asked.push('b')
        return sampled('model-b')
      },
    })
    expect((await a.ask('sample')).result).toMatchObject({ model: 'model-a' })
    expect((await b.ask('sample')).result).toMatchObject({ model: 'model-b' })
    expect((await a.ask('sample')).result).toMatchObject({ model: 'model-a' })
    expect(asked).toEqual(['a', 'b', 'a'])
    // While A's call waits on its client, B's call cannot be told apart from it on the shared upstream.
    holdA = true
    const first = a.ask('sample')
    await expect.poll(() => asked.length, { timeout: 10_000 }).toBe(4)
    const second = await b.ask('sample')
    expect(second.error?.message).toMatch(/tool calls from 2 different callers were running/)
    release()
    expect((await first).result).toMatchObject({ model: 'model-a' })
    expect(asked).toEqual(['a', 'b', 'a', 'a'])
  })

  it('roots/list_changed from the client reaches the upstream, whose roots/list outside a call is answered by the only session', async () => {
    const { session, upstream } = await gateway()
    const one = [{ uri: 'file:///one', name: 'one' }]
    let roots = one
    const a = await session({ roots: () => ({ roots }) })
    // A client with roots connecting is a change too: the upstream asks, and gets that client's.
    await expect.poll(() => upstream.seen.rootsAfterChange, { timeout: 10_000 }).toEqual([one])
    roots = [{ uri: 'file:///two', name: 'two' }]
    await a.client.sendRootsListChanged()
    await expect.poll(() => upstream.seen.rootsAfterChange, { timeout: 10_000 }).toEqual([one, roots])
    // With a second session open, a request outside any call has no single client to go to.
    await session({})
    await a.client.sendRootsListChanged()
    await expect.poll(() => upstream.seen.rootsAfterChange.length, { timeout: 10_000 }).toBe(3)
    expect(upstream.seen.rootsAfterChange[2]).toEqual({
      error: expect.stringMatching(/outside any tool call while 2 MCP clients are connected/),
    })
  })
})
