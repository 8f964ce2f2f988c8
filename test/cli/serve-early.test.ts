// Issue 23 (cold start): `toolgate serve` spawns its stdio upstream servers from a small first
// script, before the CLI's big bundle is read, compiled and run, and only when the flags and the
// whole config are good. The CLI then takes those processes over (one process per server, never
// two), reports a bad config exactly as before, and reads a config it can read only once just once.
import { execFile, execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BIN, tempDir, writeConfig } from './helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const RECORDER = path.resolve(import.meta.dirname, '../fixtures/record-spawns.cjs')

let dir: string
let cleanup: () => Promise<void>
let events: string
beforeEach(async () => {
  ;({ dir, cleanup } = await tempDir())
  events = path.join(dir, 'events')
  await writeFile(events, '')
})
afterEach(() => cleanup())

/** What the gateway process did, in order: `spawn <pid> <command> <args>` and `bundle` lines. */
async function recorded(): Promise<string[]> {
  return (await readFile(events, 'utf8')).split('\n').filter((line) => line !== '')
}

/** `toolgate ...args` with the recorder preloaded: its exit code and output. */
function run(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--require', RECORDER, BIN, ...args],
      { env: { ...process.env, TOOLGATE_TEST_EVENTS: events, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    )
  })
}

/** `toolgate serve --http 0 ...args` with the recorder preloaded, once it announces its port; and how to stop it. */
async function serveHttp(args: string[]): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--require', RECORDER, BIN, 'serve', '--http', '0', ...args], {
    env: { ...process.env, TOOLGATE_TEST_EVENTS: events },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const match = /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)
      if (match) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

const upstream = (extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [UPSTREAM], ...extra })

