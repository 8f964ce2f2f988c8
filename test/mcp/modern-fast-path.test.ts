// Issue 35, Performance: the 2026-07-28 tools/call and tools/list of `serve --http` are answered
// without the SDK's per-request server when the request is plainly well-formed
// (src/mcp/server/modern-fast-path.ts). The same raw HTTP requests go to two legs on one runtime, one
// with the fast path and one without (the SDK's serving), and must get the same answers: status,
// content type and JSON-RPC message, error cases included (those the fast path leaves to the SDK).
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createToolRuntime, defineTool } from '../../src/index.js'
import { connectMcpServer } from '../../src/mcp/index.js'
import { identityOf } from '../../src/mcp/protocol/identity.js'
import { APPROVAL_STATE_TTL_MS, ApprovalStateSeal, argumentsDigest } from '../../src/mcp/server/approval-state.js'
import { fastRequest } from '../../src/mcp/server/modern-fast-path.js'
import { createModernHttpLeg } from '../../src/mcp/server/server-modern.js'
import { startReferenceServer } from '../conformance/suite.js'
import { listenLeg } from './listen-leg.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const MODERN = '2026-07-28'
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'pin', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

/** Both legs seal under this key (each spends in its own memory), so one state can be sent to each. */
const STATE_KEY = new Uint8Array(32).fill(7)

const closers: (() => Promise<void> | void)[] = []
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

/** Who each leg was asked to serve, in order (the authInfo's subject, or "-"). */
const seen: Record<'sdk' | 'fast', string[]> = { sdk: [], fast: [] }
const urls: Record<'sdk' | 'fast', string> = { sdk: '', fast: '' }

beforeAll(async () => {
  const rt = await createToolRuntime()
  closers.push(() => rt.dispose())
  rt.tools.register(
    defineTool({
      name: 'ping_tool',
      description: 'Answers pong (a string as its structured output).',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
      execute: async () => 'pong',
    }),
  )
  rt.tools.register(
    defineTool({
      name: 'add',
      description: 'Add.',
      parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
      output: {
        schema: {
          type: 'object',
          properties: { sum: { type: 'integer', required: true } },
          additionalProperties: false,
        },
        render: (_args, v) => [{ type: 'text', text: String(v.sum) }],
      },
      execute: async ({ a, b }) => ({ sum: a + b }),
    }),
  )
  rt.tools.register(
    defineTool({
      name: 'guarded',
      description: 'Needs approval.',
      parameters: { env: { type: 'string', required: true } },
      needsApproval: true,
      output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
      execute: async ({ env }) => `deployed to ${env}`,
    }),
  )
  const upstream = await connectMcpServer(rt.ctx, { command: process.execPath, args: [UPSTREAM] }, { prefix: 'up__' })
  closers.push(() => upstream.close())
  // The project's 2026-07-28 reference server: its tools answer with input-required results and -32021.
  const reference = await startReferenceServer()
  closers.push(() => reference.stop())
  const modern = await connectMcpServer(rt.ctx, { url: reference.url }, { prefix: 'ref__' })
  closers.push(() => modern.close())
  for (const side of ['sdk', 'fast'] as const) {
    const leg = createModernHttpLeg(rt.ctx, {
      agentFor: (info) => {
        seen[side].push(identityOf(info)?.subject ?? '-')
        return undefined
      },
      name: 'gw',
      version: '1.0.0',
      maxMessageBytes: 1 << 20,
      fastPath: side === 'fast',
      stateKey: STATE_KEY,
    })
    closers.push(() => leg.close())
    urls[side] = await listenLeg(leg, closers)
  }
}, 60_000)

interface Sent {
  headers: Record<string, string>
  body: Record<string, unknown>
}

/** A well-formed request, as the SDK v2 client sends it. */
function request(method: string, params: Record<string, unknown>, id: string | number = 7): Sent {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-method': method,
    'mcp-protocol-version': MODERN,
  }
  if (method === 'tools/call') headers['mcp-name'] = String(params.name)
  return { headers, body: { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } } }
}

const call = (name: string, args: Record<string, unknown> = {}) => request('tools/call', { name, arguments: args })

