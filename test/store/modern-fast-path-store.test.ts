// Issue 35, Performance: with a store (`serve --http --store`), the 2026-07-28 tools/call
// and tools/list are answered on the fast path (src/mcp/server/modern-fast-path.ts), and the answer
// still leaves only once the journal records before it are acknowledged, as the SDK's path with the
// store's acknowledgement does. The legs are serve's own (serve-session.ts's modernLeg, and
// modernOptions with the fast path off for the SDK's path) on a real gateway and the store's shared
// state (shareStore), over the file store and a real PostgreSQL. Which path answered is told by the
// per-request servers the SDK's path builds (each goes through the store's `acknowledging`): the fast
// path builds none. A store whose appends are held tells that the answer waits for its record. A
// kept Code Mode program (a state key, code mode) pauses and resumes on the fast path too.

import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { type Acknowledging, modernLeg, modernOptions } from '../../src/gateway/serve-session.js'
import { RESULT_NOT_RECORDED, type SharedState, shareStore } from '../../src/gateway/serve-store.js'
import type { GatewaySettings } from '../../src/gateway/settings.js'
import { defineTool } from '../../src/index.js'
import type { JournalRecord } from '../../src/journal/records.js'
import type { Store } from '../../src/journal/store.js'
import { JsonRpcCode } from '../../src/mcp/protocol/jsonrpc-codes.js'
import { fastRequest } from '../../src/mcp/server/modern-fast-path.js'
import { createModernHttpLeg, type ModernHttpLeg } from '../../src/mcp/server/server-modern.js'
import { createFileStore, createPostgresStore } from '../../src/store/index.js'
import { tempDir } from '../cli/helpers.js'
import { listenLeg } from '../mcp/listen-leg.js'
import { type PgServer, startPgServer } from './pg-server.js'

const MODERN = '2026-07-28'
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
}
const SERVER_INFO = { name: 'toolgate', version: '0.0.0' }

/** A store whose appends of records of `hold`'s types wait for `release()`, or fail with `fail`. */
class GatedStore {
  hold: JournalRecord['type'] | undefined
  fail: JournalRecord['type'] | undefined
  /** Held appends, in order; each resolves the append once released. */
  readonly held: { records: readonly JournalRecord[]; release: () => void }[] = []
  /** Records whose append the store acknowledged, in order. */
  readonly acknowledged: JournalRecord[] = []

  constructor(readonly inner: Store) {}

  store(): Store {
    return new Proxy(this.inner, {
      get: (target, key, receiver) => {
        if (key !== 'append') {
          const value = Reflect.get(target, key, receiver)
          return typeof value === 'function' ? value.bind(target) : value
        }
        return async (records: readonly JournalRecord[]) => {
          const types = records.map((record) => record.type)
          if (this.fail !== undefined && types.includes(this.fail))
            throw new Error('the store refused the append (test)')
          if (this.hold !== undefined && types.includes(this.hold))
            await new Promise<void>((release) => this.held.push({ records, release }))
          await target.append(records)
          this.acknowledged.push(...records)
        }
      },
    })
  }
}

interface Sent {
  headers: Record<string, string>
  body: Record<string, unknown>
}

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
const call = (name: string, args: Record<string, unknown> = {}, id: string | number = 7) =>
  request('tools/call', { name, arguments: args }, id)

interface Answer {
  status: number
  message: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; data?: unknown } }
  /** The records the store had acknowledged when the answer's headers arrived. */
  recorded: JournalRecord[]
}

