// W3C Trace Context carried in an MCP request's `_meta.traceparent`: its trace id, so the call's log
// lines join the caller's trace. A malformed header is ignored, as the Trace Context spec says.

/** `version-traceid-parentid-flags`: version 00's layout (a later version may append fields). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/** The trace id of `meta.traceparent`, or undefined when there is none or it is malformed. */
export function traceIdOf(meta: unknown): string | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined
  const header = (meta as { traceparent?: unknown }).traceparent
  if (typeof header !== 'string' || header.length > 512) return undefined
  const match = TRACEPARENT.exec(header)
  if (match === null) return undefined
  const [, version, traceId, parentId, , rest] = match
  // Version ff is invalid; version 00 has exactly four fields; all-zero ids are invalid.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (/^0+$/.test(traceId as string) || /^0+$/.test(parentId as string)) return undefined
  return traceId
}
