// Spawning the built `toolgate` CLI and talking to it with the real MCP SDK client.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'

/** The package's executable (the `bin` of package.json). */
export const BIN = path.resolve(import.meta.dirname, '../../dist/cli/bin.cjs')

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-cli-'))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 5 }) }
}

export async function writeConfig(dir: string, config: unknown, name = 'toolgate.json'): Promise<string> {
  const file = path.join(dir, name)
  await writeFile(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2))
  return file
}

export interface Connected {
  client: Client
  /** The Streamable HTTP endpoint (HTTP only). */
  url?: string
  stderr: () => string
  close: () => Promise<void>
}

/** `toolgate serve ...args` over stdio, with a connected SDK client. */
export async function serveStdio(args: string[], capabilities: Record<string, unknown> = {}): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', ...args],
    stderr: 'pipe',
  })
  let err = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString()
  })
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities })
  await client.connect(transport)
  return { client, stderr: () => err, close: () => client.close() }
}

/** `toolgate serve --http 0 ...args`, its port read from stderr, with a connected Streamable HTTP client. */
export async function serveHttp(
  args: string[],
  capabilities: Record<string, unknown> = {},
  transportOptions: StreamableHTTPClientTransportOptions = {},
): Promise<Connected> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const match = /serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  const url = `http://127.0.0.1:${port}/mcp`
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), transportOptions))
  return {
    client,
    url,
    stderr: () => err,
    close: async () => {
      await client.close()
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** A `toolgate serve --http` process that has logged its MCP endpoint. */
export interface ServeProcess {
  readonly child: ChildProcess
  /** The MCP endpoint it logged: `http://127.0.0.1:PORT/mcp`. */
  readonly url: string
  /** All it has written to stderr so far. */
  stderr(): string
}

export interface SpawnServeOptions {
  /** Added to the process's environment. */
  readonly env?: NodeJS.ProcessEnv
  /** The test's list of processes to kill: the child joins it at once, so one that never gets ready is killed too. */
  readonly children?: ChildProcess[]
  /** Each stderr chunk as it comes (a test gathering what all its gateways said). */
  readonly onStderr?: (text: string) => void
  /** What stderr must also show before the process counts as ready (the MCP endpoint always must). */
  readonly ready?: RegExp
}

/**
 * `toolgate serve ...args` (`args` name `--http`), resolved once its stderr names the MCP endpoint
 * (and matches `options.ready`); rejected with all it said when it exits before that.
 */
export function spawnServe(args: string[], options: SpawnServeOptions = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  })
  options.children?.push(child)
  let err = ''
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString()
      err += text
      options.onStderr?.(text)
      const endpoint = /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)
      if (endpoint && (options.ready === undefined || options.ready.test(err)))
        resolve({ child, url: endpoint[1], stderr: () => err })
    })
    child.once('exit', (code) => reject(new Error(`toolgate serve exited with ${code}: ${err}`)))
  })
}

/** `serve` arguments of an HTTP gateway on a free port with `config`, its vault key in `keyFile`, then `more`. */
export const vaultServeArgs = (config: string, keyFile: string, ...more: string[]): string[] => [
  '--http',
  '0',
  '--config',
  config,
  '--vault-key-file',
  keyFile,
  ...more,
]

/** Run a command of the built CLI to completion. */
export function runCli(
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env ? { env: { ...process.env, ...env } } : {}),
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    // 'exit' can come before the last of stdout/stderr is read: wait for 'close' too, but not for
    // ever (a grandchild that kept the pipes open would hold it).
    child.once('exit', (code) => {
      const settle = () => resolve({ code, stdout, stderr })
      if (child.stdout.closed && child.stderr.closed) return settle()
      const timer = setTimeout(settle, 5_000)
      child.once('close', () => {
        clearTimeout(timer)
        settle()
      })
    })
  })
}

/** The text of a CallToolResult's content. */
export function textOf(result: object): string {
  const blocks = ((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[]
  return blocks.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n')
}
