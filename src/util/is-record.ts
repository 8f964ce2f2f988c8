/**
 * Whether a value is a non-null, non-array object: the first narrowing of untrusted JSON-ish input
 * (its fields are still unknown). `T` names the shape the caller goes on to check field by field.
 */
export function isRecord<T extends object = Record<string, unknown>>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
