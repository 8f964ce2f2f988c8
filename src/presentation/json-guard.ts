/** A plain, own-data-only object record (prototype `Object.prototype` or `null`). */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Own data property read that never runs a getter. */
export function readOwn(record: Record<string, unknown>, key: string): unknown {
  const d = Object.getOwnPropertyDescriptor(record, key)
  return d !== undefined && 'value' in d ? d.value : undefined
}