/** One gateway over `open()`'s store, with the SDK's leg and the fast path's (serve's wiring). */
async function gatewayOver(
  open: (dir: string) => Promise<Store>,
  settings: (dir: string) => Partial<GatewaySettings> = () => ({}),
  ownTools = true,
) {
  const work = await tempDir()
  const closers: (() => Promise<void> | void)[] = [() => work.cleanup()]
  const sink = { write: () => true } as unknown as NodeJS.WritableStream
  const log = createLog(sink, false)
  const gateway = await openGateway(
    {
      root: work.dir,
      bash: false,
      mode: 'native',
      servers: {},
      policy: {},
      verbose: false,
      access: { allowedHosts: [], allowedOrigins: [] },
      ...settings(work.dir),
    },
    log,
  )
  closers.push(() => gateway.close())
  const ran: string[] = []
  if (ownTools) {
    gateway.agent.ctx.tools.register(
      defineTool({
        name: 'ping_tool',
        description: 'Answers pong.',
        parameters: { n: { type: 'integer' } },
        output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
        execute: async ({ n }) => {
          ran.push(`ping ${n ?? ''}`)
          return 'pong'
        },
      }),
    )
    gateway.agent.ctx.tools.register(
      defineTool({
        name: 'guarded',
        description: 'Needs approval.',
        parameters: { env: { type: 'string', required: true } },
        needsApproval: true,
        output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
        execute: async ({ env }) => {
          ran.push(`guarded ${env}`)
          return `deployed to ${env}`
        },
      }),
    )
  }
  const gate = new GatedStore(await open(work.dir))
  const shared: SharedState = await shareStore(gateway, gate.store(), log)
  closers.push(() => shared.close())
  /** Per-request servers the SDK's path built, per leg. */
  const built = { sdk: 0, fast: 0 }
  const acknowledging = (side: 'sdk' | 'fast'): Acknowledging => ({
    server: (server) => {
      built[side]++
      return shared.acknowledging(server)
    },
    answer: (message) => shared.acknowledged(message),
  })
  const legs: Record<'sdk' | 'fast', ModernHttpLeg> = {
    fast: await modernLeg(
      gateway,
      SERVER_INFO,
      () => undefined,
      log,
      acknowledging('fast'),
      shared.approvalStates,
    )(1 << 20),
    sdk: createModernHttpLeg(gateway.agent.ctx, {
      ...modernOptions(gateway, SERVER_INFO, () => undefined, log, acknowledging('sdk')),
      maxMessageBytes: 1 << 20,
      spentStates: shared.approvalStates.spent,
      fastPath: false,
    }),
  }
  const urls = { sdk: '', fast: '' }
  for (const side of ['sdk', 'fast'] as const) {
    closers.push(() => legs[side].close())
    urls[side] = await listenLeg(legs[side], closers)
  }

  /** One leg's answer, with what the store had acknowledged as it arrived. */
  const answer = async (side: 'sdk' | 'fast', sent: Sent): Promise<Answer> => {
    const res = await fetch(urls[side], { method: 'POST', headers: sent.headers, body: JSON.stringify(sent.body) })
    const recorded = [...gate.acknowledged]
    return { status: res.status, message: JSON.parse(await res.text()), recorded }
  }
  /** The records of the store, in order. */
  const records = async (): Promise<JournalRecord[]> => {
    const out: JournalRecord[] = []
    for await (const { record } of shared.store.read()) out.push(record)
    return out
  }
  return {
    dir: work.dir,
    gate,
    built,
    ran,
    answer,
    records,
    async close() {
      for (const close of closers.splice(0).reverse()) await close()
    },
  }
}

/** Bounded wait for a state another part reaches (never a fixed sleep). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A record's kind and call, without times and ids that differ between two runs. */
const shape = (record: JournalRecord) => ({ type: record.type, toolName: record.toolName })
/** The `result` records of `tool`. */
const results = (records: readonly JournalRecord[], tool: string) =>
  records.filter((record) => record.type === 'result' && record.toolName === tool)

let pg: Promise<PgServer> | undefined
afterAll(async () => (await pg)?.destroy())

const stores: [string, (dir: string) => Promise<Store>][] = [
  ['the file store', async (dir) => createFileStore({ journal: path.join(dir, 'journal.jsonl') })],
  [
    'PostgreSQL',
    async () => {
      pg ??= startPgServer()
      const server = await pg
      return createPostgresStore({ connectionString: server.createDatabase(`fast_${Date.now()}`) })
    },
  ],
]

