// W3C Trace Context carried in an MCP request's `_meta.traceparent` (and `_meta.tracestate`): its
// trace id, so the call's log lines join the caller's trace, and the whole context, so the call's
// span is a child of the caller's. A malformed header is ignored, as the Trace Context spec says.
import { parseTraceparent, validTracestate } from '../../util/traceparent.js'

/** The trace id of `meta.traceparent`, or undefined when there is none or it is malformed. */
export function traceIdOf(meta: unknown): string | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined
  return parseTraceparent((meta as { traceparent?: unknown }).traceparent)?.traceId
}

/** `meta.traceparent` when valid, with `meta.tracestate` when that is usable; undefined otherwise. */
export function traceContextOf(meta: unknown): { traceparent: string; tracestate?: string } | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown }
  if (parseTraceparent(traceparent) === undefined) return undefined
  const state = validTracestate(tracestate)
  return { traceparent: traceparent as string, ...(state === undefined ? {} : { tracestate: state }) }
}

/** What a call takes of its request's trace context: the trace id and the context to parent its span. */
export interface CallTrace {
  readonly traceId: string
  readonly traceContext: { readonly traceparent: string; readonly tracestate?: string }
}

/**
 * `meta`'s trace context read once for a call, as traceIdOf and traceContextOf read it (so every
 * path that serves a call joins the same parent); undefined when there is none or it is malformed.
 */
export function callTraceOf(meta: unknown): CallTrace | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown }
  if (traceparent === undefined) return undefined
  const parsed = parseTraceparent(traceparent)
  if (parsed === undefined) return undefined
  const state = validTracestate(tracestate)
  return {
    traceId: parsed.traceId,
    traceContext: { traceparent: traceparent as string, ...(state === undefined ? {} : { tracestate: state }) },
  }
}
