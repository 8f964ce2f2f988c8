/** Bytes sniffed for a NUL to call a file binary (the same heuristic git uses). */
export const BINARY_SNIFF_BYTES = 8000

/** Whether the leading bytes of a file contain a NUL byte. */
export function looksBinary(head: Uint8Array): boolean {
  const end = Math.min(head.length, BINARY_SNIFF_BYTES)
  for (let i = 0; i < end; i++) if (head[i] === 0) return true
  return false
}
