// A raw stdio peer of `toolgate serve` (see serve-stdio-raw-first*.test.ts): every line the gateway
// writes kept, and waited for by id, so a test sees the exact bytes of each answer.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { BIN } from './helpers.js'

/** A loaded machine may take its time; every wait is for an event, bounded by this. */
export const BOUND_MS = 60_000

export type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; result?: Record<string, unknown> }

/** The gateway as a raw stdio peer: every line it writes kept, and waited for by id. */
export class Peer {
  readonly child: ChildProcessWithoutNullStreams
  readonly received: Message[] = []
  readonly lines: string[] = []
  stderr = ''
  readonly exited: Promise<number | null>
  private waiters: { id: string | number; resolve: (m: Message) => void }[] = []

  constructor(args: string[], env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [BIN, 'serve', ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    })
    let buffer = ''
    this.child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      for (let at = buffer.indexOf('\n'); at !== -1; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at)
        buffer = buffer.slice(at + 1)
        const message = JSON.parse(line) as Message
        this.lines.push(line)
        this.received.push(message)
        for (const waiter of [...this.waiters])
          if (message.method === undefined && waiter.id === message.id) {
            this.waiters.splice(this.waiters.indexOf(waiter), 1)
            waiter.resolve(message)
          }
      }
    })
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString()
    })
    this.exited = new Promise((resolve) => this.child.once('close', (code) => resolve(code)))
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
  }

  answer(id: string | number): Promise<Message> {
    const seen = this.received.find((m) => m.id === id && m.method === undefined)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${id}; stderr: ${this.stderr}`)), BOUND_MS)
      this.waiters.push({
        id,
        resolve: (m) => {
          clearTimeout(timer)
          resolve(m)
        },
      })
    })
  }
}

export const INITIALIZE = {
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}
