type Frame =
  | { readonly kind: 'array'; readonly items: readonly unknown[]; i: number }
  | { readonly kind: 'object'; readonly record: Record<string, unknown>; readonly keys: string[]; i: number }

/**
 * A one-line JSON preview of `value`, cut at `maxChars` with `…`. Iterative with an
 * explicit work stack and stops at the budget, so a huge or 100,000-level-deep value
 * costs only what is shown. Non-JSON leaves print as `String(value)` (it is a preview).
 */
export function previewJson(value: unknown, maxChars = 400): string {
  let out = ''
  const stack: Frame[] = []
  let pending: unknown = value
  let hasPending = true
  while (out.length <= maxChars) {
    if (hasPending) {
      hasPending = false
      if (Array.isArray(pending)) {
        out += '['
        stack.push({ kind: 'array', items: pending, i: 0 })
      } else if (pending !== null && typeof pending === 'object') {
        out += '{'
        const record = pending as Record<string, unknown>
        stack.push({ kind: 'object', record, keys: Object.keys(record), i: 0 })
      } else {
        out += scalar(pending, maxChars)
      }
      continue
    }
    const top = stack[stack.length - 1]
    if (top === undefined) return out
    if (top.kind === 'array') {
      if (top.i >= top.items.length) {
        out += ']'
        stack.pop()
        continue
      }
      if (top.i > 0) out += ','
      pending = top.items[top.i++]
    } else {
      if (top.i >= top.keys.length) {
        out += '}'
        stack.pop()
        continue
      }
      if (top.i > 0) out += ','
      const key = top.keys[top.i++]
      out += `${JSON.stringify(key.length > maxChars ? key.slice(0, maxChars) : key)}:`
      pending = top.record[key]
    }
    hasPending = true
  }
  return `${out.slice(0, maxChars)}…`
}

function scalar(value: unknown, maxChars: number): string {
  if (typeof value === 'string') return JSON.stringify(value.length > maxChars ? value.slice(0, maxChars + 1) : value)
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null'
  if (value === null || typeof value === 'boolean') return String(value)
  return String(typeof value === 'symbol' ? value.toString() : value)
}