/** What one leg answers. */
async function answer(side: 'sdk' | 'fast', sent: Sent) {
  const res = await fetch(urls[side], { method: 'POST', headers: sent.headers, body: JSON.stringify(sent.body) })
  const message = JSON.parse(await res.text()) as { result?: { requestState?: unknown } }
  // Each leg seals with a key of its own: the state is compared by its presence.
  if (typeof message.result?.requestState === 'string') message.result.requestState = '(sealed)'
  return { status: res.status, type: res.headers.get('content-type'), message: message as unknown }
}

/** Both legs answer alike; returns the answer. `fast` says whether the fast path takes the request. */
async function same(sent: Sent, fast: boolean) {
  expect(fastRequest({ method: 'POST', headers: sent.headers }, sent.body) !== undefined).toBe(fast)
  const sdk = await answer('sdk', sent)
  const ours = await answer('fast', sent)
  expect(ours).toEqual(sdk)
  return ours
}

describe('the 2026-07-28 fast path answers as the SDK does (issue 35, Performance)', { timeout: 60_000 }, () => {
  it('tools/list: the same tools, cache hints and server info', async () => {
    const listed = await same(request('tools/list', {}), true)
    expect(listed.status).toBe(200)
    expect(listed.message).toMatchObject({
      id: 7,
      result: { resultType: 'complete', ttlMs: 0, cacheScope: 'private' },
    })
    const names = (listed.message as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(['ping_tool', 'add', 'up__echo', 'up__kinds']))
    // The upstream's tools declare execution.taskSupport (2025); this era's listing leaves it out.
    expect(JSON.stringify(listed.message)).not.toContain('taskSupport')
  })

  it('tools/call: results of every shape, a string id, and a caller identity', async () => {
    for (const sent of [
      call('add', { a: 2, b: 3 }),
      call('ping_tool'),
      call('up__echo', { text: 'hi' }),
      call('up__kinds'),
      call('up__media'),
      request('tools/call', { name: 'up__echo', arguments: { text: 'id' } }, 'a-string-id'),
      request('tools/call', { name: 'up__pid' }),
    ])
      expect((await same(sent, true)).status).toBe(200)
    const identified = call('add', { a: 1, b: 1 })
    identified.headers['x-test-subject'] = 'alice'
    const before = { sdk: seen.sdk.length, fast: seen.fast.length }
    await same(identified, true)
    expect(seen.fast.slice(before.fast)).toEqual(seen.sdk.slice(before.sdk))
    expect(seen.fast.slice(before.fast)).toContain('alice')
  })

  it('tools/call: failures that are results (a failing tool, an unknown tool, bad arguments)', async () => {
    for (const sent of [
      call('up__fail'),
      call('no_such_tool'),
      call('add', { a: 'x' }),
      call('up__echo', { text: 5 }),
    ]) {
      const got = await same(sent, true)
      expect(got.message).toMatchObject({ id: 7, result: { isError: true } })
    }
  })

  it("a 2026 upstream's answers pass alike: -32021 with HTTP 400, an input-required result", async () => {
    // A complete result: the upstream's own _meta (its server info) passes as the SDK passes it.
    expect((await same(call('ref__test_simple_text'), true)).message).toMatchObject({
      id: 7,
      result: { content: [{ type: 'text' }] },
    })
    const missing = await same(call('ref__test_missing_capability'), true)
    expect(missing).toMatchObject({ status: 400, message: { id: 7, error: { code: -32021 } } })
    const asking = call('ref__test_streaming_elicitation')
    ;(asking.body.params as { _meta: Record<string, unknown> })._meta = {
      ...META,
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
    }
    const asked = await same(asking, true)
    expect(asked.message).toMatchObject({ id: 7, result: { resultType: 'input_required' } })
  })

  it('declared capabilities of the plain kind stay on the fast path', async () => {
    const sent = call('add', { a: 1, b: 2 })
    ;(sent.body.params as { _meta: Record<string, unknown> })._meta = {
      ...META,
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, roots: { listChanged: true } },
    }
    await same(sent, true)
  })

  it("refusals are the SDK's own, with the request id: the envelope (-32602), headers (-32020), params, removed methods (404)", async () => {
    const noMeta = call('add', { a: 1, b: 2 })
    delete (noMeta.body.params as { _meta?: unknown })._meta
    expect((await same(noMeta, false)).message).toMatchObject({ id: 7, error: { code: -32602 } })

    const badVersion = call('add', { a: 1, b: 2 })
    ;(badVersion.body.params as { _meta: Record<string, unknown> })._meta = {
      ...META,
      'io.modelcontextprotocol/protocolVersion': 12,
    }
    expect((await same(badVersion, false)).message).toMatchObject({ id: 7, error: { code: -32602 } })

    const wrongName = call('add', { a: 1, b: 2 })
    wrongName.headers['mcp-name'] = 'ping_tool'
    expect(await same(wrongName, false)).toMatchObject({ status: 400, message: { id: 7, error: { code: -32020 } } })

    const wrongMethod = call('add', { a: 1, b: 2 })
    wrongMethod.headers['mcp-method'] = 'tools/list'
    expect(await same(wrongMethod, false)).toMatchObject({ status: 400, message: { id: 7, error: { code: -32020 } } })

    const numberName = request('tools/call', { name: 5 })
    expect((await same(numberName, false)).message).toMatchObject({ id: 7, error: { code: -32602 } })

    const arrayArgs = request('tools/call', { name: 'add', arguments: [1, 2] })
    expect((await same(arrayArgs, false)).message).toMatchObject({ id: 7, error: { code: -32602 } })

    const removed = request('initialize', {})
    expect(await same(removed, false)).toMatchObject({ status: 404, message: { id: 7, error: { code: -32601 } } })
  })

  it('trace context rides the fast path on a call (issue 35, item 2); a non-string one, or one on a listing, goes to the SDK', async () => {
    const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const traced = (sent: Sent, extra: Record<string, unknown>) => {
      ;(sent.body.params as { _meta: Record<string, unknown> })._meta = { ...META, ...extra }
      return sent
    }
    await same(traced(call('up__echo', { text: 'a' }), { traceparent: TRACEPARENT }), true)
    await same(traced(call('add', { a: 1, b: 2 }), { traceparent: TRACEPARENT, tracestate: 'vendor=abc' }), true)
    // A malformed one is the handler's to ignore, on either path.
    await same(traced(call('add', { a: 1, b: 2 }), { traceparent: 'nonsense', tracestate: '' }), true)
    await same(traced(call('add', { a: 1, b: 2 }), { traceparent: 42 }), false)
    await same(traced(request('tools/list', {}), { traceparent: TRACEPARENT }), false)
  })

  it('what only the SDK serves goes to it: Mcp-Param-* headers, progress, a log level, richer client info', async () => {
    const param = call('up__echo', { text: 'a' })
    param.headers['mcp-param-text'] = 'a'
    await same(param, false)
    const withMeta = (extra: Record<string, unknown>) => {
      const sent = call('up__echo', { text: 'a' })
      ;(sent.body.params as { _meta: Record<string, unknown> })._meta = { ...META, ...extra }
      return sent
    }
    await same(withMeta({ progressToken: 'p1' }), false)
    await same(withMeta({ 'io.modelcontextprotocol/logLevel': 'debug' }), false)
    await same(withMeta({ 'io.modelcontextprotocol/clientInfo': { name: 'pin', version: '1', title: 'Pin' } }), false)
  })
})

