// Issue 37 (items 3 and 5): `serve --http` drains on SIGTERM, and `--log-format json` writes one
// JSON object per stderr line. Real processes against the built CLI, the real SDK client, and a
// real upstream MCP server whose `slow` tool is the call in flight.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, describe, expect, it } from 'vitest'
import { readJournal } from '../../src/journal/read-journal.js'
import type { JournalRecord } from '../../src/journal/records.js'
import { BIN, runCli, tempDir, textOf, writeConfig } from './helpers.js'
import { killChildren } from './spawn-ready.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

interface Running {
  child: ChildProcessWithoutNullStreams
  url: string
  stderr: () => string
  exited: Promise<number | null>
  /** Resolves once stderr has a line matching `pattern`. */
  waitFor(pattern: RegExp): Promise<void>
}

const children: ChildProcessWithoutNullStreams[] = []
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await killChildren(children.splice(0))
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function start(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', ...args], { stdio: 'pipe' })
  children.push(child)
  let err = ''
  const watchers: { pattern: RegExp; wake: () => void }[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString()
    for (const watcher of [...watchers])
      if (watcher.pattern.test(err)) {
        watchers.splice(watchers.indexOf(watcher), 1)
        watcher.wake()
      }
  })
  const waitFor = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      if (pattern.test(err)) return resolve()
      watchers.push({ pattern, wake: resolve })
      void exited.then(() => reject(new Error(`toolgate exited before ${pattern}: ${err}`)))
    })
  await waitFor(/serving MCP at http:\/\/127\.0\.0\.1:\d+\/mcp/)
  const port = /127\.0\.0\.1:(\d+)\/mcp/.exec(err)?.[1]
  return { child, url: `http://127.0.0.1:${port}/mcp`, stderr: () => err, exited, waitFor }
}

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' })
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

async function setup(extra: Record<string, unknown> = {}): Promise<{ dir: string; config: string; journal: string }> {
  const { dir, cleanup } = await tempDir()
  cleanups.push(cleanup)
  const journal = path.join(dir, 'journal.jsonl')
  const config = await writeConfig(dir, {
    servers: { up: { command: process.execPath, args: [UPSTREAM] } },
    journal,
    ...extra,
  })
  return { dir, config, journal }
}

/** Start a `slow` call and resolve once its first progress arrived (it is in flight at the upstream). */
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

async function newRequest(url: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'late', version: '1' } },
    }),
  })
}

describe('serve --http drains on SIGTERM (issue 37, item 3)', () => {
  it('lets a call in flight finish and answer its client, then exits 0', async () => {
    const { config } = await setup()
    const gateway = await start(['--config', config])
    const client = await connect(gateway.url)
    const call = slowCall(client, 2500)
    await call.started
    gateway.child.kill('SIGTERM')
    await gateway.waitFor(/draining: 1 request/)
    const result = await call.result
    expect(textOf(result as object)).toBe('slept 2500')
    expect(await gateway.exited).toBe(0)
  }, 60_000)

  it('refuses new requests with 503 and Retry-After, cancels what outlives --drain-timeout and journals it', async () => {
    const { config, journal } = await setup()
    const gateway = await start(['--config', config, '--drain-timeout', '1'])
    const client = await connect(gateway.url)
    const call = slowCall(client, 60_000)
    await call.started
    gateway.child.kill('SIGTERM')
    await gateway.waitFor(/draining: 1 request/)
    const refused = await newRequest(gateway.url)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    // The health endpoints are not the MCP endpoint: they are not refused by the drain.
    expect((await fetch(gateway.url.replace('/mcp', '/nothing'))).status).toBe(404)
    // Readiness turns at once, so a load balancer stops sending; liveness stays.
    const ready = await fetch(gateway.url.replace('/mcp', '/readyz'))
    expect(ready.status).toBe(503)
    expect(await ready.json()).toMatchObject({ ready: false, notReady: ['draining'] })
    expect((await fetch(gateway.url.replace('/mcp', '/healthz'))).status).toBe(200)
    const result = (await call.result) as { isError?: boolean }
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/was cancelled: the gateway is shutting down/)
    expect(await gateway.exited).toBe(0)
    expect(gateway.stderr()).toMatch(/drain timed out: cancelling 1 request/)
    const records: JournalRecord[] = []
    for await (const record of readJournal(journal)) records.push(record)
    const ended = records.find((r) => r.type === 'result' && r.toolName === 'up__slow')
    expect(ended).toMatchObject({ result: { isError: true, error: { info: { code: 'ABORTED' } } } })
  }, 60_000)

  it('exits at once on a second SIGTERM', async () => {
    const { config } = await setup()
    const gateway = await start(['--config', config])
    const client = await connect(gateway.url)
    const call = slowCall(client, 60_000)
    call.result.catch(() => {})
    await call.started
    gateway.child.kill('SIGTERM')
    await gateway.waitFor(/draining: 1 request/)
    gateway.child.kill('SIGTERM')
    // The default --drain-timeout is 30 s and the call 60 s: only the second signal ends it here.
    expect(await gateway.exited).toBe(143)
    expect(gateway.stderr()).toMatch(/second SIGTERM/)
  }, 20_000)

  it('refuses a bad --drain-timeout, --log-format or --log-level with the flag named', async () => {
    for (const [flag, value] of [
      ['--drain-timeout', 'soon'],
      ['--drain-timeout', '99999999'],
      ['--log-format', 'xml'],
      ['--log-level', 'loud'],
    ] as const) {
      const run = await runCli(['serve', '--http', '0', flag, value])
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`${flag}: expected`)
      expect(run.stderr).toContain(`"${value}"`)
    }
  }, 60_000)
})

