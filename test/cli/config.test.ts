// Bad configurations fail with clear, path-qualified errors before anything is served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/gateway/config.js'
import { runCli, tempDir, writeConfig } from './helpers.js'

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(() => cleanup())

describe('config validation', () => {
  it('reports every unknown key and bad value with its path', () => {
    let error: unknown
    try {
      parseConfig(
        JSON.stringify({
          rot: '.',
          mode: 'fast',
          servers: { up: { command: 'x', cwd: '/' }, web: { url: 'ftp://x' }, both: { command: 'x', url: 'http://x' } },
          policy: { deny: ['a', 3], timeoutMs: { 'x*': -1 }, block: [] },
        }),
        'test.json',
      )
    } catch (e) {
      error = e
    }
    const issues = (error as { issues: string[] }).issues
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^rot: unknown key/),
        expect.stringMatching(/^mode: expected "native", "code" or "both"/),
        expect.stringMatching(/^servers\.up\.cwd: unknown key/),
        expect.stringMatching(/^servers\.web\.url: expected an http\(s\) URL/),
        expect.stringMatching(/^servers\.both: give either command/),
        expect.stringMatching(/^policy\.deny\[1\]: expected a non-empty tool-name glob/),
        expect.stringMatching(/^policy\.timeoutMs\.x\*: expected a positive number/),
        expect.stringMatching(/^policy\.block: unknown key/),
      ]),
    )
    expect(issues).toHaveLength(8)
    expect((error as Error).message).toContain('test.json')
  })

  it('reports duplicate prefixes and duplicate keys', () => {
    expect(() =>
      parseConfig(JSON.stringify({ servers: { 'my-up': { command: 'a' }, my_up: { command: 'b' } } }), 'c'),
    ).toThrow(/servers\.my_up: its tool prefix "my_up__" duplicates the prefix of servers\.my-up/)
    expect(() => parseConfig('{ "servers": { "up": { "command": "a" }, "up": { "command": "b" } } }', 'c')).toThrow(
      /servers\.up: duplicate key/,
    )
    expect(() => parseConfig('{ "mode": "code", ', 'c')).toThrow(/not valid JSON/)
  })

  it('issue 23, item 4: checks prefix and reconnect, and lets servers share only the empty prefix', () => {
    let error: unknown
    try {
      parseConfig(
        JSON.stringify({
          reconnect: { initialDelayMs: 0, maxDelayMs: 'soon', every: 1 },
          servers: {
            a: { command: 'x', prefix: 'has space' },
            b: { url: 'http://127.0.0.1:1/mcp', prefix: 7 },
            c: { command: 'x', prefix: 'p_' },
            d: { command: 'x', prefix: 'p_' },
          },
        }),
        'p.json',
      )
    } catch (e) {
      error = e
    }
    expect([...(error as { issues: string[] }).issues].sort()).toEqual([
      'reconnect.every: unknown key (expected "initialDelayMs", "maxDelayMs")',
      'reconnect.initialDelayMs: expected a positive number of milliseconds, got 0',
      'reconnect.maxDelayMs: expected a positive number of milliseconds, got "soon"',
      'servers.a.prefix: expected up to 64 letters, digits, "_", "-" or ".", or "" for none, got "has space"',
      'servers.b.prefix: expected up to 64 letters, digits, "_", "-" or ".", or "" for none, got 7',
      'servers.d: its tool prefix "p_" duplicates the prefix of servers.c; rename one of them or set its "prefix"',
    ])
    expect(() => parseConfig(JSON.stringify({ reconnect: { initialDelayMs: 500, maxDelayMs: 100 } }), 'r')).toThrow(
      /reconnect\.maxDelayMs: expected at least initialDelayMs \(500\), got 100/,
    )
    const config = parseConfig(
      JSON.stringify({
        reconnect: { initialDelayMs: 200 },
        servers: { a: { command: 'x', prefix: '' }, b: { url: 'http://127.0.0.1:1/mcp', prefix: '' } },
      }),
      'ok.json',
    )
    expect(config.servers).toEqual({
      a: { command: 'x', prefix: '' },
      b: { url: 'http://127.0.0.1:1/mcp', prefix: '' },
    })
    expect(config.reconnect).toEqual({ initialDelayMs: 200 })
  })

  it('accepts the documented shape', () => {
    const config = parseConfig(
      JSON.stringify({
        root: '.',
        bash: true,
        mode: 'code',
        servers: {
          up: { command: 'node', args: ['s.js'], env: { A: 'b' } },
          web: { url: 'http://127.0.0.1:1/mcp', headers: { a: 'b' } },
        },
        policy: { allow: ['*'], deny: ['bash'], ask: ['write_*'], timeoutMs: { 'up__*': 1000 } },
      }),
      'ok.json',
    )
    expect(config.servers?.up).toEqual({ command: 'node', args: ['s.js'], env: { A: 'b' } })
    expect(config.policy?.ask).toEqual(['write_*'])
  })
})

describe('the CLI refuses a bad config before serving', () => {
  it('an unknown key', async () => {
    const config = await writeConfig(dir, { mode: 'code', extra: 1 }, 'unknown.json')
    const { code, stderr, stdout } = await runCli(['serve', '--config', config])
    expect(code).toBe(1)
    expect(stderr).toMatch(/extra: unknown key/)
    expect(stdout).toBe('')
  })

  it('a server that does not start is named by its config name (tools and serve --check exit 1)', async () => {
    const config = await writeConfig(dir, { servers: { ghost: { command: '/nonexistent/mcp-server' } } }, 'ghost.json')
    const tools = await runCli(['tools', '--config', config])
    expect(tools.code).toBe(1)
    expect(tools.stdout).toMatch(/^read_file\n/)
    expect(tools.stderr).toMatch(/servers\.ghost: down: MCP server "ghost" did not start/)
    expect(tools.stderr).not.toContain('/nonexistent')
    const check = await runCli(['serve', '--check', '--config', config])
    expect(check.code).toBe(1)
    expect(check.stdout).toMatch(/^servers\.ghost: down: MCP server "ghost" did not start/)
  })

  it('duplicate prefixes', async () => {
    const config = await writeConfig(dir, { servers: { 'a-b': { command: 'x' }, a_b: { command: 'y' } } }, 'dup.json')
    const { code, stderr } = await runCli(['tools', '--config', config])
    expect(code).toBe(1)
    expect(stderr).toMatch(/duplicates the prefix/)
  })

  it('an unknown flag or mode is a usage error', async () => {
    const flag = await runCli(['serve', '--nope'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toMatch(/--nope/)
    expect(flag.stderr).toMatch(/Usage: toolgate serve/)
    const mode = await runCli(['tools', '--mode', 'fast'])
    expect(mode.code).toBe(2)
    const command = await runCli(['nope'])
    expect(command.code).toBe(2)
    expect(command.stderr).toMatch(/unknown command "nope"/)
  })

  it('toolgate tools prints names and descriptions, or the Code Mode SDK', async () => {
    const native = await runCli(['tools', '--root', dir])
    expect(native.code).toBe(0)
    expect(native.stdout).toMatch(/^read_file\n {2}Read/m)
    const code = await runCli(['tools', '--root', dir, '--mode', 'code', '--bash'])
    expect(code.code).toBe(0)
    expect(code.stdout).toMatch(/^run_code\n/)
    expect(code.stdout).toContain('interface ToolArgsMap')
    expect(code.stdout).toContain('bash:')
  })
})
