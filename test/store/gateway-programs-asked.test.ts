// Issue 40, item 2 (R-EXEC-4, R-CODE-2): the gateway's policy asks about `run_code` itself as well
// as about a sub-call inside the program. The built `serve --http --store` (PostgreSQL, a state key,
// so the program keeper is on) with `policy.ask: ['run_code', 'guarded']`, a program A, B (guarded),
// C against a marker upstream:
// - a 2026-07-28 client: run_code's own approval is one input-required round; its approved retry
//   runs the program kept, so B's ask is a round of its own (a sealed state naming the kept turn),
//   not a denial; the retry answering B resumes the program without asking about run_code again.
//   A, B and C run once each. A declined run_code runs nothing and keeps nothing.
// - a 2025-11-25 client that declares elicitation: run_code, then B, each an elicitation of its own.
// - a 2025-11-25 client that does not: run_code's own ask is denied (nobody can be asked), nothing
//   runs and nothing is kept.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { spawnServe, tempDir, textOf as textOfResult } from '../cli/helpers.js'
import { APPROVAL_KEY, type ModernReply, rawModernCall } from '../cli/raw-modern-call.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { keptOf, type ProgramFiles, programFiles } from './program-gateways.js'
import { until } from './until.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const accept = { action: 'accept', content: { approve: true } }

let pg: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
let files: ProgramFiles
let endpoint: string
let store: Store
const children: ChildProcess[] = []
let said = ''

beforeAll(async () => {
  pg = await startPgServer()
  work = await tempDir()
  files = await programFiles(pg, work.dir, {
    database: 'programs_asked',
    key: 'programs-asked-test-state-key-0123456789',
    config: {
      auth: { tokens: [{ sha256: sha256('alice-token'), subject: 'alice' }] },
      policy: { ask: ['run_code', 'guarded'] },
    },
  })
  const { url, keyFile, config } = files
  const served = await spawnServe(['--http', '0', '--config', config, '--store', url], {
    env: { TOOLGATE_STATE_KEY_FILE: keyFile },
    children,
    onStderr: (text) => {
      said += text
    },
  })
  endpoint = served.url
  store = await createPostgresStore({ connectionString: url, migrate: false })
}, 120_000)

afterAll(async () => {
  await store?.close()
  await stopChildren(children)
  pg?.destroy()
  await work?.cleanup()
})

const ran = () => files.ran()
/** A program A, B (guarded), C whose steps are numbered from `n`. */
const program = (n: number, description: string) => ({
  code: [
    `const a = await tools.step({ n: ${n} })`,
    `const b = await tools.guarded({ n: ${n + 1} })`,
    `const c = await tools.step({ n: ${n + 2} })`,
    'return { a, b, c }',
  ].join('\n'),
  description,
})

type Reply = ModernReply
const call = (args: Record<string, unknown>, retry?: { state: string; answer: unknown }, name?: string) =>
  rawModernCall<Reply>(
    endpoint,
    'alice-token',
    'run_code',
    args,
    retry,
    name === undefined ? undefined : { 'toolgate/program': name },
  )
const textOf = (reply: Reply) => JSON.stringify(reply.result?.structuredContent ?? reply.result?.content ?? reply)
/** What an input-required round asks, by input key: the question's first line. */
const questions = (reply: Reply) =>
  Object.fromEntries(
    Object.entries(reply.result?.inputRequests ?? {}).map(([key, request]) => [
      key,
      String(request.params?.message).split('\n')[0],
    ]),
  )
/** How each ask about `tool` was answered, in the journal's order: `source:kind`. */
async function answers(tool: string): Promise<string[]> {
  const out: string[] = []
  for await (const { record } of store.read())
    if (record.type === 'approval-answered' && record.toolName === tool)
      out.push(`${record.source}:${(record as unknown as { outcome: { kind: string } }).outcome.kind}`)
  return out
}

