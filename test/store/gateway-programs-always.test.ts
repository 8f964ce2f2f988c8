// Issue 40, item 2 and issue 26 (R-EXEC-4, R-CODE-2): "allow always" given to a sub-call of a
// program kept for an MCP 2026-07-28 client. The built `serve --http --store` (PostgreSQL, a state
// key) with `policy.ask: ['guarded']` and two callers, alice and bob. A standing approval belongs to
// the scope (identity) that gave it and the tool it was given for (docs/decisions.md, "Always in
// the viewer"; test/store/standing-identity.test.ts): so alice's `always` on guarded, answered in a
// kept round, answers her later identical calls without a round, in the same program and in a later
// program, and is kept in the store; bob's same call is still asked.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { spawnServe, tempDir } from '../cli/helpers.js'
import { APPROVAL_KEY, type ModernReply, rawModernCall } from '../cli/raw-modern-call.js'
import { stopChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'
import { keptOf, type ProgramFiles, programFiles } from './program-gateways.js'
import { until } from './until.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const always = { action: 'accept', content: { approve: true, always: true } }

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
    database: 'programs_always',
    key: 'programs-always-test-state-key-0123456789',
    config: {
      auth: {
        tokens: [
          { sha256: sha256('alice-token'), subject: 'alice' },
          { sha256: sha256('bob-token'), subject: 'bob' },
        ],
      },
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

type Reply = ModernReply
const call = (token: string, args: Record<string, unknown>, retry?: { state: string; answer: unknown }) =>
  rawModernCall<Reply>(endpoint, token, 'run_code', args, retry)
const textOf = (reply: Reply) => JSON.stringify(reply.result?.structuredContent ?? reply.result?.content ?? reply)
const question = (reply: Reply) => String(reply.result?.inputRequests?.[APPROVAL_KEY]?.params?.message).split('\n')[0]
/** How each ask about guarded was answered, in the journal's order, by caller: `subject source:kind`. */
async function answers(): Promise<string[]> {
  const out: string[] = []
  for await (const { record } of store.read())
    if (record.type === 'approval-answered' && record.toolName === 'guarded') {
      const { outcome, source } = record as unknown as { outcome: { kind: string }; source: string }
      out.push(`${record.identity?.subject} ${source}:${outcome.kind}`)
    }
  return out
}

describe('allow always on a kept 2026-07-28 program (issue 40, item 2; issue 26)', { timeout: 240_000 }, () => {
  it("alice's always holds for her later identical calls, in the program and in her next one; bob is still asked", async () => {
    // Two identical guarded calls one after the other, then a step.
    const twice = {
      code: [
        'const first = await tools.guarded({ n: 1 })',
        'const second = await tools.guarded({ n: 1 })',
        'const c = await tools.step({ n: 2 })',
        'return { first, second, c }',
      ].join('\n'),
      description: 'guarded twice',
    }
    const first = await call('alice-token', twice)
    expect(first.result?.resultType, JSON.stringify(first) + said.slice(-2000)).toBe('input_required')
    expect(question(first)).toBe('Allow the call to guarded?')
    expect(keptOf(first.result?.requestState)?.turn).toMatch(/^gateway-program:/)
    expect(ran()).toEqual([])

    // Allowed always: the program resumes and ends; its second identical call is not asked.
    const done = await call('alice-token', twice, { state: first.result?.requestState as string, answer: always })
    expect(done.error, said.slice(-3000)).toBeUndefined()
    expect(done.result?.resultType ?? 'complete', textOf(done)).toBe('complete')
    expect(done.result?.isError, textOf(done)).not.toBe(true)
    expect(ran()).toEqual(['guarded:1', 'guarded:1', 'step:2'])
    // The rule is in the store, for alice's scope only.
    const rules = await store.standingApprovals()
    expect(rules.map((rule) => [rule.toolName, rule.kind])).toEqual([['guarded', 'allowed-always']])

    // A later program of alice's: the same call runs without a round.
    const later = { code: 'return await tools.guarded({ n: 1 })', description: 'guarded later' }
    const again = await call('alice-token', later)
    expect(again.error, said.slice(-3000)).toBeUndefined()
    expect(again.result?.resultType ?? 'complete', JSON.stringify(again)).toBe('complete')
    expect(again.result?.isError, textOf(again)).not.toBe(true)
    expect(textOf(again)).toContain('guarded 1 done')
    expect(ran()).toEqual(['guarded:1', 'guarded:1', 'step:2', 'guarded:1'])
    expect(await store.pendingCalls()).toEqual([])

    // Bob's same program: still asked, and nothing ran for him.
    const bob = await call('bob-token', later)
    expect(bob.result?.resultType, JSON.stringify(bob)).toBe('input_required')
    expect(question(bob)).toBe('Allow the call to guarded?')
    expect(ran()).toEqual(['guarded:1', 'guarded:1', 'step:2', 'guarded:1'])
    // Bob declines: his program ends with the refusal; alice's rule is untouched.
    const declined = await call('bob-token', later, {
      state: bob.result?.requestState as string,
      answer: { action: 'decline' },
    })
    expect(declined.error, said.slice(-3000)).toBeUndefined()
    expect(textOf(declined)).toMatch(/declined/)
    expect(ran()).toEqual(['guarded:1', 'guarded:1', 'step:2', 'guarded:1'])
    expect(await store.standingApprovals()).toEqual(rules)
    // The journal: alice was asked once; the rule, not a person, answered her later calls.
    const expected = [
      'alice service:suspended',
      'alice decision:allowed-always',
      'alice standing:allowed-always',
      'alice standing:allowed-always',
      'bob service:suspended',
      'bob decision:denied',
    ]
    await until(async () => ((await answers()).length >= expected.length ? true : undefined), 'the answers journaled', {
      timeoutMs: 30_000,
    })
    expect(await answers()).toEqual(expected)
  })
})
