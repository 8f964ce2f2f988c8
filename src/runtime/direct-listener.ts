// Cordis wraps every `ctx.on` listener in a Proxy that re-traces its `this` and each argument on
// every call (through the reflect service's own traced Proxy: a shadow Proxy made per call). The
// registry's dispatch `this` and its events' arguments (executions, results, `next`) carry no
// Cordis tracker, so that tracing hands each value back unchanged: for a listener marked here the
// registry calls the function itself, which was ~9% of a served gateway's CPU per tool call.

/** Where a marked listener keeps itself; the Proxy Cordis wraps it in forwards the read. */
const DIRECT = Symbol.for('toolgate.directListener')

type Marked = { [DIRECT]?: unknown }

/**
 * Mark `listener` so the registry's own dispatch (waterfalls, observers, `tools/result`) calls it
 * directly rather than through Cordis's tracing wrapper. For listeners of the registry's events
 * only: their arguments are never Cordis contexts or services.
 */
export function directListener<F extends (...args: never[]) => unknown>(listener: F): F {
  ;(listener as unknown as Marked)[DIRECT] = listener
  return listener
}

/** The function to call for a registered hook callback: the marked listener itself, or the callback. */
export function callableOf(callback: (...args: never[]) => unknown): (...args: unknown[]) => unknown {
  const marked = (callback as unknown as Marked)[DIRECT]
  return (typeof marked === 'function' ? marked : callback) as (...args: unknown[]) => unknown
}
