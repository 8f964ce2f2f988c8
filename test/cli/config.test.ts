// Bad configurations fail with clear, path-qualified errors before anything is served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/cli/config.js'
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

  it('a server that does not start', async () => {
    const config = await writeConfig(dir, { servers: { ghost: { command: '/nonexistent/mcp-server' } } }, 'ghost.json')
    const { code, stderr } = await runCli(['serve', '--config', config])
    expect(code).toBe(1)
    expect(stderr).toMatch(/servers\.ghost: MCP server .* did not start/)
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
