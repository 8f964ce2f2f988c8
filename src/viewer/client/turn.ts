// The conversation around the calls: a turn's header (the user's prompt) and each step's block
// (the model's text), with the step's calls drawn after it. The session's text is untrusted: it goes
// through `vis` into text nodes, never into markup.
import type { CardRow, TurnStepView, TurnUsage, TurnView } from '../model.js'
import { html } from './html.js'
import { formatTime, vis } from './text.js'

/** A row of the list besides the cards: a turn's header, or a step's block. */
export type ConversationBlock =
  | { kind: 'turn'; id: string; turn: TurnView }
  | { kind: 'step'; id: string; turn: TurnView; step: TurnStepView }

/** One row of the list: a call's card (its row), or a conversation block. */
export type ListItem = CardRow | ConversationBlock

/** The rows in reading order, and the turn step each call is drawn under. */
export interface Conversation {
  items: readonly ListItem[]
  homes: ReadonlyMap<string, { id: string; step: number }>
}

const NO_HOMES: ReadonlyMap<string, { id: string; step: number }> = new Map()

/**
 * The rows in reading order. Each turn comes before the first call the journal showed after it
 * began, then its steps, each followed by the calls its reply emitted (in call order); calls of no
 * turn stay where the journal has them. Without turns (or under a filter) the rows are the cards
 * themselves, so a large session without turns costs nothing more.
 */
export function conversationItems(
  cards: readonly CardRow[],
  turns: ReadonlyMap<string, TurnView> | undefined,
): Conversation {
  if (turns === undefined || turns.size === 0) return { items: cards, homes: NO_HOMES }
  const items: ListItem[] = []
  const byId = new Map(cards.map((row) => [row.id, row]))
  const ordered = [...turns.values()].sort((a, b) => a.at - b.at || a.seq - b.seq)
  // A call belongs to the first turn step that lists it.
  const homes = new Map<string, { id: string; step: number }>()
  for (const turn of ordered)
    for (const step of turn.steps)
      for (const id of step.calls) if (byId.has(id) && !homes.has(id)) homes.set(id, { id: turn.id, step: step.step })
  const drawTurn = (turn: TurnView) => {
    items.push({ kind: 'turn', id: `turn:${turn.id}`, turn })
    for (const step of turn.steps) {
      const calls = step.calls.filter((id) => homes.get(id)?.id === turn.id && homes.get(id)?.step === step.step)
      // A resumed turn's step continues one an earlier turn showed: no block of its own.
      if (step.text === '' && calls.length === 0 && turn.resumed) continue
      items.push({ kind: 'step', id: `step:${turn.id}:${step.step}`, turn, step })
      for (const id of calls) items.push(byId.get(id)!)
    }
  }
  let next = 0
  for (const row of cards) {
    while (next < ordered.length && ordered[next].at <= row.seq) drawTurn(ordered[next++])
    if (!homes.has(row.id)) items.push(row)
  }
  while (next < ordered.length) drawTurn(ordered[next++])
  return { items, homes }
}

/** A conversation block rather than a card. */
export function isBlock(item: ListItem): item is ConversationBlock {
  return 'kind' in item
}

function tokens(usage: TurnUsage | null) {
  if (usage === null) return null
  return html`<span class="usage" title="tokens in / out">${usage.inputTokens} in · ${usage.outputTokens} out</span>`
}

function cut(chars: number | null, shown: string) {
  return chars === null ? null : html`<div class="note warn">(${shown.length} of ${chars} characters shown)</div>`
}

const STOP_LABELS: Record<string, string> = {
  done: 'done',
  concluded: 'concluded',
  'max-steps': 'stopped at max steps',
  aborted: 'aborted',
  'approval-required': 'waiting for approval',
  error: 'model request failed',
}

/** A turn's header: who, when, how it ended, its tokens, and the user's prompt. */
export function TurnHeader(props: { id: string; turn: TurnView }) {
  const { turn } = props
  const stop = turn.stopReason
  return html`<section class="turn" data-row-id=${props.id} data-turn-id=${turn.id} data-stop=${stop ?? 'running'}>
    <header>
      <span class="turn-label">${turn.resumed ? 'resumed turn' : 'turn'}</span>
      ${turn.agent !== null ? html`<span class="agent">${vis(turn.agent)}</span>` : null}
      ${turn.startedAt !== null ? html`<span class="time">${formatTime(turn.startedAt)}</span>` : null}
      <span class=${`turn-status ${stop ?? 'running'}`}>${vis(stop === null ? 'running' : (STOP_LABELS[stop] ?? stop))}</span>
      ${tokens(turn.usage)}
    </header>
    ${
      turn.prompt !== ''
        ? html`<div class="prompt"><span class="who">user</span><pre class="text">${vis(turn.prompt)}</pre>${cut(
            turn.promptChars,
            turn.prompt,
          )}</div>`
        : null
    }
  </section>`
}

/** A step's block: the model's text and the step's tokens; its calls follow as cards. */
export function StepBlock(props: { id: string; turn: TurnView; step: TurnStepView }) {
  const { step } = props
  const calls = step.calls.length
  return html`<section class="step" data-row-id=${props.id} data-turn-id=${props.turn.id} data-step=${step.step}>
    <div class="model">
      <span class="who">model</span>
      <span class="note">step ${step.step + 1}${calls > 0 ? ` · ${calls} call${calls === 1 ? '' : 's'}` : ''}</span>
      ${tokens(step.usage)}
    </div>
    ${step.text !== '' ? html`<pre class="text model-text">${vis(step.text)}</pre>` : null}
    ${cut(step.textChars, step.text)}
  </section>`
}
