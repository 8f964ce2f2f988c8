// Issue 23 (cold start): a stdio upstream can be spawned before the runtime loads, and the
// connection made later takes that process over instead of spawning its own; what the process did
// meanwhile (its output, a failed spawn, its exit) reaches the transport in order. The gateway's
// own JSON-RPC reading skips the SDK's schema for the common shapes without changing what is
// accepted or refused.
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { discardEarlySpawns, SpawnedStdio, spawnEarly, takeEarlySpawn } from '../../src/mcp/client/stdio-spawn.js'
import { connectMcpServer, McpToolError } from '../../src/mcp/index.js'
import { parseJsonRpcMessage, safeParseJsonRpcMessage } from '../../src/mcp/protocol/jsonrpc-message.js'
import { BIN, tempDir, writeConfig } from '../cli/helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const BOUND_MS = 20_000

const call = (name: string) => ({ callId: `c-${name}`, name, arguments: {}, signal: new AbortController().signal })

/** Resolves once `check` is true, polling; rejects after the bound. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + BOUND_MS
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.skipIf(process.platform === 'win32')('spawning a stdio server early', () => {
  it('issue 23, Performance: the connection with the same spec takes over the early process; another spec spawns its own', async () => {
    await using runtime = await createToolRuntime()
    const spec = { command: process.execPath, args: [UPSTREAM] }
    const early = spawnEarly(spec)
    expect(early?.child.pid).toBeTypeOf('number')
    const connection = await connectMcpServer(runtime.ctx, spec, { prefix: 'a__' })
    const pid = await runtime.tools.execute(call('a__pid'))
    expect(pid).toMatchObject({ isError: false, content: [{ type: 'text', text: String(early?.child.pid) }] })
    expect(takeEarlySpawn(spec)).toBeUndefined()

    // A different spec (here: an environment variable more) is not given the process started early.
    const other = spawnEarly(spec)
    const second = await connectMcpServer(runtime.ctx, { ...spec, env: { EXTRA: '1' } }, { prefix: 'b__' })
    const secondPid = await runtime.tools.execute(call('b__pid'))
    expect(secondPid.isError).toBe(false)
    expect(secondPid.content).not.toEqual([{ type: 'text', text: String(other?.child.pid) }])
    // Nobody took it: discarding stops it.
    discardEarlySpawns()
    await eventually(
      () => other?.child.exitCode !== null || other?.child.signalCode !== null,
      'the discarded server to exit',
    )
    expect(takeEarlySpawn(spec)).toBeUndefined()
    await connection.close()
    await second.close()
  })

  it('issue 23, Performance: an early spawn that failed fails the connection exactly as a spawn of its own does', async () => {
    await using runtime = await createToolRuntime()
    const spec = { command: '/nonexistent/early-mcp-server' }
    const late = await connectMcpServer(runtime.ctx, spec, { name: 'ghost' }).catch((error: unknown) => error)
    spawnEarly(spec)
    // The spawn failure has happened before the connection looks.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const early = await connectMcpServer(runtime.ctx, spec, { name: 'ghost' }).catch((error: unknown) => error)
    expect(early).toBeInstanceOf(McpToolError)
    expect((early as Error).message).toBe('MCP server "ghost" did not start: its command could not be run (ENOENT)')
    expect((early as Error).message).toBe((late as Error).message)
    expect(takeEarlySpawn(spec)).toBeUndefined()
  })

  it('issue 23, Performance: what the process did before the transport attached arrives in order, then what follows', async () => {
    const spawned = new SpawnedStdio({
      command: process.execPath,
      args: ['-e', "process.stdout.write('one\\n'); setTimeout(() => process.stdout.write('two\\n'), 10)"],
    })
    const exited = new Promise((resolve) => spawned.child.once('exit', resolve))
    await exited
    const events: string[] = []
    let closed!: () => void
    const done = new Promise<void>((resolve) => {
      closed = resolve
    })
    spawned.attach({
      spawn: () => events.push('spawn'),
      error: (error) => events.push(`error ${error.message}`),
      data: (chunk) => events.push(`data ${chunk.toString()}`),
      close: () => {
        events.push('close')
        closed()
      },
      stdinError: (error) => events.push(`stdin ${error.message}`),
      stdoutError: (error) => events.push(`stdout ${error.message}`),
    })
    await done
    expect(events[0]).toBe('spawn')
    expect(events.at(-1)).toBe('close')
    expect(
      events
        .filter((e) => e.startsWith('data '))
        .map((e) => e.slice(5))
        .join(''),
    ).toBe('one\ntwo\n')
    expect(() => spawned.attach({} as never)).toThrow(/already has a transport/)
  })

  it('issue 35: a line taken by a divert that releases it as it takes it goes nowhere, the rest on in order, however it is cut', async () => {
    // A line of 300 KB comes in several chunks of the pipe: its start is held as an unfinished line
    // when its end comes, and the release then happens inside the read of that last chunk.
    const script = `const big = '{"id":"taken","x":"' + 'x'.repeat(300000) + '"}'; process.stdout.write('before\\n' + big + '\\nafter\\nunfinished')`
    const big = `{"id":"taken","x":"${'x'.repeat(300_000)}"}`
    const spawned = new SpawnedStdio({ command: process.execPath, args: ['-e', script] })
    const taken: string[] = []
    const release = spawned.divert((line) => {
      if (!line.includes('"taken"')) return false
      release()
      taken.push(line)
      return true
    })
    let data = ''
    let closed!: () => void
    const done = new Promise<void>((resolve) => {
      closed = resolve
    })
    spawned.attach({
      spawn: () => {},
      error: () => {},
      data: (chunk) => {
        data += chunk.toString()
      },
      close: () => closed(),
      stdinError: () => {},
      stdoutError: () => {},
    })
    await done
    expect(taken).toEqual([big])
    expect(data).toBe('before\nafter\nunfinished')
  })

  it('issue 23, Performance: `toolgate serve` stops the upstream it spawned early when the gateway cannot open', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const pidFile = path.join(dir, 'pid')
      const script = `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
      const config = await writeConfig(dir, { servers: { up: { command: process.execPath, args: ['-e', script] } } })
      const child = spawn(process.execPath, [BIN, 'serve', '--config', config, '--root', path.join(dir, 'missing')], {
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      let err = ''
      child.stderr.on('data', (chunk: Buffer) => {
        err += chunk.toString()
      })
      const code = await new Promise((resolve) => child.once('exit', resolve))
      expect(code).toBe(1)
      expect(err).toContain('is not a directory')
      // The upstream had been started (it wrote its pid) and is stopped again.
      const pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'))
      if (pid !== 0) await eventually(() => !alive(pid), 'the early upstream to be stopped')
      expect(pid === 0 || !alive(pid)).toBe(true)
    } finally {
      await cleanup()
    }
  })
})

describe('reading JSON-RPC messages', () => {
  const messages: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: { a: [1, { b: null }] } } },
    { jsonrpc: '2.0', id: 'abc', method: 'tools/list' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { _meta: { progressToken: 7 }, name: 'x' } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { _meta: { progressToken: 1.5 } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2 } },
    { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'hi' }], structuredContent: { a: 1 } } },
    { jsonrpc: '2.0', id: 3, result: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } } },
    { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'no' } },
    { jsonrpc: '2.0', error: { code: -32700, message: 'parse' } },
    { jsonrpc: '2.0', id: 1.5, method: 'x' },
    { jsonrpc: '2.0', id: null, method: 'x' },
    { jsonrpc: '2.0', id: 2 ** 60, method: 'x' },
    { jsonrpc: '1.0', id: 1, method: 'x' },
    { jsonrpc: '2.0', id: 1, method: 'x', extra: true },
    { jsonrpc: '2.0', id: 1, method: 'x', params: [1] },
    { jsonrpc: '2.0', id: 1, method: 'x', params: null },
    { jsonrpc: '2.0', id: 1, result: 'text' },
    { jsonrpc: '2.0', id: 1, result: {}, method: 'x' },
    { jsonrpc: '2.0', method: 7 },
    JSON.parse('{"jsonrpc":"2.0","id":1,"method":"x","__proto__":{}}'),
    [],
    'text',
    null,
  ]

  it('issue 23, Performance: accepts and refuses exactly what the SDK schema does, returning an equal message', () => {
    for (const message of messages) {
      const schema = JSONRPCMessageSchema.safeParse(message)
      const ours = safeParseJsonRpcMessage(message)
      expect(ours.success, JSON.stringify(message)).toBe(schema.success)
      if (schema.success && ours.success) {
        expect(ours.data).toEqual(schema.data)
        expect(parseJsonRpcMessage(message)).toEqual(schema.data)
      } else expect(() => parseJsonRpcMessage(message)).toThrow()
    }
  })
})
