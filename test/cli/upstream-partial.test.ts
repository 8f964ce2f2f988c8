// Partial failure and naming behind `toolgate serve --config` (issue 23, items 4 and 5): an
// upstream that is down is left out and retried while the others serve, its tools come and go
// with list_changed, messages name servers by their config name only, `prefix` renames (or
// keeps) tool names, and a name two servers share is reported naming both.
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, runCli, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const GHOST = '/nonexistent/secret-dir/mcp-server'
const SECRET_ENV = 'hunter2-token-value'
const SECRET_ARG = 'sk-do-not-show-this'
/** A loaded machine may take its time; every wait is for an event, bounded by this. */
const BOUND_MS = 90_000

/**
 * Resolves with the tool names at the first `notifications/tools/list_changed` after this call
 * whose listing passes `test`, so it only resolves when the gateway told the client.
 */
function listChangedUntil(client: Client, test: (names: string[]) => boolean, what: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let done = false
    const timer = setTimeout(() => {
      done = true
      reject(new Error(`no list_changed with ${what} within ${BOUND_MS} ms`))
    }, BOUND_MS)
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (done) return
      const names = (await client.listTools()).tools.map((tool) => tool.name)
      if (done || !test(names)) return
      done = true
      clearTimeout(timer)
      resolve(names)
    })
  })
}

/** The command line, arguments and environment of the configured servers must never be shown. */
function expectNoSecrets(text: string, flag: string): void {
  for (const secret of [UPSTREAM, GHOST, 'secret-dir', SECRET_ENV, SECRET_ARG, '--down-while', flag])
    expect(text).not.toContain(secret)
}

describe('an upstream that is down, comes up, dies and comes back', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let flag: string
  let s: Connected
  beforeAll(async () => {
    ;({ dir, cleanup } = await tempDir())
    flag = path.join(dir, 'flaky-is-down')
    await writeFile(flag, '')
    const config = await writeConfig(dir, {
      root: '.',
      reconnect: { initialDelayMs: 50, maxDelayMs: 400 },
      servers: {
        good: { command: process.execPath, args: [UPSTREAM] },
        flaky: { command: process.execPath, args: [UPSTREAM, '--down-while', flag], env: { TOKEN: SECRET_ENV } },
        ghost: { command: GHOST, args: ['--api-key', SECRET_ARG] },
      },
    })
    s = await serveStdio(['--config', config])
  }, BOUND_MS)
  afterAll(async () => {
    await s?.close()
    await cleanup()
  })

  it('issue 23, item 5: serves the healthy upstream while the others are down, logging them by config name only', async () => {
    const names = (await s.client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(['read_file', 'good__echo', 'good__pid']))
    expect(names.filter((name) => name.startsWith('flaky__') || name.startsWith('ghost__'))).toEqual([])
    expect(textOf(await s.client.callTool({ name: 'good__echo', arguments: { text: 'hi' } }))).toBe('echo: hi')
    expect(s.stderr()).toMatch(/MCP server "flaky" did not start: .*; its tools are left out, retrying in/)
    expect(s.stderr()).toMatch(/MCP server "ghost" did not start: its command could not be run \(ENOENT\)/)
    expectNoSecrets(s.stderr(), flag)
  })

  it('issue 23, item 5: a down server is retried, and its tools appear with list_changed when it comes up', async () => {
    const up = listChangedUntil(s.client, (names) => names.includes('flaky__echo'), 'flaky__echo')
    await rm(flag)
    await up
    expect(textOf(await s.client.callTool({ name: 'flaky__echo', arguments: { text: 'up' } }))).toBe('echo: up')
    expect(s.stderr()).toMatch(/MCP server "flaky" is back: 7 tools/)
  })

  it('issue 23, item 5: a server that dies is left out with list_changed while the others serve, and comes back', async () => {
    const pid = Number(textOf(await s.client.callTool({ name: 'flaky__pid', arguments: {} })))
    expect(pid).toBeGreaterThan(0)
    await writeFile(flag, '')
    const gone = listChangedUntil(s.client, (names) => !names.includes('flaky__echo'), 'flaky__echo gone')
    process.kill(pid, 'SIGKILL')
    const names = await gone
    expect(names).toEqual(expect.arrayContaining(['read_file', 'good__echo']))
    expect(textOf(await s.client.callTool({ name: 'good__echo', arguments: { text: 'still' } }))).toBe('echo: still')
    const refused = await s.client.callTool({ name: 'flaky__echo', arguments: { text: 'x' } })
    expect(refused.isError).toBe(true)

    const back = listChangedUntil(s.client, (names) => names.includes('flaky__echo'), 'flaky__echo back')
    await rm(flag)
    await back
    const again = Number(textOf(await s.client.callTool({ name: 'flaky__pid', arguments: {} })))
    expect(again).toBeGreaterThan(0)
    expect(again).not.toBe(pid)
    expect(s.stderr().match(/MCP server "flaky" is back/g)).toHaveLength(2)
    expectNoSecrets(s.stderr(), flag)
  })
})

