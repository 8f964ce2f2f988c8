// Graceful drain of `serve --http` on SIGTERM. The `draining` flag lives here,
// apart from serve.ts, so that other parts (the HTTP handler, /readyz) read one source of truth.
import type { Context } from 'cordis'
import type { ToolExecutionResult } from '../contract/execution.js'
import { JsonRpcCode } from '../mcp/gateway.js'
import { directListener, fuseSignals } from '../runtime/index.js'
import { whenSettled } from '../util/when-settled.js'
import { DRAIN_FORCED_EXIT_CODE } from './drain-timeout.js'
import { takeEarlyTermination } from './early-hangup.js'

let draining = false
const listeners = new Set<() => void>()

/** True once the process was asked to stop: new requests are refused, calls in flight go on. */
export function isDraining(): boolean {
  return draining
}

/** Run `listener` when the drain starts (at once when it already has); returns how to stop listening. */
export function onDrain(listener: () => void): () => void {
  if (draining) {
    listener()
    return () => {}
  }
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** Start the drain (idempotent). */
export function startDrain(): void {
  if (draining) return
  draining = true
  for (const listener of listeners) listener()
  listeners.clear()
}

/** The seconds a `Retry-After` asks a refused client to wait: another instance should answer by then. */
export const DRAIN_RETRY_AFTER_SECONDS = 1

/** Every tool call's signal also aborts on `cancelAll`, so the calls still running when the drain times out end as cancelled. */
export function cancellableCalls(ctx: Context): { cancelAll(reason: string): void } {
  const stop = new AbortController()
  const named = (exec: { readonly name: string }): ToolExecutionResult => {
    const message = `Tool "${exec.name}" was cancelled: the gateway is shutting down (--drain-timeout passed)`
    return {
      isError: true,
      error: { message, info: { name: 'ToolAbortedError', code: 'ABORTED' } },
      content: [{ type: 'text', text: message }],
    }
  }
  // Not async: one reaction on the next listener's promise instead of a frame of its own per call.
  ctx.on(
    'tools/execute',
    directListener((exec, next) => {
      const previous = exec.signal
      // Not AbortSignal.any: `stop` lives as long as the gateway, and Node 20 keeps every dependant
      // made from it referenced (memory growing with each call); a fusion is released when the call ends.
      const fused = fuseSignals(previous, stop.signal)
      exec.signal = fused.signal
      const ended = () => {
        fused.release()
        exec.signal = previous
      }
      // An upstream answers a cancelled request with its own error: the drain's cancellation is named as one.
      return whenSettled(next, ended, (result) =>
        !stop.signal.aborted || previous.aborted || !result.isError ? result : named(exec),
      )
    }),
  )
  // An AbortError, so the pipeline reads the call as cancelled rather than failed.
  return { cancelAll: (reason) => stop.abort(new DOMException(reason, 'AbortError')) }
}

/** Counts requests in progress and tells when none is left. */
export class InFlight {
  private count = 0
  private waiters: (() => void)[] = []

  get size(): number {
    return this.count
  }

  /** Count one request; the returned function ends it (once). */
  begin(): () => void {
    this.count++
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.count--
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake()
    }
  }

  /** Resolves true when nothing is in progress, false when `ms` passes first. */
  idle(ms: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms)
      this.waiters.push(() => {
        clearTimeout(timer)
        resolve(true)
      })
    })
  }
}

/** The response to a new MCP request while draining: 503 with `Retry-After`, so the client retries elsewhere. */
export function refuseWhileDraining(
  req: { url?: string },
  res: {
    setHeader(name: string, value: string): unknown
    writeHead(status: number, headers: Record<string, string>): { end(text: string): unknown }
  },
): boolean {
  if (!draining) return false
  // Probes and metrics keep answering (/readyz says 503 itself); only the MCP endpoint is refused.
  if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') return false
  res.setHeader('connection', 'close')
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': String(DRAIN_RETRY_AFTER_SECONDS) }).end(
    JSON.stringify({
      jsonrpc: '2.0',
      error: {
        code: JsonRpcCode.ServerError,
        message: 'Service Unavailable: the gateway is shutting down; retry on another instance',
      },
      id: null,
    }),
  )
  return true
}

/**
 * Wait for the signal to stop. SIGINT (Ctrl-C) stops at once, as before. SIGTERM drains: new
 * requests are refused, those in flight get `timeoutMs` to finish, then the calls still running are
 * cancelled (their cancelled results journaled) and given a short grace to answer. A second SIGTERM
 * exits at once.
 */
export async function untilStopped(options: {
  readonly inFlight: InFlight
  readonly calls: { cancelAll(reason: string): void }
  readonly timeoutMs: number
  readonly log: { info(message: string): void }
  readonly exit?: (code: number) => void
}): Promise<void> {
  const { inFlight, calls, timeoutMs, log } = options
  const signal = await new Promise<'SIGINT' | 'SIGTERM'>((resolve) => {
    const onInt = () => {
      process.off('SIGTERM', onTerm)
      resolve('SIGINT')
    }
    const onTerm = () => {
      process.off('SIGINT', onInt)
      resolve('SIGTERM')
    }
    process.once('SIGINT', onInt)
    process.once('SIGTERM', onTerm)
    // One that came while the first script held the port (early-hangup.ts) is acted on now.
    if (takeEarlyTermination()) {
      process.off('SIGTERM', onTerm)
      onTerm()
    }
  })
  if (signal === 'SIGINT') return
  const exit = options.exit ?? ((code: number) => process.exit(code))
  process.once('SIGTERM', () => {
    log.info('second SIGTERM: exiting at once')
    exit(DRAIN_FORCED_EXIT_CODE)
  })
  startDrain()
  log.info(`draining: ${inFlight.size} request(s) in flight, up to ${timeoutMs / 1000} s (--drain-timeout)`)
  if (await inFlight.idle(timeoutMs)) return
  log.info(`drain timed out: cancelling ${inFlight.size} request(s) still in flight`)
  calls.cancelAll('the gateway is shutting down (--drain-timeout passed)')
  await inFlight.idle(CANCEL_GRACE_MS)
}

/** After cancelling, how long the cancelled calls get to answer their clients and reach the journal. */
const CANCEL_GRACE_MS = 5000
