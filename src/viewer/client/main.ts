// Entry of the viewer page. A static file carries the session in a JSON data block; a served page
// gets it from the server's event stream (a `snapshot`, then `cards` updates as the journal grows).
import { render } from 'preact'
import type { CardRow, CardRowHeader, SessionCard, SessionSnapshot, TurnView } from '../model.js'
import { App } from './app.js'
import { type DecisionChoice, type DecisionTarget, SENDING } from './card.js'
import { html } from './html.js'

const DATA_ID = 'toolgate-session'
/** The class of the static file's card blocks (`CARD_BLOCK_CLASS` of page.ts). */
const CARD_BLOCK_CLASS = 'toolgate-cards'

interface State {
  title: string
  approve: boolean
  connection: string
  byId: Map<string, CardRow>
  cards: CardRow[]
  /** The conversation's turns, by id (a journal without model-side records has none). */
  turns: Map<string, TurnView>
  /** Bumped whenever `cards` or `turns` change, also in place. */
  version: number
}

const state: State = {
  title: 'toolgate session',
  approve: false,
  connection: 'static',
  byId: new Map(),
  cards: [],
  turns: new Map(),
  version: 0,
}
const root = document.getElementById('app')!
let approvalToken = ''
/** What became of decisions sent from this page, by call id (cleared when one is recorded). */
const notices = new Map<string, string>()

function sorted(byId: Map<string, CardRow>): CardRow[] {
  return [...byId.values()].sort((a, b) => a.seq - b.seq)
}

/** Paints at most this often while a large session streams in, in ms. */
const PAINT_GAP_MS = 100
let paintTimer: ReturnType<typeof setTimeout> | undefined
let lastPaint = 0
/** How long the last paint took: the next waits at least three times that, so painting a large
 * session never takes more than a quarter of the main thread while it streams in. */
let paintCost = 0

/**
 * Paint soon, coalescing: a large session arrives as many `cards` messages, and painting once per
 * message would redo the page's per-session work for each of them.
 */
function schedulePaint(): void {
  if (paintTimer !== undefined) return
  const wait = Math.max(0, lastPaint + Math.max(PAINT_GAP_MS, 3 * paintCost) - performance.now())
  paintTimer = setTimeout(() => {
    paintTimer = undefined
    paint()
  }, wait)
}

function paint(): void {
  if (paintTimer !== undefined) {
    clearTimeout(paintTimer)
    paintTimer = undefined
  }
  const started = performance.now()
  render(
    html`<${App}
      title=${state.title}
      cards=${state.cards}
      turns=${state.turns}
      version=${state.version}
      approve=${state.approve}
      connection=${state.connection}
      onDecide=${decide}
      notices=${notices}
    />`,
    root,
  )
  lastPaint = performance.now()
  paintCost = lastPaint - started
}

/** A card of the static file's data block as a row (the served page gets rows from the stream). */
function rowOf(card: SessionCard): CardRow {
  const { id, seq, parentId, agent, tool } = card
  const caller = card.caller ?? null
  return { id, seq, parentId, agent, tool, status: card.status.kind, caller, json: JSON.stringify(card) }
}

/** An event's data: the head's JSON line, then per card its row header line and its JSON line. */
function decode(data: string): { head: Record<string, unknown>; rows: CardRow[] } {
  const lines = data.split('\n')
  const rows: CardRow[] = []
  for (let i = 1; i + 1 < lines.length; i += 2) {
    const [id, seq, parentId, agent, tool, status, caller] = JSON.parse(lines[i]) as CardRowHeader
    rows.push({ id, seq, parentId, agent, tool, status, caller: caller ?? null, json: lines[i + 1] })
  }
  return { head: JSON.parse(lines[0]) as Record<string, unknown>, rows }
}

/** New or changed turns (a `turns` event's lines after the head, or a static file's list). */
function applyTurns(turns: readonly TurnView[]): void {
  for (const turn of turns) state.turns.set(turn.id, turn)
  state.version++
  schedulePaint()
}

function applySnapshot(title: string, approve: boolean, rows: CardRow[]): void {
  state.title = title
  state.approve = approve
  state.turns = new Map()
  state.byId = new Map(rows.map((c) => [c.id, c]))
  state.cards = sorted(state.byId)
  state.version++
  document.title = `${title} · toolgate`
  paint()
}

