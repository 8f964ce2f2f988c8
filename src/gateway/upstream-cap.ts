// One cap on the calls of upstream servers' tools in progress at once, across every caller of the
// gateway: a crowd of clients queues at the gateway instead of piling onto the servers behind it.
import type { Context } from 'cordis'
import { directListener } from '../runtime/index.js'
import { whenSettled } from '../util/when-settled.js'
import type { Gateway } from './gateway.js'
import { Semaphore } from './http-limits.js'
import { upstreamOf } from './upstream-of.js'

/** Install the cap on `gateway`: calls of upstream tools beyond `max` wait for a free slot (or their cancellation). */
export function capUpstreamCalls(gateway: Pick<Gateway, 'connections'>, ctx: Context, max: number): void {
  const slots = new Semaphore(max)
  // Not async: with a slot free (the usual case) the call takes it and goes on in the same turn.
  ctx.on(
    'tools/execute',
    directListener((exec, next) => {
      if (upstreamOf(gateway.connections, exec.name) === undefined) return next()
      const free = slots.tryAcquire()
      if (free !== undefined) return whenSettled(next, free)
      return slots.acquire(exec.signal).then((release) =>
        // Cancelled while waiting: the call goes on with its aborted signal and ends as a cancellation
        // without reaching the server.
        release === undefined ? next() : whenSettled(next, release),
      )
    }),
  )
}
