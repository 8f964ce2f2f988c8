// W3C Trace Context's `traceparent` header, read as the spec says: a malformed value is no context.

/** `version-traceid-parentid-flags`: version 00's layout (a later version may append fields). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/** A valid `traceparent`'s fields. */
export interface Traceparent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string
  /** The caller's span: 16 lowercase hex digits, not all zero. */
  readonly parentId: string
  /** The trace flags byte (bit 0: sampled). */
  readonly flags: number
}

/** The fields of `header`, or undefined when it is not a valid `traceparent` (or is not a string). */
export function parseTraceparent(header: unknown): Traceparent | undefined {
  if (typeof header !== 'string' || header.length > 512) return undefined
  const match = TRACEPARENT.exec(header)
  if (match === null) return undefined
  const [, version, traceId, parentId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ]
  // Version ff is invalid; version 00 has exactly four fields; all-zero ids are invalid.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined
  return { traceId, parentId, flags: Number.parseInt(flags, 16) }
}

/** A `tracestate` worth carrying: a string within the spec's 512 characters, else none. */
export function validTracestate(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= 512 ? value : undefined
}