/** A client that declares elicitation (it can be asked). */
const ASKABLE = { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }
const APPROVAL = 'toolgate/approval'
const accept = { action: 'accept', content: { approve: true } }

/** A call from a client that can be asked; with `retry`, the retry carrying its state and answers. */
function askable(
  name: string,
  args: Record<string, unknown>,
  retry?: { state: unknown; answers?: unknown },
  id: string | number = 7,
): Sent {
  const sent = request('tools/call', { name, arguments: args }, id)
  const params = sent.body.params as Record<string, unknown>
  params._meta = ASKABLE
  if (retry !== undefined) {
    params.requestState = retry.state
    if (retry.answers !== undefined) params.inputResponses = retry.answers
  }
  return sent
}

/** The sealed state a first round gets from one leg (both legs seal under the same key). */
async function stateFrom(side: 'sdk' | 'fast', name: string, args: Record<string, unknown>): Promise<string> {
  const sent = askable(name, args)
  const res = await fetch(urls[side], { method: 'POST', headers: sent.headers, body: JSON.stringify(sent.body) })
  const message = (await res.json()) as { result?: { resultType?: string; requestState?: unknown } }
  expect(message.result?.resultType).toBe('input_required')
  expect(typeof message.result?.requestState).toBe('string')
  return message.result?.requestState as string
}

