// `toolgate policy explain|test` on the guide's examples (issue 38, item 3), through the built CLI.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GUIDE_POLICY } from '../policy/guide-examples.js'
import { runCli, tempDir } from './helpers.js'

let dir: string
let cleanup: () => Promise<void>
let config: string
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  config = path.join(dir, 'toolgate.json')
  const policy = {
    timeoutMs: { bash: 120000 },
    rules: [...GUIDE_POLICY.rules, { who: { group: 'dev' }, allow: ['*'], deny: ['github__delete_*'] }],
  }
  await writeFile(config, JSON.stringify({ servers: {}, policy }))
})
afterAll(() => cleanup?.())

describe('toolgate policy (issue 38, item 3)', { timeout: 60_000 }, () => {
  it('explain prints the decision, the deciding and matching rules, the deadline and the digest', async () => {
    const denied = await runCli([
      'policy',
      'explain',
      '--config',
      config,
      '--as',
      'alice',
      '--group',
      'dev',
      '--tool',
      'write_file',
      '--args',
      '{"path":".github/x.yml"}',
    ])
    expect(denied.code).toBe(0)
    expect(denied.stdout).toContain('decision: deny\ndecided by: no-workflow-writes\n')
    expect(denied.stdout).toContain('reason: files under .github/ are not written by agents')
    expect(denied.stdout).toMatch(/policy: sha256:[0-9a-f]{64}/)
    const asked = await runCli([
      'policy',
      'explain',
      '--config',
      config,
      '--as',
      'alice',
      '--group',
      'dev',
      '--tool',
      'transfer',
      '--args',
      '{"amount":101}',
    ])
    expect(asked.stdout).toContain('decision: ask\ndecided by: large-transfers')
    expect(asked.stdout).toContain('matched: large-transfers, rules[5]')
    const bash = await runCli([
      'policy',
      'explain',
      '--config',
      config,
      '--as',
      'bob',
      '--group',
      'dev',
      '--tool',
      'bash',
    ])
    expect(bash.stdout).toContain('decision: allow\ndecided by: rules[5]')
    expect(bash.stdout).toContain('deadline: 120000 ms')
    const quota = await runCli([
      'policy',
      'explain',
      '--config',
      config,
      '--as',
      'bob',
      '--group',
      'dev',
      '--tool',
      'github__create_issue',
      '--args',
      '{"repo":"acme/web"}',
    ])
    expect(quota.stdout).toContain('quota: issue-quota (20 calls per hour, by subject)')
    const stranger = await runCli(['policy', 'explain', '--config', config, '--as', 'eve', '--tool', 'read_file'])
    expect(stranger.stdout).toContain('decision: deny')
    expect(stranger.stdout).toContain('has no rule for "eve"')
  })

  it('test runs a table of cases and exits 1 on a mismatch', async () => {
    const cases = [
      {
        as: 'a',
        groups: ['dev'],
        tool: 'write_file',
        args: { path: '.github/ci.yml' },
        expect: 'deny',
        rule: 'no-workflow-writes',
      },
      { as: 'a', groups: ['dev'], tool: 'write_file', args: { path: 'src/x.ts' }, expect: 'allow' },
      { as: 'a', groups: ['dev'], tool: 'transfer', args: { amount: 500 }, expect: 'ask' },
      { as: 'a', groups: ['dev'], tool: 'bash', args: {}, parentTool: 'run_code', expect: 'allow' },
      {
        as: 'a',
        groups: ['dev'],
        tool: 'github__create_issue',
        args: { repo: 'evil/x' },
        expect: 'deny',
        rule: 'acme-repos-only',
      },
    ]
    const good = path.join(dir, 'cases.json')
    await writeFile(good, JSON.stringify(cases))
    const passed = await runCli(['policy', 'test', '--config', config, good])
    expect(passed.stdout).toContain('5 passed, 0 failed')
    expect(passed.code).toBe(0)
    const bad = path.join(dir, 'bad.json')
    await writeFile(bad, JSON.stringify([{ ...cases[1], expect: 'deny', name: 'a wrong expectation' }]))
    const failed = await runCli(['policy', 'test', '--config', config, bad])
    expect(failed.code).toBe(1)
    expect(failed.stdout).toContain('FAIL  a wrong expectation: expected deny, got allow')
  })

  it('a when that does not compile is a config error naming the rule and column', async () => {
    const broken = path.join(dir, 'broken.json')
    await writeFile(broken, JSON.stringify({ policy: { rules: [{ deny: ['x'], when: 'args.a ==' }] } }))
    const result = await runCli(['policy', 'explain', '--config', broken, '--tool', 'x'])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/policy\.rules\[0\]\.when: column \d+: /)
  })

  it('hostile expressions in a gateway config are refused at load: a regex bomb, deep nesting', async () => {
    const hostile = path.join(dir, 'hostile.json')
    const rules = [
      { deny: ['x'], when: "args.s.matches('^(a+)+$')" },
      { deny: ['y'], when: `${'('.repeat(100)}true${')'.repeat(100)}` },
    ]
    await writeFile(hostile, JSON.stringify({ policy: { rules } }))
    const result = await runCli(['policy', 'explain', '--config', hostile, '--tool', 'x'])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/policy\.rules\[0\]\.when: column \d+: .*nests quantifiers/)
  })
})