describe('run_code asked about, then its sub-call (issue 40, item 2)', { timeout: 240_000 }, () => {
  it('2026-07-28: run_code is asked, then B in a round of its own (kept), then the program ends; each ran once', async () => {
    const args = program(1, 'asked twice')
    const before = ran().length
    const first = await call(args)
    expect(first.result?.resultType, JSON.stringify(first) + said.slice(-2000)).toBe('input_required')
    expect(questions(first)).toEqual({ [APPROVAL_KEY]: 'Allow the call to run_code?' })
    expect(keptOf(first.result?.requestState)).toBeUndefined()
    expect(ran().length).toBe(before)

    // run_code approved: the program runs kept, and B's ask is the next round, not a denial.
    const second = await call(args, { state: first.result?.requestState as string, answer: accept })
    expect(second.result?.resultType, JSON.stringify(second) + said.slice(-3000)).toBe('input_required')
    expect(questions(second)).toEqual({ [APPROVAL_KEY]: 'Allow the call to guarded?' })
    const kept = keptOf(second.result?.requestState)
    expect(kept?.turn).toMatch(/^gateway-program:/)
    expect(kept?.calls).toHaveLength(1)
    expect(ran().slice(before)).toEqual(['step:1'])
    expect((await store.pendingCalls()).map((c) => c.toolName)).toEqual(['guarded'])

    // B approved: the program resumes from its log, run_code is not asked again, and it ends.
    const third = await call(args, { state: second.result?.requestState as string, answer: accept })
    expect(third.error, said.slice(-3000)).toBeUndefined()
    expect(third.result?.resultType ?? 'complete', textOf(third)).toBe('complete')
    expect(third.result?.isError, textOf(third)).not.toBe(true)
    for (const part of ['step 1 done', 'guarded 2 done', 'step 3 done']) expect(textOf(third)).toContain(part)
    expect(ran().slice(before)).toEqual(['step:1', 'guarded:2', 'step:3'])
    expect((await store.loadTurn(kept?.turn as string))?.closed).toBe(true)
    expect(await store.pendingCalls()).toEqual([])
    // The journal: run_code's ask was put to the client once (the round that asked it) and allowed
    // once by the client; the resume answered it with that sealed decision, asking nobody.
    const expected = ['service:cancelled', 'service:allowed-once', 'decision:allowed-once']
    await until(
      async () => ((await answers('run_code')).length >= expected.length ? true : undefined),
      "run_code's answers in the journal",
      { timeoutMs: 30_000 },
    )
    expect(await answers('run_code')).toEqual(expected)
    expect(await answers('guarded')).toEqual(['service:suspended', 'decision:allowed-once'])
  })

  it('2026-07-28: a declined B still rejects inside the program after run_code was approved; C runs', async () => {
    const args = {
      code: [
        'const a = await tools.step({ n: 11 })',
        'let b',
        'try { b = await tools.guarded({ n: 12 }) } catch (error) { b = "refused: " + error.message }',
        'const c = await tools.step({ n: 13 })',
        'return { a, b, c }',
      ].join('\n'),
      description: 'b declined',
    }
    const before = ran().length
    const first = await call(args)
    const second = await call(args, { state: first.result?.requestState as string, answer: accept })
    expect(questions(second)).toEqual({ [APPROVAL_KEY]: 'Allow the call to guarded?' })
    const third = await call(args, { state: second.result?.requestState as string, answer: { action: 'decline' } })
    expect(third.error, said.slice(-3000)).toBeUndefined()
    expect(third.result?.isError).not.toBe(true)
    expect(textOf(third)).toMatch(/refused: .*declined/)
    expect(ran().slice(before)).toEqual(['step:11', 'step:13'])
  })

  it('2026-07-28: B approved in the store (as the viewer does) instead: the resume does not ask about run_code either', async () => {
    const args = program(51, 'viewer')
    const before = ran().length
    const first = await call(args)
    const second = await call(args, { state: first.result?.requestState as string, answer: accept })
    const kept = keptOf(second.result?.requestState)!
    expect(await store.decide(kept.turn, kept.calls[0], { kind: 'allowed-once', decidedBy: 'operator' })).toEqual({
      applied: true,
    })
    const turn = await until(
      async () => {
        const loaded = await store.loadTurn(kept.turn)
        return loaded?.closed ? loaded : undefined
      },
      'the resumed program to end',
      { timeoutMs: 90_000, context: () => said.slice(-3000) },
    )
    const result = (turn.state as { result?: { isError?: boolean } }).result
    expect(result?.isError, JSON.stringify(result)).toBe(false)
    expect(JSON.stringify(result)).toContain('step 53 done')
    expect(ran().slice(before)).toEqual(['step:51', 'guarded:52', 'step:53'])
  })

  it('2026-07-28: a declined run_code runs nothing and keeps nothing', async () => {
    const args = program(21, 'declined')
    const before = ran().length
    const first = await call(args)
    const declined = await call(args, { state: first.result?.requestState as string, answer: { action: 'decline' } })
    expect(declined.result?.isError).toBe(true)
    expect(textOf(declined)).toMatch(/declined/)
    expect(ran().length).toBe(before)
    expect(await store.pendingCalls()).toEqual([])
  })

  it('2026-07-28, a named program: the approved retry runs it (once), B is a kept round, and the name keeps its result', async () => {
    const args = program(61, 'named')
    const before = ran().length
    const first = await call(args, undefined, 'asked-named-1')
    expect(questions(first), JSON.stringify(first) + said.slice(-2000)).toEqual({
      [APPROVAL_KEY]: 'Allow the call to run_code?',
    })
    expect(ran().length).toBe(before)
    // The answer's retry names the program too: it runs now, instead of getting the first round's cancellation.
    const second = await call(args, { state: first.result?.requestState as string, answer: accept }, 'asked-named-1')
    expect(questions(second), JSON.stringify(second) + said.slice(-3000)).toEqual({
      [APPROVAL_KEY]: 'Allow the call to guarded?',
    })
    expect(ran().slice(before)).toEqual(['step:61'])
    const third = await call(args, { state: second.result?.requestState as string, answer: accept }, 'asked-named-1')
    expect(third.result?.isError, textOf(third) + said.slice(-3000)).not.toBe(true)
    for (const part of ['step 61 done', 'guarded 62 done', 'step 63 done']) expect(textOf(third)).toContain(part)
    expect(ran().slice(before)).toEqual(['step:61', 'guarded:62', 'step:63'])
    // A later call with the name gets that run's result; nothing runs again.
    const again = await call(args, undefined, 'asked-named-1')
    expect(again.result?.resultType ?? 'complete', textOf(again)).toBe('complete')
    expect(textOf(again)).toContain('step 63 done')
    expect(ran().slice(before)).toEqual(['step:61', 'guarded:62', 'step:63'])
  })

  it('2026-07-28, a named program with no other ask: the approved retry returns its result; it ran once', async () => {
    const args = { code: 'return await tools.step({ n: 71 })', description: 'named, one step' }
    const before = ran().length
    const first = await call(args, undefined, 'asked-named-2')
    expect(questions(first)).toEqual({ [APPROVAL_KEY]: 'Allow the call to run_code?' })
    const second = await call(args, { state: first.result?.requestState as string, answer: accept }, 'asked-named-2')
    expect(second.result?.resultType ?? 'complete', textOf(second) + said.slice(-3000)).toBe('complete')
    expect(second.result?.isError, textOf(second)).not.toBe(true)
    expect(textOf(second)).toContain('step 71 done')
    expect(ran().slice(before)).toEqual(['step:71'])
  })

  it('2026-07-28, a named program declined: the retry gets the denial, and nothing ran or waits', async () => {
    const args = program(81, 'named, declined')
    const before = ran().length
    const first = await call(args, undefined, 'asked-named-3')
    const declined = await call(
      args,
      { state: first.result?.requestState as string, answer: { action: 'decline' } },
      'asked-named-3',
    )
    expect(declined.result?.isError, textOf(declined)).toBe(true)
    expect(textOf(declined)).toMatch(/declined/)
    expect(textOf(declined)).not.toMatch(/input-required result/)
    expect(ran().length).toBe(before)
    expect(await store.pendingCalls()).toEqual([])
  })

  it('2025-11-25 with elicitation: run_code, then B, each asked once; A, B and C ran once', async () => {
    const asked: string[] = []
    const client = new Client({ name: 'legacy', version: '1' }, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message.split('\n')[0])
      return accept
    })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint), {
        requestInit: { headers: { authorization: 'Bearer alice-token' } },
      }),
    )
    const before = ran().length
    try {
      const result = await client.callTool({ name: 'run_code', arguments: program(31, 'legacy') })
      expect(result.isError, textOfResult(result) + said.slice(-3000)).not.toBe(true)
      for (const part of ['step 31 done', 'guarded 32 done', 'step 33 done'])
        expect(textOfResult(result)).toContain(part)
    } finally {
      await client.close()
    }
    expect(asked).toEqual(['Allow the call to run_code?', 'Allow the call to guarded?'])
    expect(ran().slice(before)).toEqual(['step:31', 'guarded:32', 'step:33'])
    expect(await store.pendingCalls()).toEqual([])
  })

  it('2025-11-25 without elicitation: run_code itself cannot be asked, so it is denied; nothing runs or waits', async () => {
    const client = new Client({ name: 'legacy', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint), {
        requestInit: { headers: { authorization: 'Bearer alice-token' } },
      }),
    )
    const before = ran().length
    try {
      const result = await client.callTool({ name: 'run_code', arguments: program(41, 'nobody asks') })
      expect(result.isError).toBe(true)
      expect(textOfResult(result)).toMatch(/cannot be asked/)
      expect(textOfResult(result)).not.toMatch(/APPROVAL_SUSPENDED|waits/)
    } finally {
      await client.close()
    }
    expect(ran().length).toBe(before)
    expect(await store.pendingCalls()).toEqual([])
  })
})