describe('naming', () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeAll(async () => {
    ;({ dir, cleanup } = await tempDir())
  })
  afterAll(() => cleanup())

  it('issue 23, item 4: prefix "" serves an upstream under its own tool names; a custom prefix replaces the default', async () => {
    const config = await writeConfig(
      dir,
      {
        root: '.',
        servers: {
          plain: { command: process.execPath, args: [UPSTREAM], prefix: '' },
          other: { command: process.execPath, args: [UPSTREAM, '--tool-named', 'only_here'], prefix: 'o.' },
        },
      },
      'plain.json',
    )
    const s = await serveStdio(['--config', config])
    try {
      const names = (await s.client.listTools()).tools.map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(['read_file', 'echo', 'pid', 'o.only_here']))
      expect(names.some((name) => name.startsWith('plain__') || name.startsWith('other__'))).toBe(false)
      expect(textOf(await s.client.callTool({ name: 'echo', arguments: { text: 'bare' } }))).toBe('echo: bare')
      expect(textOf(await s.client.callTool({ name: 'o.only_here', arguments: {} }))).toBe('named')
    } finally {
      await s.close()
    }
  })

  it('issue 23, item 4: two servers serving the same tool name stop serve and tools, naming both', async () => {
    const config = await writeConfig(
      dir,
      {
        root: '.',
        servers: {
          first: { command: process.execPath, args: [UPSTREAM], prefix: '' },
          second: { command: process.execPath, args: [UPSTREAM], prefix: '' },
        },
      },
      'clash.json',
    )
    for (const command of ['serve', 'tools']) {
      const { code, stderr, stdout } = await runCli([command, '--config', config])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      for (const tool of ['echo', 'pid', 'slow', 'fail', 'media', 'grow'])
        expect(stderr).toMatch(
          new RegExp(
            `servers\\.(first|second): its tool "${tool}" is not served: the name "${tool}" is already served by servers\\.(first|second)`,
          ),
        )
      expect(stderr).toContain('servers.first')
      expect(stderr).toContain('servers.second')
      expectNoSecrets(stderr, 'no-flag')
    }
  })

  it('issue 23, item 4: a tool named like one of the gateway\'s own is reported against "the gateway itself"', async () => {
    const config = await writeConfig(
      dir,
      {
        root: '.',
        servers: { fs: { command: process.execPath, args: [UPSTREAM, '--tool-named', 'read_file'], prefix: '' } },
      },
      'own.json',
    )
    const { code, stderr } = await runCli(['serve', '--config', config])
    expect(code).toBe(1)
    expect(stderr).toMatch(
      /servers\.fs: its tool "read_file" is not served: the name "read_file" is already served by the gateway itself/,
    )
  })
})

describe('serve --check', () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeAll(async () => {
    ;({ dir, cleanup } = await tempDir())
  })
  afterAll(() => cleanup())

  it("issue 23, item 5: reports every upstream's state and exits 1 when one is down", async () => {
    const config = await writeConfig(
      dir,
      {
        root: '.',
        servers: {
          good: { command: process.execPath, args: [UPSTREAM] },
          ghost: { command: GHOST, args: ['--api-key', SECRET_ARG], env: { TOKEN: SECRET_ENV } },
        },
      },
      'check.json',
    )
    const { code, stdout, stderr } = await runCli(['serve', '--check', '--config', config])
    expect(code).toBe(1)
    expect(stdout).toBe(
      'servers.good: connected, 7 tools, MCP 2025-11-25\n' +
        'servers.ghost: down: MCP server "ghost" did not start: its command could not be run (ENOENT)\n',
    )
    expectNoSecrets(stdout + stderr, 'no-flag')
  })

  it('issue 23, item 4: reports a tool two servers share, and exits 0 when all is well', async () => {
    const clash = await writeConfig(
      dir,
      {
        root: '.',
        servers: {
          a: { command: process.execPath, args: [UPSTREAM, '--tool-named', 'x'] },
          b: { command: process.execPath, args: [UPSTREAM, '--tool-named', 'a__x'], prefix: '' },
        },
      },
      'check-clash.json',
    )
    const bad = await runCli(['serve', '--check', '--config', clash])
    expect(bad.code).toBe(1)
    expect(bad.stdout).toMatch(/servers\.a: connected, \d+ tools/)
    expect(bad.stdout).toMatch(/servers\.b: connected, \d+ tools/)
    expect(bad.stdout).toMatch(
      /servers\.[ab]: its tool "(a__)?x" is not served: the name "a__x" is already served by servers\.[ab]/,
    )
    const fine = await writeConfig(
      dir,
      { root: '.', servers: { a: { command: process.execPath, args: [UPSTREAM] } } },
      'check-fine.json',
    )
    const good = await runCli(['serve', '--check', '--config', fine])
    expect(good).toMatchObject({ code: 0, stdout: 'servers.a: connected, 7 tools, MCP 2025-11-25\n' })
  })
})
