// Hostile `when` expressions and arguments (issue 38, "Done when"): refused at load, or denied at
// run time naming the rule, never an allow and never a crash.
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/index.js'
import { compilePolicy, regexRisk } from '../../src/policy/index.js'

function loadError(when: string): ConfigError {
  try {
    compilePolicy({ rules: [{ id: 'r', deny: ['t'], when }] })
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`expected ${when.slice(0, 40)} to be refused`)
}

describe('refused at load', () => {
  it('deep nesting, a huge expression, a non-bool result', () => {
    expect(loadError(`${'('.repeat(200)}true${')'.repeat(200)}`).issues[0]).toMatch(
      /^policy\.rules\[0\]\.when: column \d+: .*maxDepth/,
    )
    expect(loadError(`tool == '${'a'.repeat(5000)}'`).issues[0]).toMatch(/longer than 4096 characters/)
    expect(loadError('1 + 1').issues[0]).toMatch(/of type int, expected bool/)
    expect(loadError('tool +').issues[0]).toMatch(/^policy\.rules\[0\]\.when: column 7: /)
    expect(loadError('nope == 1').issues[0]).toMatch(/nope/)
  })

  it('regex bombs, computed patterns and nested comprehensions', () => {
    expect(loadError("args.s.matches('^(a+)+$')").issues[0]).toMatch(/nests quantifiers/)
    expect(loadError("args.s.matches('(x|xy)*z')").issues[0]).toMatch(/nests quantifiers/)
    expect(loadError("args.s.matches('(a)\\\\1')").issues[0]).toMatch(/backreference/)
    expect(loadError('args.s.matches(args.p)').issues[0]).toMatch(/literal pattern/)
    expect(loadError('args.l.all(x, args.l.exists(y, x == y))').issues[0]).toMatch(/inside another comprehension/)
    expect(regexRisk('^acme/[A-Za-z0-9_.-]+$')).toBeUndefined()
    expect(regexRisk('^(?:ab)+$')).toBeUndefined()
    expect(regexRisk('((a+))+')).toMatch(/nests/)
  })
})

describe('denied at run time, naming the rule', () => {
  const policy = compilePolicy({
    rules: [
      { id: 'path', deny: ['write_file'], when: "args.path.startsWith('.github/')" },
      { id: 'proto', deny: ['p'], when: 'args.constructor == 1' },
      { id: 'has-proto', deny: ['h'], when: 'has(args.constructor) || has(args.__proto__)' },
      { id: 'regex', deny: ['r'], when: "!args.s.matches('^[a-z]+$')" },
    ],
  })
  it('args that are not objects', () => {
    for (const args of ['text', [1, 2], null, 42, true]) {
      const decision = policy.decide({ tool: 'write_file', args })
      expect(decision.decision).toBe('deny')
      expect(decision.rule?.label).toBe('path')
      expect(decision.reason).toMatch(/the "when" of path could not be decided/)
    }
  })

  it('prototype-named keys are plain keys, never the prototype', () => {
    expect(policy.decide({ tool: 'p', args: {} }).decision).toBe('deny')
    expect(policy.decide({ tool: 'p', args: {} }).reason).toMatch(/could not be decided/)
    expect(policy.decide({ tool: 'h', args: {} }).decision).toBe('allow')
    const own = JSON.parse('{"__proto__": {"x": 1}, "constructor": 1}')
    expect(policy.decide({ tool: 'h', args: own }).decision).toBe('deny')
    expect(policy.decide({ tool: 'p', args: own }).rule?.label).toBe('proto')
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })

  it('huge strings are decided, not crashed on', () => {
    const huge = 'a'.repeat(2_000_000)
    expect(policy.decide({ tool: 'r', args: { s: huge } }).decision).toBe('allow')
    expect(policy.decide({ tool: 'r', args: { s: `${huge}!` } }).decision).toBe('deny')
    expect(policy.decide({ tool: 'write_file', args: { path: `.github/${huge}` } }).decision).toBe('deny')
  })
})

// The same through the library's pipeline: hostile arguments are a denial naming the rule, and
// the runtime goes on serving (issue 38, "Done when").
describe('hostile arguments through the library', () => {
  it('non-object args, prototype-named keys and huge strings are denied or decided, never crash', async () => {
    const { createToolRuntime } = await import('../../src/index.js')
    const { rawTool, signal } = await import('../runtime/helpers.js')
    const runtime = await createToolRuntime({
      policy: {
        rules: [
          { id: 'path', deny: ['write_file'], when: "args.path.startsWith('.github/')" },
          { id: 'proto', deny: ['p'], when: 'has(args.__proto__) || args.constructor == 1' },
        ],
      },
    })
    try {
      runtime.tools.register(rawTool('write_file'))
      runtime.tools.register(rawTool('p'))
      let id = 0
      const call = (name: string, args: unknown) =>
        runtime.tools.execute({ callId: `h${++id}`, name, arguments: args, signal: signal() })
      for (const args of ['text', [1], null, 42]) {
        const result = await call('write_file', args)
        expect(result.error?.info?.code).toBe('TOOL_DENIED')
        expect(result.error?.message).toContain('the "when" of path could not be decided')
      }
      expect((await call('p', JSON.parse('{"__proto__": {"polluted": 1}}'))).error?.info?.code).toBe('TOOL_DENIED')
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect((await call('write_file', { path: `src/${'a'.repeat(1_000_000)}` })).isError).toBe(false)
    } finally {
      await runtime.dispose()
    }
  })
})