describe.skipIf(process.platform === 'win32')('toolgate serve spawns its upstreams first (issue 23)', () => {
  it('issue 23, Performance: spawns each stdio upstream once, before the CLI bundle loads, and serves through that process', async () => {
    const config = await writeConfig(dir, {
      servers: { a: upstream(), b: upstream({ env: { WHICH: 'b' } }), c: upstream({ env: { WHICH: 'b' } }) },
    })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--require', RECORDER, BIN, 'serve', '--config', config, '--root', dir],
      env: { ...(process.env as Record<string, string>), TOOLGATE_TEST_EVENTS: events },
      stderr: 'pipe',
    })
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const pids = []
      for (const name of ['a', 'b', 'c']) {
        const result = await client.callTool({ name: `${name}__pid`, arguments: {} })
        pids.push((result.content as { text: string }[])[0].text)
      }
      const log = await recorded()
      const spawns = log.filter((line) => line.startsWith('spawn '))
      // Three servers (two with the same spec), three processes, all before the bundle.
      expect(spawns).toHaveLength(3)
      expect(log.slice(0, 3)).toEqual(spawns)
      expect(log[3]).toBe('bundle')
      for (const line of spawns) expect(line).toContain(`${process.execPath} ${JSON.stringify([UPSTREAM])}`)
      // Each server is served by one of the processes spawned first.
      expect(pids.sort()).toEqual(spawns.map((line) => line.split(' ')[1]).sort())
    } finally {
      await client.close()
    }
  })

  it('issue 23, Performance: spawns nothing for a bad config or bad flags, and reports them as the CLI always has', async () => {
    const good = await writeConfig(dir, { servers: { a: upstream() } })
    const bad = await writeConfig(dir, { servers: { a: upstream() }, mode: 'fast' }, 'bad.json')
    const invalid = await run(['serve', '--config', bad, '--root', dir])
    expect(invalid).toEqual({
      code: 1,
      stdout: '',
      stderr: `toolgate serve: ${bad}:\n  - mode: expected "native", "code" or "both", got "fast"\n`,
    })
    const usage = await run(['serve', '--config', good, '--mode', 'fast'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toMatch(
      /^toolgate serve: --mode: expected native, code or both, got "fast"\n\nUsage: toolgate serve/,
    )
    // Serving HTTP on an exposed address without auth is refused before anything starts.
    const exposed = await run(['serve', '--config', good, '--http', '0', '--host', '0.0.0.0'])
    expect(exposed.code).toBe(1)
    expect(exposed.stderr).toMatch(/^toolgate serve: --host: 0\.0\.0\.0 is not a loopback address/)
    const help = await run(['serve', '--config', good, '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: toolgate serve/)
    expect((await recorded()).filter((line) => line.startsWith('spawn '))).toEqual([])
  })

  it('issue 23, Performance: spawns early for a config with "files": false, and nothing for a wrong "files" or an unused root', async () => {
    const pure = await writeConfig(dir, { files: false, servers: { a: upstream() } })
    const checked = await run(['serve', '--check', '--config', pure])
    expect(checked).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^servers\.a: connected, \d+ tools, MCP 2025-11-25\n$/),
    })
    const log = await recorded()
    expect(log.filter((line) => line.startsWith('spawn '))).toHaveLength(1)
    expect(log.slice(0, 2)).toEqual([expect.stringMatching(/^spawn /), 'bundle'])
    await writeFile(events, '')
    const bad = await writeConfig(dir, { files: 'no', servers: { a: upstream() } }, 'bad-files.json')
    const invalid = await run(['serve', '--config', bad])
    expect(invalid).toEqual({
      code: 1,
      stdout: '',
      stderr: `toolgate serve: ${bad}:\n  - files: expected true or false, got "no"\n`,
    })
    const unused = await run(['serve', '--config', pure, '--root', dir])
    expect(unused.code).toBe(1)
    expect(unused.stderr).toMatch(/^toolgate serve: --root: nothing uses the root/)
    expect((await recorded()).filter((line) => line.startsWith('spawn '))).toEqual([])
  })

  it('issue 23, Performance: loads nothing before the spawn that only later work needs (node:crypto, node:fs/promises)', async () => {
    // node:crypto was loaded for a cache check of the first script (≈ 4 ms on Node 20) and
    // node:fs/promises for reading the config; both delayed every upstream's start.
    const config = await writeConfig(dir, { files: false, servers: { a: upstream() } })
    const checked = await run(['serve', '--check', '--config', config], {
      TOOLGATE_TEST_BUILTINS: 'crypto,fs/promises',
    })
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringMatching(/^servers\.a: connected/) })
    const log = await recorded()
    expect(log[0]).toBe('builtins-before-spawn []')
    expect(log[1]).toMatch(/^spawn /)
  })

  it('issue 23, Performance: a config that can be read only once (a pipe) is read once and served', async () => {
    const fifo = path.join(dir, 'config.fifo')
    execFileSync('mkfifo', [fifo])
    const checked = run(['serve', '--check', '--config', fifo, '--root', dir])
    // Opening a pipe for writing waits for its reader; the gateway reads it to the end once.
    await writeFile(fifo, JSON.stringify({ servers: { a: upstream() } }))
    const result = await checked
    expect(result).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^servers\.a: connected, \d+ tools, MCP 2025-11-25\n/),
    })
    const log = await recorded()
    expect(log.filter((line) => line.startsWith('spawn '))).toHaveLength(1)
    expect(log.indexOf('bundle')).toBeGreaterThan(0)
    // Longer than `run`'s own bound, which stops a gateway left waiting for a second read.
  }, 90_000)

  it('issue 23, Performance: `serve --http` on loopback without auth spawns its upstream before the bundle, and serves through it once listening', async () => {
    const config = await writeConfig(dir, { servers: { a: upstream() } })
    const served = await serveHttp(['--config', config, '--root', dir])
    const client = new Client({ name: 'test', version: '1.0.0' })
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)))
      const result = await client.callTool({ name: 'a__pid', arguments: {} })
      const log = await recorded()
      const spawns = log.filter((line) => line.startsWith('spawn '))
      expect(spawns).toHaveLength(1)
      expect(log.slice(0, 2)).toEqual([spawns[0], 'bundle'])
      expect((result.content as { text: string }[])[0].text).toBe(spawns[0].split(' ')[1])
    } finally {
      await client.close()
      await served.stop()
    }
  })

  it('issue 23, Performance: `serve --http` with "auth" spawns only once the CLI has built the authenticator', async () => {
    const hash = createHash('sha256').update('secret-token').digest('hex')
    const config = await writeConfig(dir, {
      servers: { a: upstream() },
      auth: { tokens: [{ sha256: hash, subject: 'alice' }] },
    })
    const served = await serveHttp(['--config', config, '--root', dir])
    const client = new Client({ name: 'test', version: '1.0.0' })
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(served.url), {
          requestInit: { headers: { authorization: 'Bearer secret-token' } },
        }),
      )
      const result = await client.callTool({ name: 'a__pid', arguments: {} })
      const log = await recorded()
      const spawns = log.filter((line) => line.startsWith('spawn '))
      expect(spawns).toHaveLength(1)
      expect(log.indexOf('bundle')).toBeLessThan(log.indexOf(spawns[0]))
      expect((result.content as { text: string }[])[0].text).toBe(spawns[0].split(' ')[1])
    } finally {
      await client.close()
      await served.stop()
    }
  })
})

