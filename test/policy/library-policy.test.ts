// One policy document in the library: createToolRuntime({ policy }), tools.setPolicy, agent
// identities, Code Mode sub-calls, quotas and explain (issue 38, items 1-3 and 5).
import { afterEach, describe, expect, it } from 'vitest'
import {
  ConfigError,
  createAgent,
  createToolRuntime,
  Journal,
  type PolicyInput,
  type ToolRuntimeHandle,
} from '../../src/index.js'
import { compilePolicy } from '../../src/policy/index.js'
import { rawTool, signal } from '../runtime/helpers.js'
import { GUIDE_POLICY } from './guide-examples.js'

let runtime: ToolRuntimeHandle | undefined
afterEach(async () => {
  await runtime?.dispose()
  runtime = undefined
})

const NAMES = ['write_file', 'read_file', 'transfer', 'github__create_issue', 'github__search', 'bash', 'fetch']

async function start(options: Parameters<typeof createToolRuntime>[0] = {}) {
  const asked: string[] = []
  runtime = await createToolRuntime({
    mode: 'both',
    policy: GUIDE_POLICY as unknown as PolicyInput,
    approval: async (request) => {
      asked.push(`${request.toolName}: ${request.reason ?? ''}`)
      return { kind: 'denied', reason: 'the test says no' }
    },
    ...options,
  })
  for (const name of NAMES) runtime.tools.register(rawTool(name))
  return { ...runtime, asked }
}

let ids = 0
function call(tools: ToolRuntimeHandle['tools'], name: string, args: unknown, extra: Record<string, unknown> = {}) {
  return tools.execute({ callId: `c${++ids}`, name, arguments: args, signal: signal(), ...extra })
}

describe('the guide examples through the library', () => {
  it('denies write_file under .github/ with the rule reason, allows it elsewhere', async () => {
    const { tools } = await start()
    const denied = await call(tools, 'write_file', { path: '.github/workflows/ci.yml', content: 'x' })
    expect(denied.isError).toBe(true)
    expect(denied.error?.info?.code).toBe('TOOL_DENIED')
    expect(denied.error?.message).toContain('files under .github/ are not written by agents')
    const nested = await call(tools, 'write_file', { path: 'sub/.github/x', content: 'x' })
    expect(nested.error?.info?.code).toBe('TOOL_DENIED')
    expect((await call(tools, 'write_file', { path: 'src/a.ts', content: 'x' })).isError).toBe(false)
  })

  it('asks before a transfer over 100 and not at 100', async () => {
    const { tools, asked } = await start()
    expect((await call(tools, 'transfer', { amount: 100 })).isError).toBe(false)
    expect(asked).toEqual([])
    const big = await call(tools, 'transfer', { amount: 250.5 })
    expect(big.isError).toBe(true)
    expect(asked).toEqual(['transfer: the policy asks before "transfer" (large-transfers)'])
  })

  it('holds a per-subject quota and says when the next call is allowed', async () => {
    const { ctx, tools } = await start({
      policy: {
        rules: [{ id: 'q', tools: ['github__create_issue'], quota: { calls: 2, per: 'hour', by: 'subject' } }],
      },
    })
    const alice = createAgent(ctx, { id: 'a1', identity: { subject: 'alice' } })
    const alice2 = createAgent(ctx, { id: 'a2', identity: { subject: 'alice', groups: ['other'] } })
    const bob = createAgent(ctx, { id: 'b', identity: { subject: 'bob' } })
    const args = { repo: 'acme/web', title: 't' }
    expect((await call(tools, 'github__create_issue', args, { agent: alice })).isError).toBe(false)
    expect((await call(tools, 'github__create_issue', args, { agent: alice2 })).isError).toBe(false)
    const over = await call(tools, 'github__create_issue', args, { agent: alice })
    expect(over.error?.info?.code).toBe('QUOTA_EXCEEDED')
    expect(over.error?.info?.rule).toBe('q')
    const retry = over.error?.info?.retryAfterMs as number
    expect(retry).toBeGreaterThan(0)
    expect(retry).toBeLessThanOrEqual(3_600_000)
    expect(over.error?.message).toMatch(/next call is allowed in \d+ s/)
    // another person has a count of their own; other tools are not counted
    expect((await call(tools, 'github__create_issue', args, { agent: bob })).isError).toBe(false)
    expect((await call(tools, 'github__search', { q: 'x' }, { agent: alice })).isError).toBe(false)
    const explained = await tools.explain({ name: 'github__create_issue', arguments: args, agent: alice })
    expect(explained.decision).toBe('quota')
    expect(explained.rule?.label).toBe('q')
  })

  it('denies bash after fetch in the same turn (a Code Mode program), not in another', async () => {
    const { tools } = await start()
    const program = await call(tools, 'run_code', {
      code: 'await tools.fetch({ url: "x" }); try { await tools.bash({ command: "ls" }); return "ran" } catch (e) { return String(e.message) }',
      description: 'fetch then bash',
    })
    expect(program.isError).toBe(false)
    expect(JSON.stringify(program.value)).toContain('no-bash-after-fetch')
    // a turn the host names: the same rootCallId across direct calls
    expect((await call(tools, 'fetch', {}, { rootCallId: 'turn-1' })).isError).toBe(false)
    expect((await call(tools, 'bash', {}, { rootCallId: 'turn-1' })).error?.info?.code).toBe('TOOL_DENIED')
    expect((await call(tools, 'bash', {}, { rootCallId: 'turn-2' })).isError).toBe(false)
  })

  it('lets only acme/ repositories through', async () => {
    const { tools } = await start()
    expect((await call(tools, 'github__create_issue', { repo: 'acme/web' })).isError).toBe(false)
    const other = await call(tools, 'github__create_issue', { repo: 'evil/web' })
    expect(other.error?.info?.code).toBe('TOOL_DENIED')
    expect(other.error?.message).toContain('acme-repos-only')
    expect((await call(tools, 'github__create_issue', { repo: 'acme/web/../../evil' })).error?.info?.code).toBe(
      'TOOL_DENIED',
    )
  })
})