describe.each(stores)(
  'the 2026-07-28 fast path under a store: %s (issue 35, Performance)',
  { timeout: 240_000 },
  (_, open) => {
    let g: Awaited<ReturnType<typeof gatewayOver>>
    beforeAll(async () => {
      g = await gatewayOver(open)
    }, 180_000)
    afterAll(() => g?.close())

    it('answers tools/call and tools/list on the fast path, as the SDK’s path does, each call journaled', async () => {
      const sent = [request('tools/list', {}), call('ping_tool', { n: 1 }), call('ping_tool', { n: 2 }, 'an-id')]
      for (const one of sent) expect(fastRequest({ method: 'POST', headers: one.headers }, one.body)).toBeDefined()
      for (const one of sent) {
        const before = { sdk: g.built.sdk, fast: g.built.fast }
        const sdk = await g.answer('sdk', one)
        const fast = await g.answer('fast', one)
        expect(fast.status).toBe(sdk.status)
        expect(fast.message).toEqual(sdk.message)
        // The SDK's path built (and the store wrapped) a server for its request; the fast path none.
        expect(g.built.sdk).toBe(before.sdk + 1)
        expect(g.built.fast).toBe(before.fast)
      }
      // Each leg's two calls are in the store, started and ended.
      const pings = (await g.records()).filter((record) => record.toolName === 'ping_tool').map(shape)
      expect(pings.filter((record) => record.type === 'call-started')).toHaveLength(4)
      expect(pings.filter((record) => record.type === 'result')).toHaveLength(4)
      expect(g.ran).toEqual(['ping 1', 'ping 1', 'ping 2', 'ping 2'])
    })

    it('a call’s answer leaves only once its result record is acknowledged by the store', async () => {
      for (const side of ['sdk', 'fast'] as const) {
        g.gate.hold = 'result'
        let arrived = false
        const answered = g.answer(side, call('ping_tool', { n: 3 })).finally(() => {
          arrived = true
        })
        try {
          await until(() => g.gate.held.length > 0, 'the result record’s append')
          // The tool ran and its result waits in the journal's append: the answer waits with it.
          expect(g.ran.at(-1)).toBe('ping 3')
          expect(arrived).toBe(false)
        } finally {
          g.gate.hold = undefined
          for (const held of g.gate.held.splice(0)) held.release()
        }
        const got = await answered
        expect(got.message.result).toMatchObject({ content: [{ type: 'text', text: 'pong' }] })
        // When the answer arrived, its call's result was already in the store.
        const last = results(got.recorded, 'ping_tool').at(-1)
        expect(last).toMatchObject({ type: 'result', toolName: 'ping_tool' })
        expect(results(await g.records(), 'ping_tool').map((record) => record.callId)).toContain(last?.callId)
      }
    })

    it('a result whose record the store refused is withheld alike: RESULT_NOT_RECORDED', async () => {
      g.gate.fail = 'result'
      try {
        const before = g.built.fast
        const sdk = await g.answer('sdk', call('ping_tool', { n: 4 }))
        const fast = await g.answer('fast', call('ping_tool', { n: 4 }))
        expect(fast.status).toBe(sdk.status)
        expect(fast.message).toEqual(sdk.message)
        expect(fast.message).toMatchObject({
          id: 7,
          error: { code: RESULT_NOT_RECORDED, data: { reason: 'RESULT_NOT_RECORDED' } },
        })
        expect(g.built.fast).toBe(before)
      } finally {
        g.gate.fail = undefined
      }
      // The store takes records again: the next call answers.
      const after = await g.answer('fast', call('ping_tool', { n: 5 }))
      expect(after.message.result).toMatchObject({ content: [{ text: 'pong' }] })
    })

    it('an approval on the fast path (R-EXEC-4): input required, the retry runs the call once, a replay runs nothing', async () => {
      const before = g.built.fast
      const flows: Record<'sdk' | 'fast', unknown[]> = { sdk: [], fast: [] }
      for (const side of ['sdk', 'fast'] as const) {
        const env = `prod-${side}`
        const asked = await g.answer(side, call('guarded', { env }))
        expect(asked.message.result).toMatchObject({ resultType: 'input_required' })
        const state = asked.message.result?.requestState
        expect(typeof state).toBe('string')
        const retry = request('tools/call', {
          name: 'guarded',
          arguments: { env },
          requestState: state,
          inputResponses: { 'toolgate/approval': { action: 'accept', content: { approve: true } } },
        })
        expect(fastRequest({ method: 'POST', headers: retry.headers }, retry.body)).toBeDefined()
        const done = await g.answer(side, retry)
        expect(done.message.result).toMatchObject({ content: [{ type: 'text', text: `deployed to ${env}` }] })
        // Its result was in the store when the answer came.
        expect(results(done.recorded, 'guarded').length).toBeGreaterThan(0)
        const replay = await g.answer(side, retry)
        expect(replay.message.error?.code).toBe(JsonRpcCode.InvalidParams)
        expect(g.ran.filter((line) => line === `guarded ${env}`)).toHaveLength(1)
        for (const answer of [asked, done, replay]) {
          const { requestState: _, ...result } = answer.message.result ?? {}
          // The two flows differ only in their argument (named after the leg).
          const seen = JSON.stringify({ status: answer.status, result, error: answer.message.error })
          flows[side].push(JSON.parse(seen.replaceAll(env, 'prod')))
        }
      }
      expect(flows.fast).toEqual(flows.sdk)
      expect(g.built.fast).toBe(before)
      // Both legs journaled the same rounds (the SDK's flow first, then the fast path's).
      const guarded = (await g.records()).filter((record) => record.toolName === 'guarded').map(shape)
      expect(guarded.slice(guarded.length / 2)).toEqual(guarded.slice(0, guarded.length / 2))
    })
  },
)

