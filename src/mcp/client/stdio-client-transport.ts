// The client side of MCP over stdio, for servers toolgate spawns: line-delimited JSON-RPC over the
// child's stdin and stdout, behaving like the MCP SDK's StdioClientTransport (same environment,
// same limit and its message, same way of closing), except that it can take over a process that
// was spawned before it existed (see stdio-spawn.ts), and that the messages of the shapes every
// call uses are checked without the SDK's schema parser.
import { parseJsonRpcMessage } from '../protocol/jsonrpc-message.js'
import type { JSONRPCMessage, McpTransport } from '../protocol/wire-types.js'
import { writeLineBatched } from '../protocol/write-line.js'
import { SpawnedStdio as Spawn, type SpawnedStdio, type StdioSpawnSpec } from './stdio-spawn.js'

const NEWLINE = 0x0a
const CR = 0x0d
/** How long close() waits for the server to exit after ending its stdin, and again after SIGTERM. */
const EXIT_GRACE_MS = 2000

export interface StdioClientTransportOptions {
  /** Largest amount of unread output kept, in bytes; more closes the transport with an error. */
  readonly maxBufferSize: number
  /** A process already spawned from the same spec, to take over instead of spawning. */
  readonly spawned?: SpawnedStdio
}

/** A stdio client transport that spawns `spec` on start (or takes over `options.spawned`). */
export class LineStdioClientTransport implements McpTransport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private process: SpawnedStdio | undefined
  private started = false
  private buffer: Buffer | undefined
  private readonly max: number
  private spawned: SpawnedStdio | undefined

  constructor(
    private readonly spec: StdioSpawnSpec,
    options: StdioClientTransportOptions,
  ) {
    this.max = options.maxBufferSize
    this.spawned = options.spawned
  }

  /** The server's process id, once started. */
  get pid(): number | null {
    return this.process?.child.pid ?? null
  }

  start(): Promise<void> {
    if (this.started) throw new Error('LineStdioClientTransport already started')
    this.started = true
    const spawned = this.spawned ?? new Spawn(this.spec)
    this.spawned = undefined
    this.process = spawned
    return new Promise((resolve, reject) => {
      spawned.attach({
        spawn: resolve,
        error: (error) => {
          reject(error)
          this.onerror?.(error)
        },
        close: () => {
          this.process = undefined
          this.onclose?.()
        },
        data: (chunk) => this.onData(chunk),
        stdinError: (error) => this.onerror?.(error),
        stdoutError: (error) => this.onerror?.(error),
      })
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.process?.child.stdin
    return stdin ? writeLineBatched(stdin, message) : Promise.reject(new Error('Not connected'))
  }

  async close(): Promise<void> {
    const closing = this.process
    this.process = undefined
    if (closing !== undefined) {
      const { child } = closing
      const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
      const grace = () =>
        Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, EXIT_GRACE_MS).unref())])
      try {
        child.stdin?.end()
      } catch {
        // already gone
      }
      await grace()
      if (child.exitCode === null) {
        try {
          child.kill('SIGTERM')
        } catch {
          // already gone
        }
        await grace()
      }
      if (child.exitCode === null) {
        try {
          child.kill('SIGKILL')
        } catch {
          // already gone
        }
      }
    }
    this.buffer = undefined
  }

  private onData(chunk: Buffer): void {
    const size = (this.buffer?.length ?? 0) + chunk.length
    if (size > this.max) {
      this.buffer = undefined
      this.onerror?.(new Error(`ReadBuffer exceeded maximum size of ${this.max} bytes`))
      this.close().catch(() => {})
      return
    }
    // Only an unfinished line is kept between chunks; a chunk of whole lines is read in place.
    const buffer = this.buffer === undefined ? chunk : Buffer.concat([this.buffer, chunk])
    this.buffer = buffer
    let at = 0
    for (;;) {
      const newline = buffer.indexOf(NEWLINE, at)
      if (newline === -1) break
      const end = newline > at && buffer[newline - 1] === CR ? newline - 1 : newline
      const line = buffer.toString('utf8', at, end)
      at = newline + 1
      // A line that is not a JSON-RPC message (or a handler that throws) is reported; reading goes on.
      try {
        this.onmessage?.(parseJsonRpcMessage(JSON.parse(line)))
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)))
      }
      // A handler may have closed the transport, which drops what is left.
      if (this.buffer !== buffer) return
    }
    this.buffer = at === buffer.length ? undefined : at === 0 ? buffer : buffer.subarray(at)
  }
}
