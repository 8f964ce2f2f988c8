// A JSON value as a folded tree: objects and arrays are <details> elements (closed below the
// first level), scalars are text. Large containers show their first items and a count.
import type { ComponentChildren } from 'preact'
import type { JsonValue } from '../../contract/json-value.js'
import { html } from './html.js'
import { vis } from './text.js'

const MAX_ITEMS = 200
const MAX_STRING = 2000

function scalar(value: JsonValue): ComponentChildren {
  if (value === null) return html`<span class="j-null">null</span>`
  if (typeof value === 'boolean') return html`<span class="j-bool">${String(value)}</span>`
  if (typeof value === 'number') return html`<span class="j-num">${String(value)}</span>`
  if (typeof value === 'string') {
    const shown = value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value
    return html`<span class="j-str">${vis(JSON.stringify(shown))}</span>`
  }
  return null
}

function summary(value: JsonValue[] | { [key: string]: JsonValue }): string {
  if (Array.isArray(value)) return `[ ${value.length} ${value.length === 1 ? 'item' : 'items'} ]`
  const n = Object.keys(value).length
  return `{ ${n} ${n === 1 ? 'key' : 'keys'} }`
}

/** One JSON value; `label` is the key or index it sits under. */
export function JsonTree(props: {
  value: JsonValue
  label?: string
  depth?: number
  open?: boolean
}): ComponentChildren {
  const { value, label } = props
  const depth = props.depth ?? 0
  const key = label === undefined ? null : html`<span class="j-key">${vis(label)}</span>: `
  if (value === null || typeof value !== 'object') return html`<div class="j-row">${key}${scalar(value)}</div>`
  const entries: Array<[string, JsonValue]> = Array.isArray(value)
    ? value.slice(0, MAX_ITEMS).map((v, i) => [String(i), v])
    : Object.entries(value).slice(0, MAX_ITEMS)
  const total = Array.isArray(value) ? value.length : Object.keys(value).length
  return html`<details class="j-node" open=${props.open ?? depth === 0}>
    <summary>${key}<span class="j-sum">${summary(value)}</span></summary>
    <div class="j-children">
      ${entries.map(([k, v]) => html`<${JsonTree} key=${k} value=${v} label=${k} depth=${depth + 1} />`)}
      ${total > MAX_ITEMS ? html`<div class="j-more">… ${total - MAX_ITEMS} more</div>` : null}
    </div>
  </details>`
}