describe('a kept program’s rounds on the fast path under PostgreSQL (issue 35, Performance; R-CODE-2)', {
  timeout: 240_000,
}, () => {
  const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/marker-upstream.mjs')
  const CODE = [
    'const a = await tools.step({ n: 1 })',
    'const b = await tools.guarded({ n: 2 })',
    'const c = await tools.step({ n: 3 })',
    'return { a, b, c }',
  ].join('\n')
  let g: Awaited<ReturnType<typeof gatewayOver>>
  let marker: string
  const keyFile = process.env.TOOLGATE_STATE_KEY_FILE
  beforeAll(async () => {
    g = await gatewayOver(
      async (dir) => {
        // The store keeps programs only with a state key (read as shareStore starts).
        process.env.TOOLGATE_STATE_KEY_FILE = path.join(dir, 'state.key')
        writeFileSync(process.env.TOOLGATE_STATE_KEY_FILE, 'fast-path-store-test-state-key-0123456789')
        return stores[1][1](dir)
      },
      (dir) => {
        marker = path.join(dir, 'marker')
        writeFileSync(marker, '')
        return {
          mode: 'code',
          servers: { m: { command: process.execPath, args: [UPSTREAM, marker], prefix: '' } },
          policy: { ask: ['guarded'] },
        }
      },
      false,
    )
  }, 180_000)
  afterAll(async () => {
    if (keyFile === undefined) delete process.env.TOOLGATE_STATE_KEY_FILE
    else process.env.TOOLGATE_STATE_KEY_FILE = keyFile
    await g?.close()
  })

  it('the program pauses on its ask and its retry resumes it, both answered on the fast path; each step runs once', async () => {
    const before = g.built.fast
    const first = call('run_code', { code: CODE, description: 'a, b, c' })
    expect(fastRequest({ method: 'POST', headers: first.headers }, first.body)).toBeDefined()
    const asked = await g.answer('fast', first)
    expect(asked.message.result, JSON.stringify(asked.message)).toMatchObject({ resultType: 'input_required' })
    expect(readFileSync(marker, 'utf8')).toBe('step:1\n')
    const retry = request('tools/call', {
      name: 'run_code',
      arguments: { code: CODE, description: 'a, b, c' },
      requestState: asked.message.result?.requestState,
      inputResponses: { 'toolgate/approval': { action: 'accept', content: { approve: true } } },
    })
    expect(fastRequest({ method: 'POST', headers: retry.headers }, retry.body)).toBeDefined()
    const done = await g.answer('fast', retry)
    expect(done.message.result?.isError, JSON.stringify(done.message)).not.toBe(true)
    expect(JSON.stringify(done.message.result)).toContain('guarded 2 done')
    expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean)).toEqual(['step:1', 'guarded:2', 'step:3'])
    // Neither round built a per-request server: both took the fast path.
    expect(g.built.fast).toBe(before)
    // When the retry's answer came, the program's own result was in the store.
    expect(results(done.recorded, 'run_code').length).toBeGreaterThan(0)
    const replay = await g.answer('fast', retry)
    expect(replay.message.error?.code).toBe(JsonRpcCode.InvalidParams)
    expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean)).toHaveLength(3)
  })
})