describe('serve --log-format json (issue 37, item 5)', () => {
  it('writes one JSON object per stderr line, with the call fields and never the token or arguments', async () => {
    const token = 'secret-bearer-token-1234'
    const { config } = await setup({ auth: { tokens: [{ sha256: sha256(token), subject: 'alice' }] } })
    const gateway = await start(['--config', config, '--log-format', 'json'])
    const client = await connect(gateway.url, token)
    const echoed = await client.callTool({ name: 'up__echo', arguments: { text: 'private-argument-text' } })
    expect(textOf(echoed)).toBe('echo: private-argument-text')
    await client.callTool({ name: 'up__fail', arguments: {} })
    // The caller's W3C trace context in `_meta` names the trace in the call's line; a malformed one is ignored.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    await client.callTool({
      name: 'up__echo',
      arguments: { text: 'traced' },
      _meta: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    })
    await client.callTool({
      name: 'up__echo',
      arguments: { text: 'untraced' },
      _meta: { traceparent: `00-${traceId}-0000000000000000-01` },
    })
    await client.close()
    gateway.child.kill('SIGTERM')
    expect(await gateway.exited).toBe(0)
    const lines = gateway
      .stderr()
      .split('\n')
      .filter((line) => line !== '')
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    for (const entry of parsed) {
      expect(typeof entry.time).toBe('string')
      expect(Number.isNaN(Date.parse(String(entry.time)))).toBe(false)
      expect(['debug', 'info', 'warn', 'error']).toContain(entry.level)
      expect(typeof entry.msg).toBe('string')
    }
    const echo = parsed.find((entry) => entry.tool === 'up__echo')
    expect(echo).toMatchObject({ level: 'info', subject: 'alice', outcome: 'ok' })
    expect(typeof echo?.callId).toBe('string')
    expect(parsed.find((entry) => entry.tool === 'up__fail')).toMatchObject({ outcome: 'error', subject: 'alice' })
    const echoes = parsed.filter((entry) => entry.tool === 'up__echo')
    expect(echoes.map((entry) => entry.traceId)).toEqual([undefined, traceId, undefined])
    expect(gateway.stderr()).not.toContain(token)
    expect(gateway.stderr()).not.toContain('private-argument-text')
  }, 60_000)

  it('keeps the text format by default and --log-level warn hides the info lines but not the address', async () => {
    const { config } = await setup()
    const gateway = await start(['--config', config, '--log-level', 'warn'])
    // One round trip first, so the signal reaches a process that is serving.
    await (await connect(gateway.url)).close()
    gateway.child.kill('SIGTERM')
    expect(await gateway.exited).toBe(0)
    expect(gateway.stderr()).toMatch(/^toolgate: serving MCP at http:\/\/127\.0\.0\.1:\d+\/mcp\n$/)
  }, 60_000)
})