/** A state sealed under the legs' key (or `key`) with the fields a first round of `guarded` would seal. */
function sealed(args: Record<string, unknown>, fields: { subject?: string; now?: number; key?: Uint8Array } = {}) {
  return new ApprovalStateSeal(fields.key ?? STATE_KEY).seal(
    { subject: fields.subject ?? '', tool: 'guarded', asked: 'guarded', args: argumentsDigest(args), callId: 'c' },
    fields.now,
  )
}

describe('a retry carrying requestState takes the fast path, answered as the SDK answers it (issue 35, item 4; R-EXEC-4, R-SCHED-3)', {
  timeout: 60_000,
}, () => {
  it('the first round asks alike; the same state, accepted, runs the call with the same result on both paths', async () => {
    const asked = await same(askable('guarded', { env: 'prod' }), true)
    expect(asked.message).toMatchObject({
      id: 7,
      result: { resultType: 'input_required', requestState: '(sealed)', inputRequests: { [APPROVAL]: {} } },
    })
    // One state, sent to each leg (each spends its nonce in its own ledger).
    const state = await stateFrom('sdk', 'guarded', { env: 'prod' })
    const done = await same(askable('guarded', { env: 'prod' }, { state, answers: { [APPROVAL]: accept } }), true)
    expect(done).toMatchObject({
      status: 200,
      message: { id: 7, result: { resultType: 'complete', content: [{ type: 'text', text: 'deployed to prod' }] } },
    })
    expect((done.message as { result: { isError?: boolean } }).result.isError).not.toBe(true)
    // Replayed: refused on both, path-qualified.
    const replay = await same(askable('guarded', { env: 'prod' }, { state, answers: { [APPROVAL]: accept } }), true)
    expect(replay.message).toMatchObject({
      id: 7,
      error: { code: -32602, message: expect.stringMatching(/already been used/) },
    })
  })

  it('decline and cancel answer alike, as results; a string id and an identified caller too', async () => {
    for (const action of ['decline', 'cancel']) {
      const state = await stateFrom('fast', 'guarded', { env: action })
      const got = await same(askable('guarded', { env: action }, { state, answers: { [APPROVAL]: { action } } }), true)
      expect(got.message).toMatchObject({ id: 7, result: { isError: true } })
    }
    const args = { env: 'mine' }
    const state = sealed(args, { subject: 'alice' })
    const sent = askable('guarded', args, { state, answers: { [APPROVAL]: accept } }, 'r-1')
    sent.headers['x-test-subject'] = 'alice'
    expect((await same(sent, true)).message).toMatchObject({ id: 'r-1', result: { resultType: 'complete' } })
  })

  it('refusals are the same errors in the same order, and spend nothing: seal, expiry, caller, tool, arguments, answer', async () => {
    const args = { env: 'stage' }
    const state = sealed(args)
    const retry = (over: { state?: unknown; name?: string; args?: Record<string, unknown>; answers?: unknown } = {}) =>
      askable(over.name ?? 'guarded', over.args ?? args, {
        state: over.state ?? state,
        answers: 'answers' in over ? over.answers : { [APPROVAL]: accept },
      })
    const refused = async (sent: Sent, reason: RegExp, fast = true) => {
      const got = await same(sent, fast)
      expect(got.message).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringMatching(reason) } })
    }
    const [body, mac] = state.slice('tg-approval.1.'.length).split('.')
    const flipped = `tg-approval.1.${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`
    await refused(retry({ state: flipped }), /requestState refused: its seal does not verify/)
    await refused(retry({ state: sealed(args, { key: new Uint8Array(32).fill(9) }) }), /seal does not verify/)
    await refused(retry({ state: 'not-a-state' }), /requestState refused: it is not an approval state/)
    await refused(retry({ state: `${state}.x` }), /requestState refused: it is malformed/)
    await refused(retry({ state: sealed(args, { now: Date.now() - APPROVAL_STATE_TTL_MS - 1000 }) }), /it has expired/)
    await refused(retry({ state: sealed(args, { subject: 'mallory' }) }), /issued to another caller/)
    await refused(retry({ name: 'add', args }), /issued for another tool/)
    await refused(retry({ args: { env: 'prod' } }), /issued for other arguments/)
    // The answer is checked last, before the nonce is spent: missing, of another action, or of another shape.
    const unanswered = /^tools\/call: inputResponses\.toolgate\/approval: expected the answer/
    await refused(retry({ answers: undefined }), unanswered)
    await refused(retry({ answers: {} }), unanswered)
    await refused(retry({ answers: { other: accept } }), unanswered)
    // Answers of a shape the SDK's lift decides about go to the SDK.
    await refused(retry({ answers: { [APPROVAL]: 'yes' } }), unanswered, false)
    await refused(retry({ answers: { [APPROVAL]: { action: 42 } } }), unanswered, false)
    await refused(
      retry({ answers: { [APPROVAL]: { method: 'elicitation/create', result: accept } } }),
      unanswered,
      false,
    )
    // Nothing above spent the state: it still runs the call, once, on each path.
    const done = await same(retry(), true)
    expect(done.message).toMatchObject({ id: 7, result: { content: [{ text: 'deployed to stage' }] } })
    await refused(retry(), /already been used/)
  })

  it('a retry of another shape goes to the SDK: a non-string or empty state, answers without a state', async () => {
    const args = { env: 'odd' }
    for (const state of [5, '', null])
      await same(askable('guarded', args, { state, answers: { [APPROVAL]: accept } }), false)
    const noState = askable('guarded', args)
    ;(noState.body.params as Record<string, unknown>).inputResponses = { [APPROVAL]: accept }
    await same(noState, false)
    // Content beyond flat values (a multi-select's list) is the SDK's to lift.
    const list = sealed(args)
    await same(
      askable('guarded', args, {
        state: list,
        answers: { [APPROVAL]: { action: 'accept', content: { approve: true, tags: ['a'] } } },
      }),
      false,
    )
  })

  it("an upstream's question and its retry pass alike: the answers go back upstream", async () => {
    const sent = askable('ref__test_streaming_elicitation', {})
    const asked = await same(sent, true)
    expect(asked.message).toMatchObject({ result: { resultType: 'input_required', inputRequests: { user_name: {} } } })
    const state = await stateFrom('fast', 'ref__test_streaming_elicitation', {})
    const answers = { user_name: { action: 'accept', content: { name: 'Ada' } } }
    const done = await same(askable('ref__test_streaming_elicitation', {}, { state, answers }), true)
    expect(done.message).toMatchObject({ id: 7, result: { content: [{ type: 'text', text: 'Hello, Ada!' }] } })
  })
})

describe('the envelope keys the fast path and serve’s first script read without the SDK (issue 35)', () => {
  it('are the SDK’s own', async () => {
    const sdk = await import('@modelcontextprotocol/server')
    const own = await import('../../src/mcp/protocol/modern-request.js')
    expect([
      own.PROTOCOL_VERSION_META_KEY,
      own.CLIENT_INFO_META_KEY,
      own.CLIENT_CAPABILITIES_META_KEY,
      own.SERVER_INFO_META_KEY,
    ]).toEqual([
      sdk.PROTOCOL_VERSION_META_KEY,
      sdk.CLIENT_INFO_META_KEY,
      sdk.CLIENT_CAPABILITIES_META_KEY,
      sdk.SERVER_INFO_META_KEY,
    ])
  })
})
