// `policy.rules` in the config file (issue 24 names): checked key by key, every problem with its path.
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { parseConfig } from '../../src/gateway/config.js'

function problems(config: unknown): string[] {
  try {
    parseConfig(JSON.stringify(config), 'toolgate.json')
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message.split('\n')
  }
  return []
}

describe('policy.rules (issue 24)', () => {
  it('reads rules with who, allow, deny, ask, timeoutMs and mode next to the top-level keys', () => {
    const config = parseConfig(
      JSON.stringify({
        policy: {
          deny: ['bash'],
          rules: [
            { who: { group: 'admin' }, allow: ['*'], mode: 'both' },
            { who: { subject: ['ci-bot'], scope: 'tools:read' }, allow: ['list_dir'], timeoutMs: { '*': 5000 } },
            { who: { claim: { org: 'acme', email_verified: true } }, ask: ['write_*'] },
          ],
        },
      }),
      'toolgate.json',
    )
    expect(config.policy?.deny).toEqual(['bash'])
    expect(config.policy?.rules).toEqual([
      { who: { group: ['admin'] }, allow: ['*'], mode: 'both' },
      { who: { subject: ['ci-bot'], scope: ['tools:read'] }, allow: ['list_dir'], timeoutMs: { '*': 5000 } },
      { who: { claim: { org: ['acme'], email_verified: [true] } }, ask: ['write_*'] },
    ])
  })

  it('reports unknown keys and bad values with their paths', () => {
    const found = problems({
      policy: {
        rules: [
          { who: { team: 'x' }, allow: 'read_file' },
          { who: {}, deny: [''], mode: 'fast', timeoutMs: { '*': -1 }, approve: true },
          { allow: ['*'] },
          { who: { group: [], claim: { n: { nested: 1 } } } },
          'everyone',
        ],
      },
    }).join('\n')
    expect(found).toContain('policy.rules[0].who.team: unknown key')
    expect(found).toContain('policy.rules[0].allow: expected an array of tool-name globs')
    expect(found).toContain('policy.rules[1].who: names no one')
    expect(found).toContain('policy.rules[1].deny[0]: expected a non-empty tool-name glob')
    expect(found).toContain('policy.rules[1].mode: expected "native", "code" or "both"')
    expect(found).toContain('policy.rules[1].timeoutMs.*: expected a positive number')
    expect(found).toContain('policy.rules[1].approve: unknown key')
    // issue 38: a rule without "who" is for everyone; it may deny, ask or count, never grant
    expect(found).toContain('policy.rules[2].allow: a rule without "who" is for everyone and cannot set "allow"')
    expect(found).toContain('policy.rules[3].who.group: expected a non-empty string or a non-empty array')
    expect(found).toContain('policy.rules[3].who.claim.n: expected a string, number, boolean or null')
    expect(found).toContain('policy.rules[4]: expected an object')
    expect(problems({ policy: { rules: {} } }).join('\n')).toContain('policy.rules: expected an array')
    expect(problems({ policy: { who: {} } }).join('\n')).toContain('policy.who: unknown key')
  })
})
