import type { JsonValue } from '../contract/json-value.js'

/**
 * Whether a JSON value nests containers (objects and arrays) deeper than `limit`. Iterative, so a
 * 100,000-deep value is measured without touching the call stack; stops at the first too-deep path.
 */
export function jsonDepthExceeds(value: JsonValue, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  const nodes: JsonValue[] = [value]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop() as JsonValue
    const depth = depths.pop() as number
    if (depth > limit) return true
    const children = Array.isArray(node) ? node : Object.values(node as Record<string, JsonValue>)
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        nodes.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return false
}
