// `"files": false` (issue 23, a gateway in front of MCP servers): `toolgate serve` then serves its
// upstreams' tools alone, no file tools of its own, so a client sees exactly what the upstreams
// offer; bash is still served when asked for, Code Mode's run_code covers only what is served, a
// name the file tools would have taken is free for an upstream, and a root nothing uses is refused.
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const FILE_TOOLS = ['edit_file', 'glob', 'grep', 'list_dir', 'read_file', 'write_file']
const upstream = (...args: string[]) => ({ command: process.execPath, args: [UPSTREAM, ...args], prefix: '' })

let dir: string
let cleanup: () => Promise<void>
/** The fixture's tool names, listed by a client talking to it directly. */
let direct: string[]
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  dir = await realpath(dir)
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [UPSTREAM], stderr: 'pipe' }))
  try {
    direct = (await client.listTools()).tools.map((tool) => tool.name).sort()
  } finally {
    await client.close()
  }
})
afterAll(() => cleanup())

async function servedNames(args: string[]): Promise<string[]> {
  const s = await serveStdio(args)
  try {
    return (await s.client.listTools()).tools.map((tool) => tool.name).sort()
  } finally {
    await s.close()
  }
}

describe('serve with "files": false', () => {
  it("issue 23, item 2: lists exactly the upstream's tools, none of the gateway's own", async () => {
    const config = await writeConfig(dir, { files: false, servers: { up: upstream() } }, 'pure.json')
    expect(direct.length).toBeGreaterThan(0)
    expect(await servedNames(['--config', config])).toEqual(direct)
  })

  it('the default (and "files": true) still serves the six file tools beside the upstream', async () => {
    const plain = await writeConfig(dir, { servers: { up: upstream() } }, 'plain.json')
    const explicit = await writeConfig(dir, { files: true, servers: { up: upstream() } }, 'explicit.json')
    const expected = [...direct, ...FILE_TOOLS].sort()
    expect(await servedNames(['--config', plain, '--root', dir])).toEqual(expected)
    expect(await servedNames(['--config', explicit, '--root', dir])).toEqual(expected)
  })

  it('still serves bash when asked for ("bash": true or --bash), run in the root', async () => {
    const config = await writeConfig(dir, { files: false, bash: true, servers: { up: upstream() } }, 'bash.json')
    const s = await serveStdio(['--config', config, '--root', dir])
    try {
      expect((await s.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([...direct, 'bash'].sort())
      const pwd = await s.client.callTool({ name: 'bash', arguments: { command: 'pwd' } }, undefined, {
        timeout: 120_000,
      })
      expect(pwd.isError).not.toBe(true)
      expect(textOf(pwd)).toContain(dir)
    } finally {
      await s.close()
    }
    const flagged = await writeConfig(dir, { files: false, servers: { up: upstream() } }, 'flag.json')
    expect(await servedNames(['--config', flagged, '--bash'])).toEqual([...direct, 'bash'].sort())
  })

  it('issue 23, item 4: an upstream tool named like a file tool is served, not refused as a collision', async () => {
    const config = await writeConfig(
      dir,
      { files: false, servers: { fs: upstream('--tool-named', 'read_file') } },
      'collide.json',
    )
    const s = await serveStdio(['--config', config])
    try {
      expect((await s.client.listTools()).tools.map((tool) => tool.name)).toContain('read_file')
      const result = await s.client.callTool({ name: 'read_file', arguments: {} })
      expect(textOf(result)).toBe('named')
    } finally {
      await s.close()
    }
    // serve --check follows the same setting: nothing is left out.
    const check = await runCli(['serve', '--check', '--config', config])
    expect(check.stdout).toMatch(/^servers\.fs: connected, \d+ tools, MCP 2025-11-25\n$/)
    expect(check.code).toBe(0)
  })

  it('toolgate tools and Code Mode offer only what is served', async () => {
    const config = await writeConfig(dir, { files: false, servers: { up: upstream() } }, 'tools.json')
    const native = await runCli(['tools', '--config', config])
    expect(native.code).toBe(0)
    const listed = [...native.stdout.matchAll(/^(\S+)$/gm)].map((match) => match[1]).sort()
    expect(listed).toEqual(direct)
    const code = await runCli(['tools', '--config', config, '--mode', 'code', '--bash'])
    expect(code.code).toBe(0)
    expect(code.stdout).toMatch(/^run_code\n/)
    expect(code.stdout).toContain('echo:')
    expect(code.stdout).toContain('bash:')
    for (const tool of FILE_TOOLS) expect(code.stdout).not.toContain(`${tool}:`)
  })

  it('a root given when nothing would use it is refused; with bash it is checked as before', async () => {
    const missing = path.join(dir, 'no-such-dir')
    // A root in the config or on the command line that neither file tools nor bash would use...
    const unusedRoot = await writeConfig(dir, { files: false, root: 'no-such-dir', bash: false }, 'unused-root.json')
    const refused = await runCli(['serve', '--check', '--config', unusedRoot])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      `toolgate serve: ${unusedRoot}: root: nothing uses the root: "files" is false and bash is off (drop the root, or serve bash there)\n`,
    )
    const config = await writeConfig(dir, { files: false }, 'no-root.json')
    const flag = await runCli(['serve', '--check', '--config', config, '--root', missing])
    expect(flag.code).toBe(1)
    expect(flag.stderr).toMatch(/^toolgate serve: --root: nothing uses the root: "files" is false and bash is off/)
    // ...is the bash tool's working directory with --bash, and checked as before.
    const bash = await runCli(['serve', '--check', '--config', config, '--root', missing, '--bash'])
    expect(bash.code).toBe(1)
    expect(bash.stderr).toContain(`--root: "${missing}" is not a directory`)
    // Without a root given, nothing is refused.
    const none = await runCli(['serve', '--check', '--config', config])
    expect(none).toMatchObject({ code: 0, stdout: 'no upstream servers in the config\n' })
  })

  it('a "files" that is not true or false is refused with its path', async () => {
    const config = await writeConfig(dir, { files: 'no', servers: { up: upstream() } }, 'bad.json')
    const result = await runCli(['serve', '--config', config])
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `toolgate serve: ${config}:\n  - files: expected true or false, got "no"\n`,
    })
  })
})