describe('identity, Code Mode and setPolicy', () => {
  it('decides Code Mode sub-calls like direct calls, with call.parentTool and depth', async () => {
    const { ctx, tools } = await start({
      policy: {
        rules: [
          { who: { group: 'dev' }, allow: ['read_file', 'fetch'] },
          { id: 'no-fetch-from-code', deny: ['fetch'], when: "call.parentTool == 'run_code' && call.depth == 1" },
        ],
      },
    })
    const dev = createAgent(ctx, { id: 'dev', identity: { subject: 'd', groups: ['dev'] } })
    expect((await call(tools, 'fetch', {}, { agent: dev })).isError).toBe(false)
    const program = await call(
      tools,
      'run_code',
      {
        code: 'const out = []; for (const f of [() => tools.read_file({}), () => tools.fetch({})]) { try { await f(); out.push("ok") } catch (e) { out.push(e.message) } } return out',
        description: 'two calls',
      },
      { agent: dev },
    )
    const [read, fetched] = (program.value as { result: string[] }).result
    expect(read).toBe('ok')
    expect(fetched).toContain('no-fetch-from-code')
    // the identity's grants hold for sub-calls too: bash is granted to no one
    const outsider = createAgent(ctx, { id: 'o', identity: { subject: 'o', groups: ['ops'] } })
    // hidden from its listing, as the gateway hides it: not found by name
    expect((await call(tools, 'read_file', {}, { agent: outsider })).error?.info?.code).toBe('UNKNOWN_TOOL')
    expect((await tools.explain({ name: 'read_file', agent: outsider })).reason).toContain('has no rule for "o"')
  })

  it('setPolicy per agent replaces and removes; an invalid document changes nothing', async () => {
    runtime = await createToolRuntime()
    const { ctx, tools } = runtime
    tools.register(rawTool('bash'))
    const agent = createAgent(ctx, { id: 'x' })
    tools.setPolicy({ deny: ['bash'] }, agent)
    expect((await call(tools, 'bash', {}, { agent })).error?.info?.code).toBe('UNKNOWN_TOOL')
    expect((await call(tools, 'bash', {})).isError).toBe(false)
    const bad = (() => {
      try {
        tools.setPolicy({ rules: [{ deny: ['bash'], when: 'args.x >' }] } as never, agent)
      } catch (error) {
        return error
      }
    })()
    expect(bad).toBeInstanceOf(ConfigError)
    expect((bad as ConfigError).path).toBe('tools.setPolicy(policy)')
    expect((bad as ConfigError).issues[0]).toMatch(/^policy\.rules\[0\]\.when: column \d+: /)
    expect((await call(tools, 'bash', {}, { agent })).error?.info?.code).toBe('UNKNOWN_TOOL')
    tools.setPolicy(null, agent)
    expect((await call(tools, 'bash', {}, { agent })).isError).toBe(false)
  })

  it('a journal records the deciding rule and the policy digest (issue 38, item 4)', async () => {
    const { mkdtemp, readFile, rm } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = await mkdtemp(join(tmpdir(), 'policy-journal-'))
    try {
      const { ctx, tools } = await start()
      const file = join(dir, 'audit.jsonl')
      await ctx.plugin(Journal, {
        path: file,
        policyOf: (exec) => {
          const decision = tools.policyDecision(exec)
          return decision && { decision: decision.decision, rule: decision.rule?.label, digest: decision.policy }
        },
      })
      await call(tools, 'write_file', { path: '.github/x', content: 'x' })
      await call(tools, 'read_file', { path: 'a' })
      const results = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .filter((record) => record.type === 'result')
      const digest = (await tools.explain({ name: 'read_file' })).policy
      expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(results.map((record) => record.policy)).toEqual([
        { decision: 'deny', rule: 'no-workflow-writes', digest },
        { decision: 'allow', digest },
      ])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('createAgent checks the identity', () => {
    return createToolRuntime().then(async (handle) => {
      runtime = handle
      expect(() => createAgent(handle.ctx, { id: 'a', identity: { subject: '' } })).toThrow(
        /createAgent\(ctx, options\)\.identity\.subject/,
      )
      expect(() => createAgent(handle.ctx, { id: 'a', identity: { subject: 's', groups: 'g' as never } })).toThrow(
        /identity\.groups: expected an array of strings/,
      )
    })
  })
})

// Only calls that were allowed to run count against a quota (issue 38, item 3): an ask that is
// denied and a guard refuse before the count, and a quota used up gives back the call's earlier ones.
describe('what counts against a quota', () => {
  it('a denied ask and a guard refusal do not count', async () => {
    const { tools, asked } = await start({
      policy: {
        rules: [
          { id: 'q', tools: ['transfer'], quota: { calls: 1, per: 'hour', by: 'global' } },
          { id: 'big', ask: ['transfer'], when: 'args.amount > 100' },
        ],
      },
    })
    tools.guard((exec) => ((exec.arguments as { block?: boolean }).block ? 'blocked by the guard' : undefined))
    expect((await call(tools, 'transfer', { amount: 500 })).error?.message).toContain('the test says no')
    expect(asked).toHaveLength(1)
    expect((await call(tools, 'transfer', { amount: 5, block: true })).error?.info?.code).toBe('TOOL_DENIED')
    expect((await call(tools, 'transfer', { amount: 5 })).isError).toBe(false)
    expect((await call(tools, 'transfer', { amount: 5 })).error?.info?.code).toBe('QUOTA_EXCEEDED')
  })

  it('a call refused by its second quota gives back its first', async () => {
    const { ctx, tools } = await start({
      policy: {
        rules: [
          { id: 'all', tools: ['fetch'], quota: { calls: 2, per: 'hour', by: 'global' } },
          { id: 'each', tools: ['fetch'], quota: { calls: 1, per: 'hour', by: 'subject' } },
        ],
      },
    })
    const alice = createAgent(ctx, { id: 'a', identity: { subject: 'alice' } })
    const bob = createAgent(ctx, { id: 'b', identity: { subject: 'bob' } })
    expect((await call(tools, 'fetch', {}, { agent: alice })).isError).toBe(false)
    const again = await call(tools, 'fetch', {}, { agent: alice })
    expect(again.error?.info?.code).toBe('QUOTA_EXCEEDED')
    expect(again.error?.info?.rule).toBe('each')
    // alice's refused call did not take the global count's second call
    expect((await call(tools, 'fetch', {}, { agent: bob })).isError).toBe(false)
    const full = await call(
      tools,
      'fetch',
      {},
      { agent: createAgent(ctx, { id: 'c', identity: { subject: 'carol' } }) },
    )
    expect(full.error?.info?.rule).toBe('all')
  })
})

// The library's listing hides what an identity may never call, as the gateway's tools/list does
// (issue 38, item 1); a rule with `when` needs a call to decide, so its tool stays listed.
describe('the listing of an agent under a policy', () => {
  it('hides per identity what no call of it may run, and shows it again when the policy goes', async () => {
    runtime = await createToolRuntime({
      policy: {
        deny: ['read_file'],
        rules: [
          { who: { group: 'dev' }, allow: ['*'], deny: ['github__*'] },
          { who: { subject: 'ops' }, allow: ['bash', 'fetch', 'transfer'] },
          { id: 'everyone', deny: ['transfer'] },
          { id: 'cond', deny: ['write_file'], when: "args.path.startsWith('.github/')" },
        ],
      },
    })
    const { ctx, tools } = runtime
    for (const name of NAMES) tools.register(rawTool(name))
    const names = (agent?: ReturnType<typeof createAgent>) => [...tools.host.visibleTools(agent).keys()].sort()
    const dev = createAgent(ctx, { id: 'dev', identity: { subject: 'd', groups: ['dev'] } })
    const ops = createAgent(ctx, { id: 'ops', identity: { subject: 'ops' } })
    const nobody = createAgent(ctx, { id: 'x', identity: { subject: 'x' } })
    const anonymous = createAgent(ctx, { id: 'anon' })
    expect(names(dev)).toEqual(['bash', 'fetch', 'write_file'])
    expect(names(ops)).toEqual(['bash', 'fetch'])
    expect(names(nobody)).toEqual([])
    const everyone = ['bash', 'fetch', 'github__create_issue', 'github__search', 'write_file']
    expect(names(anonymous)).toEqual(everyone)
    expect(names()).toEqual(everyone)
    expect(
      JSON.parse(JSON.stringify(tools.schemas(dev)))
        .map((s: { name: string }) => s.name)
        .sort(),
    ).toEqual(names(dev))
    // hidden: not found by name either; listed under a `when`: decided per call
    expect((await call(tools, 'github__search', {}, { agent: dev })).error?.info?.code).toBe('UNKNOWN_TOOL')
    expect((await call(tools, 'write_file', { path: '.github/x' }, { agent: dev })).error?.info?.code).toBe(
      'TOOL_DENIED',
    )
    expect((await call(tools, 'write_file', { path: 'a' }, { agent: dev })).isError).toBe(false)
    // an agent's own policy hides in its own listing
    tools.setPolicy({ deny: ['bash'] }, anonymous)
    expect(names(anonymous)).toEqual(['fetch', 'github__create_issue', 'github__search', 'write_file'])
    tools.setPolicy(null)
    expect(names(dev)).toEqual([...NAMES].sort())
    tools.setPolicy(null, anonymous)
    expect(names(anonymous)).toEqual([...NAMES].sort())
  })
})

describe('what an enforcement keeps per call', () => {
  it('a policy reads a call’s parent and turn only through `when`: `conditional` says whether it has one', () => {
    expect(
      compilePolicy({ deny: ['bash'], rules: [{ tools: ['x'], quota: { calls: 1, per: 'hour', by: 'global' } }] })
        .conditional,
    ).toBe(false)
    expect(compilePolicy(GUIDE_POLICY).conditional).toBe(true)
  })

  it('without `when`, a quota still counts and a deny still refuses, call after call', async () => {
    runtime = await createToolRuntime({
      policy: { deny: ['bash'], rules: [{ tools: ['fetch'], quota: { calls: 2, per: 'hour', by: 'global' } }] },
    })
    const { tools } = runtime
    for (const name of ['bash', 'fetch']) tools.register(rawTool(name))
    expect((await call(tools, 'fetch', {})).isError).toBe(false)
    expect((await call(tools, 'fetch', {}, { rootCallId: 'turn-1' })).isError).toBe(false)
    expect((await call(tools, 'fetch', {})).error?.info?.code).toBe('QUOTA_EXCEEDED')
    expect((await call(tools, 'bash', {})).error?.info?.code).toBe('UNKNOWN_TOOL')
  })
})
