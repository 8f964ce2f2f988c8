// Issue 37 (item 4): SIGHUP makes `serve` re-read its config file. Real processes against the built
// CLI, the real SDK client, and real upstream MCP servers (the `slow` tool is the call in flight).
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, tempDir, textOf, writeConfig } from './helpers.js'
import { readyz, sample, scrape } from './ops-helpers.js'
import { killChildren } from './spawn-ready.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const ALICE = 'alice-token-0123456789'
const BOB = 'bob-token-0123456789'
const CAROL = 'carol-token-0123456789'

interface Running {
  child: ChildProcessWithoutNullStreams
  url: string
  port: number
  stderr: () => string
  /** Resolves once stderr has `count` matches of `pattern` (a global RegExp). */
  waitFor(pattern: RegExp, count?: number): Promise<void>
}

const children: ChildProcessWithoutNullStreams[] = []
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await killChildren(children.splice(0))
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** Wait on a growing text for `count` matches of `pattern`, failing when `ended` resolves first. */
function watcher(text: () => string, onData: (listener: () => void) => void, ended: Promise<unknown>) {
  const waiting: (() => void)[] = []
  onData(() => {
    for (const check of [...waiting]) check()
  })
  return (pattern: RegExp, count = 1) =>
    new Promise<void>((resolve, reject) => {
      const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`)
      const check = () => {
        if ((text().match(global)?.length ?? 0) < count) return
        waiting.splice(waiting.indexOf(check), 1)
        resolve()
      }
      waiting.push(check)
      check()
      void ended.then(() => reject(new Error(`toolgate exited before ${pattern}: ${text()}`)))
    })
}

/** `toolgate serve --config config` over stdio with an SDK client, and a watcher on its stderr. */
async function serveStdio(config: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', '--config', config],
    stderr: 'pipe',
  })
  let err = ''
  const listeners: (() => void)[] = []
  transport.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString()
    for (const listener of listeners) listener()
  })
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(transport)
  cleanups.push(() => client.close())
  const closed = new Promise((resolve) => {
    client.onclose = () => resolve(undefined)
  })
  const waitFor = watcher(
    () => err,
    (listener) => listeners.push(listener),
    closed,
  )
  return { client, pid: transport.pid as number, waitFor }
}

async function start(config: string): Promise<Running> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--config', config], { stdio: 'pipe' })
  children.push(child)
  let err = ''
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const waitFor = watcher(
    () => err,
    (listener) =>
      child.stderr.on('data', (chunk: Buffer) => {
        err += chunk.toString()
        listener()
      }),
    exited,
  )
  await waitFor(/serving MCP at http:\/\/127\.0\.0\.1:\d+\/mcp/)
  const port = Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(err)?.[1])
  return { child, url: `http://127.0.0.1:${port}/mcp`, port, stderr: () => err, waitFor }
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  )
  return client
}

/** Resolves on the next `notifications/tools/list_changed` the client gets. */
function nextListChanged(client: Client): Promise<void> {
  return new Promise((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()))
}

/** Start a `slow` call and resolve `started` once its first progress arrived (it is in flight at the upstream). */
function slowCall(client: Client, ms: number): { result: Promise<unknown>; started: Promise<void> } {
  let began: () => void = () => {}
  const started = new Promise<void>((resolve) => {
    began = resolve
  })
  const result = client.callTool({ name: 'up__slow', arguments: { ms } }, undefined, {
    onprogress: () => began(),
    timeout: 120_000,
  })
  return { result, started }
}

const tokens = (...who: [token: string, subject: string][]) => ({
  tokens: who.map(([token, subject]) => ({ sha256: sha256(token), subject })),
})
const upstream = (...extra: string[]) => ({ command: process.execPath, args: [UPSTREAM, ...extra] })

async function setup(config: Record<string, unknown>): Promise<{ dir: string; config: string }> {
  const { dir, cleanup } = await tempDir()
  cleanups.push(cleanup)
  return { dir, config: await writeConfig(dir, config) }
}

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort()

describe('serve reloads its config on SIGHUP (issue 37, item 4)', () => {
  it('a changed rule judges new calls while a call in flight finishes under the old one; clients hear list_changed', async () => {
    const { dir, config } = await setup({})
    // The call stays in flight across the reload until the test creates this file.
    const release = path.join(dir, 'release')
    const held = upstream('--slow-until', release)
    await writeConfig(dir, {
      files: false,
      servers: { up: held },
      auth: tokens([ALICE, 'alice']),
      policy: { rules: [{ who: { subject: ['alice'] }, allow: ['up__*'] }] },
    })
    const gateway = await start(config)
    const alice = await connect(gateway.url, ALICE)
    expect(await names(alice)).toContain('up__slow')
    const inFlight = slowCall(alice, 100)
    await inFlight.started
    let finished = false
    void inFlight.result.then(() => {
      finished = true
    })
    const changed = nextListChanged(alice)
    await writeConfig(path.dirname(config), {
      files: false,
      servers: { up: held },
      auth: tokens([ALICE, 'alice']),
      policy: { rules: [{ who: { subject: ['alice'] }, allow: ['up__*'], deny: ['up__slow'] }] },
    })
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(/config reloaded from .*toolgate\.json: policy changed/)
    await changed
    expect(await names(alice)).not.toContain('up__slow')
    const refused = (await alice.callTool({ name: 'up__slow', arguments: { ms: 1 } })) as { isError?: boolean }
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toMatch(/up__slow/)
    // The call that started before the reload was still running when the new call was refused, and succeeds.
    expect(finished).toBe(false)
    await writeFile(release, '')
    expect(textOf((await inFlight.result) as object)).toBe('slept 100, then released')
    expect(textOf(await alice.callTool({ name: 'up__echo', arguments: { text: 'hi' } }))).toBe('echo: hi')
    await alice.close()
  }, 90_000)

  it('takes new tokens, adds and removes upstreams, and reconnects only the changed one', async () => {
    const { config } = await setup({
      files: false,
      servers: { up: upstream(), gone: upstream(), moved: upstream() },
      auth: tokens([ALICE, 'alice'], [CAROL, 'carol']),
    })
    const gateway = await start(config)
    const alice = await connect(gateway.url, ALICE)
    const before = await names(alice)
    expect(before).toEqual(expect.arrayContaining(['gone__echo', 'moved__echo', 'up__echo']))
    const upPid = textOf(await alice.callTool({ name: 'up__pid', arguments: {} }))
    const movedPid = textOf(await alice.callTool({ name: 'moved__pid', arguments: {} }))
    const changed = nextListChanged(alice)
    await writeConfig(path.dirname(config), {
      files: false,
      servers: { up: upstream(), moved: upstream('--tool-named', 'moved_one'), added: upstream() },
      auth: tokens([ALICE, 'alice'], [BOB, 'bob']),
    })
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(
      /config reloaded from .*: policy unchanged; servers added: added; servers removed: gone; servers reconnected: moved; auth changed/,
    )
    await changed
    const after = await names(alice)
    expect(after).toEqual(expect.arrayContaining(['added__echo', 'moved__moved_one', 'up__echo']))
    expect(after.some((name) => name.startsWith('gone__'))).toBe(false)
    // The unchanged upstream kept its process; the changed one is a new one.
    expect(textOf(await alice.callTool({ name: 'up__pid', arguments: {} }))).toBe(upPid)
    expect(textOf(await alice.callTool({ name: 'moved__pid', arguments: {} }))).not.toBe(movedPid)
    // The removed token is refused, the added one accepted; the session opened before goes on.
    const carol = await fetch(gateway.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${CAROL}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(carol.status).toBe(401)
    const bob = await connect(gateway.url, BOB)
    expect(await names(bob)).toContain('added__echo')
    await bob.close()
    await alice.close()
  }, 90_000)

  it('closes a changed upstream only once its call in flight finished, then reconnects it', async () => {
    const { dir, config } = await setup({})
    // The call stays in flight until the test creates this file: once the reload has begun.
    const release = path.join(dir, 'release')
    await writeConfig(dir, { files: false, servers: { up: upstream('--slow-until', release) } })
    const gateway = await start(config)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
    const pid = textOf(await client.callTool({ name: 'up__pid', arguments: {} }))
    const inFlight = slowCall(client, 100)
    await inFlight.started
    await writeConfig(dir, { files: false, servers: { up: upstream('--tool-named', 'fresh') } })
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(/SIGHUP: reloading the config from/)
    await writeFile(release, '')
    // Closing the upstream under the call would end it with an error instead.
    expect(textOf((await inFlight.result) as object)).toBe('slept 100, then released')
    await gateway.waitFor(/config reloaded from .*: policy unchanged; servers reconnected: up/)
    expect(await names(client)).toContain('up__fresh')
    expect(textOf(await client.callTool({ name: 'up__pid', arguments: {} }))).not.toBe(pid)
    await client.close()
  }, 90_000)

  it('refuses a config that does not validate, logs it with its path, keeps serving the old one, and counts reloads', async () => {
    const { config } = await setup({
      files: false,
      servers: { up: upstream() },
      policy: { deny: ['up__fail'] },
    })
    const gateway = await start(config)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
    await writeFile(config, JSON.stringify({ files: false, servers: { up: upstream() }, policy: { deny: 'up__echo' } }))
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(/config reload refused/)
    const line = gateway
      .stderr()
      .split('\n')
      .find((l) => l.includes('config reload refused')) as string
    expect(line).toContain(config)
    expect(gateway.stderr()).toMatch(/policy\.deny/)
    // The old policy still serves: echo allowed, fail denied.
    expect(textOf(await client.callTool({ name: 'up__echo', arguments: { text: 'x' } }))).toBe('echo: x')
    expect(((await client.callTool({ name: 'up__fail', arguments: {} })) as { isError?: boolean }).isError).toBe(true)
    expect(await names(client)).not.toContain('up__fail')
    // Not JSON at all: refused the same way.
    await writeFile(config, '{ "servers": ')
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(/config reload refused/, 2)
    // A good one then applies.
    await writeConfig(path.dirname(config), { files: false, servers: { up: upstream() }, policy: {} })
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(/config reloaded from/)
    expect(await names(client)).toContain('up__fail')
    const families = await scrape(gateway.port)
    expect(sample(families, 'toolgate_config_reloads_total', { result: 'ok' })).toBe(1)
    expect(sample(families, 'toolgate_config_reloads_total', { result: 'refused' })).toBe(2)
    await client.close()
  }, 90_000)

  it('says which settings take a restart and keeps them', async () => {
    const { dir, config } = await setup({ files: false, servers: { up: upstream() } })
    const gateway = await start(config)
    await writeConfig(dir, { files: false, servers: { up: upstream() }, maxMessageBytes: 1048576, deferAbove: 0 })
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(/config reloaded from/)
    await gateway.waitFor(/maxMessageBytes changed in .* but take a restart; kept as they were/)
    // deferAbove is reloaded: every upstream tool now waits behind search_tools for a new session.
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
    const listed = await names(client)
    expect(listed).toContain('search_tools')
    expect(listed).not.toContain('up__echo')
    await client.close()
  }, 90_000)

  it('readiness follows the servers a reload marks required', async () => {
    const { dir, config } = await setup({ files: false, servers: { up: upstream() } })
    const gateway = await start(config)
    expect((await readyz(gateway.port)).status).toBe(200)
    const missing = path.join(dir, 'no-such-server.mjs')
    await writeConfig(dir, {
      files: false,
      servers: { up: upstream(), needed: { command: process.execPath, args: [missing], required: true } },
    })
    gateway.child.kill('SIGHUP')
    await gateway.waitFor(/config reloaded from .*servers added: needed/)
    const ready = await readyz(gateway.port)
    expect(ready.status).toBe(503)
    expect(ready.body).toMatchObject({ ready: false, notReady: ['upstreams'] })
  }, 90_000)

  it('a SIGHUP sent as soon as the first listing came (the bundle may still be loading) reloads, never ends serve', async () => {
    // This config takes the first script's early listing (one stdio upstream, no files, no policy), after
    // which the CLI's bundle loads: a SIGHUP in that window used to end the process (SIGHUP's default).
    const { config } = await setup({ files: false, servers: { up: upstream() } })
    const { client, pid, waitFor } = await serveStdio(config)
    expect(await names(client)).toContain('up__echo')
    process.kill(pid, 'SIGHUP')
    await waitFor(/config reloaded from/)
    expect(await names(client)).toContain('up__echo')
  }, 90_000)

  it('serve over stdio reloads on SIGHUP too', async () => {
    const { dir, config } = await setup({ files: false, servers: { up: upstream() } })
    const { client, pid, waitFor } = await serveStdio(config)
    expect(await names(client)).toContain('up__echo')
    const changed = nextListChanged(client)
    await writeConfig(dir, { files: false, servers: { up: upstream() }, policy: { deny: ['up__echo'] } })
    process.kill(pid, 'SIGHUP')
    await waitFor(/config reloaded from/)
    await changed
    expect(await names(client)).not.toContain('up__echo')
  }, 90_000)
})
