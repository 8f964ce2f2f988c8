// The page: a toolbar with filters (agent, tool, status) and a search box over a list of cards.
import { useMemo, useState } from 'preact/hooks'
import { type SessionCard, STATUS_KINDS, type StatusKind } from '../model.js'
import { Card } from './card.js'
import { html } from './html.js'
import { vis } from './text.js'

export interface AppProps {
  title: string
  cards: SessionCard[]
  approve: boolean
  /** `live`, `reconnecting` or `static`. */
  connection: string
  onDecide?: (id: string, decision: 'approve' | 'deny') => void
  notices?: ReadonlyMap<string, string>
}

const NO_AGENT = '\u0000none'
const STATUS_LABELS: Record<StatusKind, string> = {
  ok: 'ok',
  error: 'error',
  denied: 'denied',
  'timed-out': 'timed out',
  aborted: 'aborted',
  running: 'running',
  'awaiting-approval': 'awaiting approval',
}
const haystacks = new WeakMap<SessionCard, string>()

function haystack(card: SessionCard): string {
  let text = haystacks.get(card)
  if (text === undefined) {
    text = JSON.stringify(card).toLowerCase()
    haystacks.set(card, text)
  }
  return text
}

function distinct(values: string[]): string[] {
  return [...new Set(values)].sort()
}

export function App(props: AppProps) {
  const [agent, setAgent] = useState('')
  const [tool, setTool] = useState('')
  const [status, setStatus] = useState('')
  const [query, setQuery] = useState('')
  const { cards } = props

  const children = useMemo(() => {
    const map = new Map<string, SessionCard[]>()
    const ids = new Set(cards.map((c) => c.id))
    for (const c of cards) {
      if (c.parentId === null || !ids.has(c.parentId)) continue
      const list = map.get(c.parentId)
      if (list === undefined) map.set(c.parentId, [c])
      else list.push(c)
    }
    return map
  }, [cards])
  const ids = useMemo(() => new Set(cards.map((c) => c.id)), [cards])
  // A sub-call whose parent is not in the journal is shown at the top level rather than lost.
  const roots = cards.filter((c) => c.parentId === null || !ids.has(c.parentId))

  const q = query.trim().toLowerCase()
  const selfMatches = (c: SessionCard): boolean =>
    (agent === '' || (agent === NO_AGENT ? c.agent === null : c.agent === agent)) &&
    (tool === '' || c.tool === tool) &&
    (status === '' || c.status.kind === status) &&
    (q === '' || haystack(c).includes(q))
  const matches = (c: SessionCard): boolean => selfMatches(c) || (children.get(c.id) ?? []).some((s) => matches(s))
  const filtering = agent !== '' || tool !== '' || status !== '' || q !== ''
  // Under a filter, a parent shows all its sub-calls when it matches itself, else only matching ones.
  const visible = (parent: SessionCard, child: SessionCard): boolean =>
    !filtering || selfMatches(parent) || matches(child)
  const shown = roots.filter((c) => !filtering || matches(c))

  const agents = distinct(cards.map((c) => c.agent ?? NO_AGENT))
  const tools = distinct(cards.map((c) => c.tool))
  const statuses = STATUS_KINDS.filter((k: StatusKind) => cards.some((c) => c.status.kind === k))

  return html`<div class="app">
    <header class="toolbar">
      <h1>${vis(props.title)}</h1>
      <span class=${`connection ${props.connection}`}>${props.connection}</span>
      <label>agent
        <select id="filter-agent" value=${agent} onChange=${(e: Event) => setAgent((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          ${agents.map((a) => html`<option value=${a}>${a === NO_AGENT ? '(none)' : vis(a)}</option>`)}
        </select>
      </label>
      <label>tool
        <select id="filter-tool" value=${tool} onChange=${(e: Event) => setTool((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          ${tools.map((t) => html`<option value=${t}>${vis(t)}</option>`)}
        </select>
      </label>
      <label>status
        <select id="filter-status" value=${status} onChange=${(e: Event) => setStatus((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          ${statuses.map((s) => html`<option value=${s}>${STATUS_LABELS[s]}</option>`)}
        </select>
      </label>
      <input
        id="search"
        type="search"
        placeholder="search"
        value=${query}
        onInput=${(e: Event) => setQuery((e.target as HTMLInputElement).value)}
      />
      <span class="count" id="card-count">${shown.length} / ${roots.length} calls</span>
    </header>
    <main class="cards">
      ${
        cards.length === 0
          ? html`<p class="empty">No calls in this journal yet.</p>`
          : shown.map(
              (c) =>
                html`<${Card}
                  key=${c.id}
                  card=${c}
                  children=${children}
                  approve=${props.approve}
                  onDecide=${props.onDecide}
                  notices=${props.notices}
                  visible=${visible}
                />`,
            )
      }
    </main>
  </div>`
}