describe.skipIf(process.platform === 'win32')('toolgate serve loads the SDK v2 client early (issue 35)', () => {
  const CLIENT = '@modelcontextprotocol/client'

  it('issue 23, Performance: starts loading the client right after the early spawn, before the CLI bundle', async () => {
    const config = await writeConfig(dir, { files: false, servers: { a: upstream() } })
    const checked = await run(['serve', '--check', '--config', config], { TOOLGATE_TEST_PACKAGES: CLIENT })
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringMatching(/^servers\.a: connected, \d+ tools/) })
    const log = await recorded()
    expect(log).toEqual([expect.stringMatching(/^spawn /), `require ${CLIENT}`, 'bundle'])
  })

  it('issue 23, Performance: a `when` read from the CEL file decides calls in the served gateway', async () => {
    // Both bundles reach CEL through dist/cli/cel.cjs; the gateway's own copy decides each call.
    const rules = [{ deny: ['a__echo'], when: 'args.text == "no"' }]
    const config = await writeConfig(dir, { files: false, servers: { a: upstream() }, policy: { rules } })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--require', RECORDER, BIN, 'serve', '--config', config],
      env: {
        ...(process.env as Record<string, string>),
        TOOLGATE_TEST_EVENTS: events,
        TOOLGATE_TEST_PACKAGES: './cel.cjs',
      },
      stderr: 'pipe',
    })
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const allowed = await client.callTool({ name: 'a__echo', arguments: { text: 'yes' } })
      expect(allowed.isError).toBeFalsy()
      expect(allowed.content).toEqual([{ type: 'text', text: 'echo: yes' }])
      const denied = await client.callTool({ name: 'a__echo', arguments: { text: 'no' } })
      expect(denied.isError).toBe(true)
      expect(JSON.stringify(denied.content)).not.toContain('echo: no')
      expect(JSON.stringify(denied.content)).toMatch(/denied|polic/i)
      expect((await recorded()).slice(0, 2)).toEqual(['require ./cel.cjs', expect.stringMatching(/^spawn /)])
    } finally {
      await client.close()
    }
  })

  it('issue 23, Performance: reads CEL only for a config with a `when` condition: before the spawn to check it, never without one', async () => {
    // CEL was 151 KB of the 270 KB read and compiled before every spawn, for conditions most
    // configs do not have (issue 38's `when`); a bad one must still stop the spawn.
    const CEL = './cel.cjs'
    const plain = await writeConfig(dir, {
      files: false,
      servers: { a: upstream() },
      policy: { rules: [{ deny: ['x'] }] },
    })
    const without = await run(['serve', '--check', '--config', plain], { TOOLGATE_TEST_PACKAGES: CEL })
    expect(without).toMatchObject({ code: 0, stdout: expect.stringMatching(/^servers\.a: connected, \d+ tools/) })
    expect(await recorded()).toEqual([expect.stringMatching(/^spawn /), 'bundle'])
    await writeFile(events, '')
    const rules = [{ deny: ['echo'], when: 'args.message == "no"' }]
    const conditioned = await writeConfig(
      dir,
      { files: false, servers: { a: upstream() }, policy: { rules } },
      'when.json',
    )
    const checked = await run(['serve', '--check', '--config', conditioned], { TOOLGATE_TEST_PACKAGES: CEL })
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringMatching(/^servers\.a: connected, \d+ tools/) })
    expect(await recorded()).toEqual([`require ${CEL}`, expect.stringMatching(/^spawn /), 'bundle'])
    await writeFile(events, '')
    const broken = await writeConfig(
      dir,
      { files: false, servers: { a: upstream() }, policy: { rules: [{ deny: ['echo'], when: 'args.message ==' }] } },
      'broken.json',
    )
    const refused = await run(['serve', '--config', broken])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^toolgate serve: .*broken\.json:\n {2}- policy\.rules\[0\]\.when: column \d+: /)
    expect((await recorded()).filter((line) => line.startsWith('spawn '))).toEqual([])
  })

  it('issue 23, Performance: `serve --check` without upstreams loads no SDK package and not zod: it serves and connects nothing', async () => {
    const config = await writeConfig(dir, { servers: {} })
    const sdk = ['@modelcontextprotocol/server', CLIENT, '@modelcontextprotocol/core/internal', 'zod/v4']
    const checked = await run(['serve', '--check', '--config', config], { TOOLGATE_TEST_PACKAGES: sdk.join(',') })
    expect(checked).toMatchObject({ code: 0, stdout: 'no upstream servers in the config\n' })
    expect(await recorded()).toEqual(['bundle'])
  })

  it('issue 23, Performance: a serve without upstreams never loads the client, listing its own tools included', async () => {
    const config = await writeConfig(dir, { servers: {} })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--require', RECORDER, BIN, 'serve', '--config', config, '--root', dir],
      env: { ...(process.env as Record<string, string>), TOOLGATE_TEST_EVENTS: events, TOOLGATE_TEST_PACKAGES: CLIENT },
      stderr: 'pipe',
    })
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      expect(tools.length).toBeGreaterThan(0)
      expect(await recorded()).toEqual(['bundle'])
    } finally {
      await client.close()
    }
  })
})
