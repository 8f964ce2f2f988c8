// The page: a toolbar with filters (agent, tool, status) and a search box over a list of cards.
import { useEffect, useMemo, useState } from 'preact/hooks'
import { type CardRow, STATUS_KINDS, type StatusKind, type TurnView } from '../model.js'
import { Card, type DecideHandler } from './card.js'
import { html } from './html.js'
import { vis } from './text.js'
import { conversationItems, isBlock, type ListItem, StepBlock, TurnHeader } from './turn.js'
import { VirtualList } from './virtual-list.js'

export interface AppProps {
  title: string
  cards: CardRow[]
  /** The conversation's turns by id, when the model loop journaled them. */
  turns?: ReadonlyMap<string, TurnView>
  /** Changes whenever `cards` or `turns` do (both may be updated in place). */
  version?: number
  approve: boolean
  /** `live`, `reconnecting` or `static`. */
  connection: string
  onDecide?: DecideHandler
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
/** Search is over the card's whole JSON, case-insensitively (not cached: that would double the page's memory). */
function haystack(card: CardRow): string {
  return card.json.toLowerCase()
}

/** Up to this many top-level calls, a filter is applied at once; past it, in slices between frames. */
const FILTER_AT_ONCE = 2000
/** How long one slice of a filter may run, in ms. */
const SLICE_MS = 30

/**
 * The top-level calls a filter keeps. Over a large session the filter runs in slices of at most
 * SLICE_MS, each in its own task, so typing in the search box never freezes the page; the list
 * fills in as the slices finish.
 */
function useFiltered(roots: CardRow[], keep: ((c: CardRow) => boolean) | null) {
  const small = keep === null || roots.length <= FILTER_AT_ONCE
  const now = useMemo(() => (small ? (keep === null ? roots : roots.filter(keep)) : null), [small, roots, keep])
  const [sliced, setSliced] = useState<{ shown: CardRow[]; done: boolean }>({ shown: [], done: true })
  useEffect(() => {
    if (small || keep === null) return
    let cancelled = false
    let i = 0
    const shown: CardRow[] = []
    setSliced({ shown: [], done: false })
    const slice = () => {
      if (cancelled) return
      const until = performance.now() + SLICE_MS
      while (i < roots.length && performance.now() < until) {
        const c = roots[i++]
        if (keep(c)) shown.push(c)
      }
      setSliced({ shown: shown.slice(), done: i >= roots.length })
      if (i < roots.length) setTimeout(slice, 0)
    }
    const timer = setTimeout(slice, 0)
    return () => {
      cancelled = true
      clearTimeout(timer)
    }
  }, [small, roots, keep])
  return now !== null ? { shown: now, done: true } : sliced
}

export function App(props: AppProps) {
  const [agent, setAgent] = useState('')
  const [caller, setCaller] = useState('')
  const [tool, setTool] = useState('')
  const [status, setStatus] = useState('')
  const [query, setQuery] = useState('')
  const { cards } = props

  const { children, roots } = useMemo(() => {
    const ids = new Set(cards.map((c) => c.id))
    const map = new Map<string, CardRow[]>()
    // A sub-call whose parent is not in the journal is shown at the top level rather than lost.
    const top: CardRow[] = []
    for (const c of cards) {
      if (c.parentId === null || !ids.has(c.parentId)) {
        top.push(c)
        continue
      }
      const list = map.get(c.parentId)
      if (list === undefined) map.set(c.parentId, [c])
      else list.push(c)
    }
    return { children: map, roots: top }
  }, [cards, props.version])

  const q = query.trim().toLowerCase()
  const filtering = agent !== '' || caller !== '' || tool !== '' || status !== '' || q !== ''
  const selfMatches = useMemo(
    () =>
      (c: CardRow): boolean =>
        (agent === '' || (agent === NO_AGENT ? c.agent === null : c.agent === agent)) &&
        (caller === '' || (caller === NO_AGENT ? c.caller === null : c.caller === caller)) &&
        (tool === '' || c.tool === tool) &&
        (status === '' || c.status === status) &&
        (q === '' || haystack(c).includes(q)),
    [agent, caller, tool, status, q],
  )
  const matches = useMemo(() => {
    const test = (c: CardRow): boolean => selfMatches(c) || (children.get(c.id) ?? []).some((s) => test(s))
    return test
  }, [selfMatches, children])
  // Under a filter, a parent shows all its sub-calls when it matches itself, else only matching ones.
  const visible = (parent: CardRow, child: CardRow): boolean => !filtering || selfMatches(parent) || matches(child)
  const { shown, done } = useFiltered(roots, filtering ? matches : null)
  // Unfiltered, calls are drawn under their turn and step; a filter shows the matching calls alone.
  const { items, homes } = useMemo(
    () => conversationItems(shown, filtering ? undefined : props.turns),
    [shown, filtering, props.turns, props.version],
  )

  const { agents, callers, tools, statuses } = useMemo(() => {
    const kinds = new Set<string>()
    const agentSet = new Set<string>()
    const callerSet = new Set<string>()
    const toolSet = new Set<string>()
    for (const c of cards) {
      kinds.add(c.status)
      agentSet.add(c.agent ?? NO_AGENT)
      callerSet.add(c.caller ?? NO_AGENT)
      toolSet.add(c.tool)
    }
    return {
      agents: [...agentSet].sort(),
      callers: [...callerSet].sort(),
      tools: [...toolSet].sort(),
      statuses: STATUS_KINDS.filter((k: StatusKind) => kinds.has(k)),
    }
  }, [cards, props.version])

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
      ${
        callers.some((c) => c !== NO_AGENT)
          ? html`<label>caller
        <select id="filter-caller" value=${caller} onChange=${(e: Event) => setCaller((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          ${callers.map((a) => html`<option value=${a}>${a === NO_AGENT ? '(none)' : vis(a)}</option>`)}
        </select>
      </label>`
          : null
      }
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
      <span class="count" id="card-count">${shown.length} / ${roots.length} calls${done ? '' : ' (searching…)'}</span>
    </header>
    ${
      cards.length === 0
        ? html`<main class="cards"><p class="empty">No calls in this journal yet.</p></main>`
        : html`<${VirtualList}
            className="cards"
            items=${items}
            row=${(item: ListItem) =>
              !isBlock(item)
                ? html`<${Card}
                    key=${item.id}
                    row=${item}
                    children=${children}
                    approve=${props.approve}
                    onDecide=${props.onDecide}
                    notices=${props.notices}
                    visible=${visible}
                    turn=${homes.get(item.id) ?? null}
                  />`
                : item.kind === 'turn'
                  ? html`<${TurnHeader} key=${item.id} id=${item.id} turn=${item.turn} />`
                  : html`<${StepBlock} key=${item.id} id=${item.id} turn=${item.turn} step=${item.step} />`}
          />`
    }
  </div>`
}
