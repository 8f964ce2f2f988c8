// `serve` over stdio spoken to in raw MCP 2026-07-28 lines, for tests that need to send what an SDK
// client would not (a tampered or replayed requestState). Shared by the stdio program tests.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { BIN } from './helpers.js'
import { type ModernReply, RAW_ENVELOPE } from './raw-modern-call.js'

export interface RawStdioServe {
  /** Sends one request with the raw envelope; resolves with its answer, or rejects after `boundMs`. */
  request(method: string, params: Record<string, unknown>): Promise<ModernReply>
}

/**
 * Spawns `serve` with `args` (after `serve`) and pushes the child onto `children`, for the caller's
 * clean-up. Each request waits for its answer by id, bounded by `boundMs` (the error carries stderr).
 */
export function rawStdioServe(
  args: string[],
  children: ChildProcessWithoutNullStreams[],
  options: { env?: Record<string, string>; boundMs: number },
): RawStdioServe {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: 'pipe', env: options.env })
  children.push(child)
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const waiting = new Map<number, (reply: ModernReply | Error) => void>()
  createInterface({ input: child.stdout }).on('line', (line) => {
    const reply = JSON.parse(line) as ModernReply
    if (typeof reply.id === 'number') waiting.get(reply.id)?.(reply)
  })
  // A serve that exits early closes its stdin, and a write then fails with EPIPE: that error is kept
  // and fails the requests still waiting once all it wrote has been read, instead of the whole run.
  let writeError: Error | undefined
  child.stdin.on('error', (error) => {
    writeError = error
  })
  child.once('close', (code) => {
    const error = new Error(`serve exited with ${code}${writeError ? ` (${writeError.message})` : ''}: ${stderr}`)
    for (const fail of [...waiting.values()]) fail(error)
  })
  let serial = 0
  return {
    request(method, params) {
      const id = ++serial
      return new Promise<ModernReply>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no answer to ${method} within ${options.boundMs} ms: ${stderr}`)),
          options.boundMs,
        )
        waiting.set(id, (reply) => {
          clearTimeout(timer)
          waiting.delete(id)
          if (reply instanceof Error) reject(reply)
          else resolve(reply)
        })
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: RAW_ENVELOPE } })}\n`,
        )
      })
    },
  }
}
