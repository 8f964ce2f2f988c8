// A card is JSON the server serializes and the page renders recursively: a value nested deeper than
// either can follow (a journaled call's arguments may be 100,000 levels deep) would blank the whole
// session. Cards therefore carry a depth-bounded preview of such a value, and a note saying so.
import type { JsonValue } from '../contract/json-value.js'
import { jsonDepthExceeds } from '../json/index.js'

/** How many levels of a call's arguments, result data or views a card shows. */
export const MAX_CARD_DEPTH = 64

/** What stands in for a container below the shown depth. */
export const DEEPER_MARK = '… (deeper levels not shown)'

/** The nesting depth of a JSON value (a scalar is 0), measured without recursion. */
export function jsonDepth(value: JsonValue): number {
  if (typeof value !== 'object' || value === null) return 0
  let deepest = 0
  const nodes: JsonValue[] = [value]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop() as JsonValue
    const depth = depths.pop() as number
    if (depth > deepest) deepest = depth
    for (const child of Array.isArray(node) ? node : Object.values(node as Record<string, JsonValue>)) {
      if (typeof child === 'object' && child !== null) {
        nodes.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return deepest
}

/** A copy of `value` in which every container deeper than `maxDepth` is replaced by {@link DEEPER_MARK}. */
export function cutJsonDepth(value: JsonValue, maxDepth: number): JsonValue {
  if (typeof value !== 'object' || value === null) return value
  if (maxDepth < 1) return DEEPER_MARK
  const copyOf = (node: JsonValue[] | { [key: string]: JsonValue }) =>
    Array.isArray(node) ? new Array<JsonValue>(node.length) : ({} as { [key: string]: JsonValue })
  const root = copyOf(value)
  const work: Array<{ from: JsonValue[] | { [key: string]: JsonValue }; to: typeof root; depth: number }> = [
    { from: value, to: root, depth: 1 },
  ]
  while (work.length > 0) {
    const { from, to, depth } = work.pop()!
    for (const [key, child] of Object.entries(from)) {
      let out: JsonValue = child
      if (typeof child === 'object' && child !== null) {
        if (depth >= maxDepth) out = DEEPER_MARK
        else {
          out = copyOf(child)
          work.push({ from: child, to: out, depth: depth + 1 })
        }
      }
      if (Array.isArray(to)) to[Number(key)] = out
      else Object.defineProperty(to, key, { value: out, enumerable: true, writable: true, configurable: true })
    }
  }
  return root
}

/**
 * A presenter's view wraps the data it shows in a few levels of its own: views get this much more
 * room, so a view of already-bounded arguments is not cut (and noted) a second time.
 */
export const VIEW_DEPTH_MARGIN = 8

/**
 * `value` itself when it nests at most `maxDepth` levels; otherwise its bounded preview, with a note
 * for the card naming what was cut.
 */
export function boundForCard<T extends JsonValue>(
  value: T,
  what: string,
  notes: string[],
  maxDepth: number = MAX_CARD_DEPTH,
): T {
  if (!jsonDepthExceeds(value, maxDepth)) return value
  notes.push(`${what} nest ${jsonDepth(value).toLocaleString('en-US')} levels deep; the first ${maxDepth} are shown`)
  return cutJsonDepth(value, maxDepth) as T
}
