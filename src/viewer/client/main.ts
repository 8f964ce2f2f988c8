// Entry of the viewer page. A static file carries the session in a JSON data block; a served page
// gets it from the server's event stream (a `snapshot`, then `cards` updates as the journal grows).
import { render } from 'preact'
import type { CardsUpdate, SessionCard, SessionSnapshot } from '../model.js'
import { App } from './app.js'
import { SENDING } from './card.js'
import { html } from './html.js'

const DATA_ID = 'toolgate-session'

interface State {
  title: string
  approve: boolean
  connection: string
  byId: Map<string, SessionCard>
  cards: SessionCard[]
}

const state: State = { title: 'toolgate session', approve: false, connection: 'static', byId: new Map(), cards: [] }
const root = document.getElementById('app')!
let approvalToken = ''
/** What became of decisions sent from this page, by call id (cleared when one is recorded). */
const notices = new Map<string, string>()

function sorted(byId: Map<string, SessionCard>): SessionCard[] {
  return [...byId.values()].sort((a, b) => a.seq - b.seq)
}

function paint(): void {
  render(
    html`<${App}
      title=${state.title}
      cards=${state.cards}
      approve=${state.approve}
      connection=${state.connection}
      onDecide=${decide}
      notices=${notices}
    />`,
    root,
  )
}

function applySnapshot(snapshot: SessionSnapshot): void {
  state.title = snapshot.title
  state.approve = snapshot.approve === true
  state.byId = new Map(snapshot.cards.map((c) => [c.id, c]))
  state.cards = sorted(state.byId)
  document.title = `${snapshot.title} · toolgate`
  paint()
}

function applyCards(update: CardsUpdate): void {
  for (const card of update.cards) state.byId.set(card.id, card)
  state.cards = sorted(state.byId)
  paint()
}

async function decide(id: string, decision: 'approve' | 'deny'): Promise<void> {
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
      body: JSON.stringify({ callId: id, decision }),
    })
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { reason?: unknown }
      notice = `refused: ${typeof body.reason === 'string' ? body.reason : `HTTP ${response.status}`}`
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
    const data = JSON.parse((e as MessageEvent<string>).data) as SessionSnapshot & { token?: string }
    approvalToken = typeof data.token === 'string' ? data.token : ''
    applySnapshot(data)
  })
  events.addEventListener('cards', (e) => applyCards(JSON.parse((e as MessageEvent<string>).data) as CardsUpdate))
  events.addEventListener('error', () => {
    state.connection = 'reconnecting'
    paint()
  })
}

const embedded = document.getElementById(DATA_ID)
if (embedded !== null) applySnapshot(JSON.parse(embedded.textContent ?? '{}') as SessionSnapshot)
else follow()
