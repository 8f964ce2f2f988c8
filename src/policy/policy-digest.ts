// The digest that names a policy's version: a SHA-256 of the document in a canonical form (keys
// sorted), so the same policy gives the same digest in the library, the gateway and every instance.
import { createHash } from 'node:crypto'

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    )
  return value
}

/** `sha256:` and the hex digest of `document`'s canonical JSON. */
export function policyDigest(document: unknown): string {
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(canonical(document)))
    .digest('hex')}`
}
