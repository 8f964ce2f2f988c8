// Issue 37, item 6: a stdio upstream with `"sandbox"` in its config entry runs under bubblewrap.
// By default it reads only the system, Node and its own package, writes only a private /tmp and has
// no network; `read`, `write` and `network` widen that. Driven through the built CLI with a probe
// server that reports what it can reach.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, runCli, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const PROBE = path.resolve(import.meta.dirname, '../fixtures/probe-upstream.mjs')

let work: { dir: string; cleanup: () => Promise<void> }
let listener: Server
let port: number
const open: Connected[] = []

beforeAll(async () => {
  work = await tempDir()
  mkdirSync(path.join(work.dir, 'shared'))
  mkdirSync(path.join(work.dir, 'out'))
  writeFileSync(path.join(work.dir, 'secret.txt'), 'the secret')
  writeFileSync(path.join(work.dir, 'shared', 'notes.txt'), 'shared notes')
  // A loopback service on the host: a sandbox without network must not reach it.
  listener = createServer((socket) => socket.end())
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  const address = listener.address()
  port = typeof address === 'object' && address ? address.port : 0
})

afterAll(async () => {
  for (const c of open) await c.close()
  await new Promise((resolve) => listener.close(resolve))
  await work.cleanup()
})

async function probe(sandbox: unknown): Promise<Connected> {
  const config = await writeConfig(work.dir, {
    files: false,
    servers: { probe: { command: process.execPath, args: [PROBE], prefix: '', sandbox } },
  })
  const connected = await serveStdio(['--config', config])
  open.push(connected)
  return connected
}

const call = async (c: Connected, name: string, args: Record<string, unknown>) =>
  textOf(await c.client.callTool({ name, arguments: args }))

describe('an upstream in a sandbox (issue 37, item 6)', { timeout: 120_000 }, () => {
  it('by default: reads nothing of the host outside its package, writes only a private /tmp, no network', async () => {
    const c = await probe({})
    expect(await call(c, 'read_path', { path: path.join(work.dir, 'secret.txt') })).toBe('refused: ENOENT')
    expect(await call(c, 'read_path', { path: '/etc/passwd' })).toBe('refused: ENOENT')
    expect(await call(c, 'write_path', { path: path.join(work.dir, 'out', 'x.txt'), text: 'x' })).toMatch(
      /^refused: (ENOENT|EROFS|EACCES)$/,
    )
    expect(await call(c, 'write_path', { path: '/tmp/scratch.txt', text: 'x' })).toBe('ok: written')
    expect(await call(c, 'connect', { port })).toMatch(/^refused: (ECONNREFUSED|ENETUNREACH|EHOSTUNREACH)$/)
    // Its own module is readable (it runs), and so is the system.
    expect(await call(c, 'read_path', { path: PROBE })).toMatch(/^ok: /)
    // It starts in /tmp with HOME there: the gateway's own directory and home are not its.
    expect(await call(c, 'whoami', {})).toBe('/tmp /tmp')
  })

  it('read and write widen it to exactly the paths given; network: true reaches the host', async () => {
    const c = await probe({ read: ['shared'], write: ['out'], network: true })
    expect(await call(c, 'read_path', { path: path.join(work.dir, 'shared', 'notes.txt') })).toBe('ok: shared notes')
    expect(await call(c, 'write_path', { path: path.join(work.dir, 'shared', 'y.txt'), text: 'y' })).toMatch(
      /^refused: (EROFS|EACCES)$/,
    )
    expect(await call(c, 'write_path', { path: path.join(work.dir, 'out', 'z.txt'), text: 'z' })).toBe('ok: written')
    expect(readFileSync(path.join(work.dir, 'out', 'z.txt'), 'utf8')).toBe('z')
    expect(await call(c, 'read_path', { path: path.join(work.dir, 'secret.txt') })).toBe('refused: ENOENT')
    expect(await call(c, 'connect', { port })).toBe('ok: connected')
  })

  it('a path that does not exist, a bad shape, or no bubblewrap is a config error naming the key', async () => {
    const missing = await writeConfig(
      work.dir,
      { servers: { probe: { command: process.execPath, args: [PROBE], sandbox: { read: ['nope'] } } } },
      'missing.json',
    )
    const a = await runCli(['serve', '--check', '--config', missing])
    expect(a.code).not.toBe(0)
    expect(a.stderr).toContain(
      `servers.probe.sandbox.read[0]: no such file or directory: ${path.join(work.dir, 'nope')}`,
    )

    const shape = await writeConfig(
      work.dir,
      { servers: { probe: { command: 'x', sandbox: { read: 'shared', network: 'no', exec: [] } } } },
      'shape.json',
    )
    const b = await runCli(['serve', '--check', '--config', shape])
    expect(b.stderr).toContain('servers.probe.sandbox.read: expected an array of paths')
    expect(b.stderr).toContain('servers.probe.sandbox.network: expected true or false, got "no"')
    expect(b.stderr).toContain('servers.probe.sandbox.exec: unknown key')

    const ok = await writeConfig(
      work.dir,
      { servers: { probe: { command: process.execPath, args: [PROBE], sandbox: {} } } },
      'ok.json',
    )
    const c = await runCli(['serve', '--check', '--config', ok], { PATH: path.join(work.dir, 'empty-path') })
    expect(c.code).not.toBe(0)
    expect(c.stderr).toContain('servers.probe.sandbox: the upstream cannot be sandboxed: bwrap is not installed')
  })
})

describe('the MCP guide’s sandbox example (issue 37, item 6)', { timeout: 120_000 }, () => {
  it('serves server-filesystem confined to its directory and server-everything without network', async () => {
    const guide = readFileSync(path.resolve(import.meta.dirname, '../../docs/guide/mcp.md'), 'utf8')
    const block = /<!-- sandbox-example -->\n```json\n([\s\S]*?)```/.exec(guide)?.[1]
    if (block === undefined) throw new Error('docs/guide/mcp.md: no sandbox example')
    const project = path.join(work.dir, 'project')
    mkdirSync(project)
    writeFileSync(path.join(project, 'readme.md'), 'inside')
    const config = JSON.parse(block.replaceAll('/srv/project', project)) as { files?: boolean }
    config.files = false
    const file = await writeConfig(work.dir, config, 'guide.json')
    // The example's relative commands are the repository's node_modules/.bin, run from its root.
    const c = await serveStdio(['--config', file])
    open.push(c)
    const names = (await c.client.listTools()).tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['fs__read_text_file', 'fs__write_file', 'everything__echo']))
    expect(
      textOf(
        await c.client.callTool({ name: 'fs__read_text_file', arguments: { path: path.join(project, 'readme.md') } }),
      ),
    ).toBe('inside')
    await c.client.callTool({
      name: 'fs__write_file',
      arguments: { path: path.join(project, 'new.txt'), content: 'n' },
    })
    expect(readFileSync(path.join(project, 'new.txt'), 'utf8')).toBe('n')
    expect(textOf(await c.client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } }))).toContain('hi')
  })
})