function applyRows(rows: CardRow[]): void {
  // Rows mostly arrive in journal order: append new ones, replace known ones in place, and sort
  // only when one arrives out of order.
  const cards = state.cards
  let last = cards.length > 0 ? cards[cards.length - 1].seq : -1
  let inOrder = true
  for (const card of rows) {
    const known = state.byId.get(card.id)
    state.byId.set(card.id, card)
    if (known !== undefined && known.seq === card.seq) {
      const at = positionOf(cards, known.seq)
      if (at !== -1 && cards[at].id === card.id) {
        cards[at] = card
        continue
      }
      inOrder = false
    } else if (known !== undefined || card.seq <= last) inOrder = false
    else {
      cards.push(card)
      last = card.seq
    }
  }
  // Changed in place (a copy per message would cost O(n) each); the version tells the page.
  state.cards = inOrder ? cards : sorted(state.byId)
  state.version++
  schedulePaint()
}

/** Where the row with `seq` sits in `cards` (sorted by seq), or -1. */
function positionOf(cards: CardRow[], seq: number): number {
  let lo = 0
  let hi = cards.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (cards[mid].seq === seq) return mid
    if (cards[mid].seq < seq) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

async function decide(id: string, target: DecisionTarget, decision: DecisionChoice, reason: string): Promise<void> {
  if (notices.get(id) === SENDING) return
  notices.set(id, SENDING)
  paint()
  // The token proves the request comes from this page: another origin can neither read it nor
  // send the custom header without a preflight the server never grants.
  let notice: string | undefined
  try {
    const response = await fetch('/decision', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-toolgate-token': approvalToken },
      body: JSON.stringify({ ...target, decision, ...(reason === '' ? {} : { reason }) }),
    })
    if (!response.ok) {
      const text = await response.text().catch(() => '')
      let why: unknown
      try {
        why = (JSON.parse(text) as { reason?: unknown }).reason
      } catch {
        why = text.trim() !== '' ? text.trim() : undefined
      }
      notice = `refused: ${typeof why === 'string' ? why : `HTTP ${response.status}`}`
    } else {
      // Recorded, with something the person should know (the standing rule was not written).
      const body = (await response.json().catch(() => ({}))) as { note?: unknown }
      if (typeof body.note === 'string') notice = body.note
    }
  } catch {
    notice = 'not sent: the viewer is not reachable'
  }
  if (notice === undefined) notices.delete(id)
  else notices.set(id, notice)
  paint()
}

function follow(): void {
  const events = new EventSource('/events')
  state.connection = 'connecting'
  paint()
  events.addEventListener('snapshot', (e) => {
    state.connection = 'live'
    const { head, rows } = decode((e as MessageEvent<string>).data)
    approvalToken = typeof head.token === 'string' ? head.token : ''
    applySnapshot(typeof head.title === 'string' ? head.title : state.title, head.approve === true, rows)
  })
  events.addEventListener('cards', (e) => applyRows(decode((e as MessageEvent<string>).data).rows))
  events.addEventListener('turns', (e) =>
    applyTurns(
      (e as MessageEvent<string>).data
        .split('\n')
        .slice(1)
        .map((line) => JSON.parse(line) as TurnView),
    ),
  )
  events.addEventListener('error', () => {
    state.connection = 'reconnecting'
    paint()
  })
}

const embedded = document.getElementById(DATA_ID)
if (embedded !== null) {
  const snapshot = JSON.parse(embedded.textContent ?? '{}') as SessionSnapshot
  applySnapshot(snapshot.title, snapshot.approve === true, (snapshot.cards ?? []).map(rowOf))
  if (Array.isArray(snapshot.turns)) applyTurns(snapshot.turns)
  // The cards follow in blocks, parsed one per task so a large file never freezes the page.
  const blocks = [...document.querySelectorAll(`script.${CARD_BLOCK_CLASS}`)]
  const next = () => {
    const block = blocks.shift()
    if (block === undefined) return
    applyRows((JSON.parse(block.textContent ?? '[]') as SessionCard[]).map(rowOf))
    setTimeout(next, 0)
  }
  next()
} else follow()
