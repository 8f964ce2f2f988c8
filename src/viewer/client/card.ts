// One call as a card: header (tool, agent, status, duration, title), approval history, the
// program of a run_code call, the completed (or pending) view, nested sub-calls, arguments.
import type { ComponentChildren } from 'preact'
import { useMemo, useState } from 'preact/hooks'
import type { ApprovalStep, CardRow, CardStatus, PendingApproval, SessionCard } from '../model.js'
import { html } from './html.js'
import { JsonTree } from './json-tree.js'
import { formatDuration, formatTime, vis } from './text.js'
import { CallView, Code, ResultView } from './views.js'

/** The label of a status badge. */
export function statusLabel(status: CardStatus): string {
  switch (status.kind) {
    case 'ok':
      return 'ok'
    case 'error':
      return status.code
    case 'denied':
      return 'denied'
    case 'timed-out':
      return 'timed out'
    case 'aborted':
      return 'aborted'
    case 'running':
      return 'running'
    case 'awaiting-approval':
      return 'awaiting approval'
  }
}

function approvalLine(step: ApprovalStep): ComponentChildren {
  const time = step.ts !== null ? html`<span class="time">${formatTime(step.ts)}</span> ` : null
  if (step.step === 'asked') {
    return html`<li class="asked">${time}asked${step.reason !== null ? html`: <span class="reason">${vis(step.reason)}</span>` : null}</li>`
  }
  return html`<li class=${`answered ${step.outcome}`}>${time}<span class="outcome">${vis(step.outcome)}</span>${
    step.standing ? html` <span class="note">(standing rule)</span>` : null
  }${step.decidedBy ? html` <span class="decided-by">by ${vis(step.decidedBy)}</span>` : null}${
    step.reason !== null ? html`: <span class="reason">${vis(step.reason)}</span>` : null
  }</li>`
}

/** Whether the completed card's own text already carries `message` (error results usually do). */
function resultMentions(card: SessionCard, message: string): boolean {
  const result = card.result
  if (result === null || result.card !== 'generic') return false
  return (result.content ?? []).some((b) => b.type === 'text' && b.text.includes(message))
}

export const SENDING = 'sending…'

/** What the page may send for a pending call (the server's `ViewerDecisionKind`). */
export type DecisionChoice = 'approve' | 'deny' | 'approve-always' | 'deny-always'

/** The longest denial reason the server takes (its `MAX_VIEWER_REASON_CHARS`). */
const MAX_REASON_CHARS = 500

const ALWAYS_NOTE: ReadonlyMap<string, string> = new Map([
  ['allowed-always', 'later calls of this tool by this agent run without asking'],
  ['denied-always', 'later calls of this tool by this agent are refused without asking'],
])

/**
 * Approve / deny, once or always, for a call the viewer may decide, or what was recorded. The reason
 * box goes with either denial; "always" applies to this agent and tool on every instance that reads
 * its standing rules from the same store.
 */
function DecideBar(props: { card: CardProps; callId: string; pending: PendingApproval }): ComponentChildren {
  const { card: cardProps, pending } = props
  const [reason, setReason] = useState('')
  const id = cardProps.row.id
  const notice = cardProps.notices?.get(id)
  const noticeLine = notice !== undefined ? html`<span class="notice">${vis(notice)}</span>` : null
  if (pending.decided !== null) {
    const always = ALWAYS_NOTE.get(pending.decided)
    return html`<div class="decide decided">
      <span class="note">decision recorded: <b>${vis(pending.decided)}</b> (applied when the turn is resumed${
        always !== undefined ? `; ${always}` : ''
      })</span>${noticeLine}
    </div>`
  }
  if (!pending.decidable) {
    return html`<div class="decide"><span class="note">not pending in the state file</span>${noticeLine}</div>`
  }
  const busy = notice === SENDING
  const send = (choice: DecisionChoice) =>
    cardProps.onDecide?.(
      id,
      // The turn goes with the call id: open turns may share a call id, and the decision is one turn's.
      { callId: props.callId, ...(pending.turnId === undefined ? {} : { turnId: pending.turnId }) },
      choice,
      choice === 'deny' || choice === 'deny-always' ? reason.trim() : '',
    )
  return html`<div class="decide">
    <button type="button" class="approve" disabled=${busy} onClick=${() => send('approve')}>Approve</button>
    <button type="button" class="approve-always" disabled=${busy} title="allow this and every later call of this tool by this agent" onClick=${() => send('approve-always')}>Always allow</button>
    <button type="button" class="deny" disabled=${busy} onClick=${() => send('deny')}>Deny</button>
    <button type="button" class="deny-always" disabled=${busy} title="deny this and every later call of this tool by this agent" onClick=${() => send('deny-always')}>Always deny</button>
    <input type="text" class="deny-reason" placeholder="reason for a denial (optional)" maxlength=${MAX_REASON_CHARS} aria-label="reason for a denial" value=${reason} disabled=${busy} onInput=${(e: Event) => setReason((e.currentTarget as HTMLInputElement).value)} />
    ${noticeLine}
  </div>`
}

/** Which pending call a decision is for: its call id, and the turn the viewer said it waits in. */
export interface DecisionTarget {
  callId: string
  turnId?: string
}

/** Send a decision from the card `id` (notices are kept by card). */
export type DecideHandler = (id: string, target: DecisionTarget, decision: DecisionChoice, reason: string) => void

export interface CardProps {
  /** The call's row; its card is parsed from the row's JSON while it is drawn. */
  row: CardRow
  children: Map<string, CardRow[]>
  approve: boolean
  onDecide?: DecideHandler
  /** Per call: what became of a decision sent from this page (a refusal's reason, or `sending…`). */
  notices?: ReadonlyMap<string, string>
  visible: (parent: CardRow, child: CardRow) => boolean
  /** The turn and step the card is drawn under, when the list groups calls by turn. */
  turn?: { id: string; step: number } | null
}

/** Sub-calls drawn per card before the rest waits behind a button (a program may make thousands). */
const SUBCALLS_SHOWN = 50

function SubCalls(props: CardProps & { subs: CardRow[] }): ComponentChildren {
  const [all, setAll] = useState(false)
  const shown = props.subs.filter((s) => props.visible(props.row, s))
  const drawn = all ? shown : shown.slice(0, SUBCALLS_SHOWN)
  return html`<div class="subcalls">
    ${drawn.map((s) => html`<${Card} key=${s.id} ...${props} row=${s} />`)}
    ${
      drawn.length < shown.length
        ? html`<button type="button" class="more-subcalls" onClick=${() => setAll(true)}>
            show ${shown.length - drawn.length} more sub-calls
          </button>`
        : null
    }
  </div>`
}

const SANDBOX_LABELS: Record<string, string> = { bwrap: 'bubblewrap', none: 'no sandbox' }

/** Which sandbox ran the call, as a badge (`none` stands out: the command ran unconfined). */
function sandboxBadge(sandbox: string | null | undefined): ComponentChildren {
  if (sandbox === null || sandbox === undefined || sandbox === '') return null
  return html`<span class=${`sandbox ${sandbox === 'none' ? 'unconfined' : 'confined'}`} title="sandbox">${vis(
    SANDBOX_LABELS[sandbox] ?? sandbox,
  )}</span>`
}

/** A call of a parallel group: its place in the group the scheduler ran together. */
function parallelBadge(parallel: SessionCard['parallel']): ComponentChildren {
  if (parallel === null || parallel === undefined) return null
  return html`<span class="parallel" title=${`ran in parallel with ${parallel.size - 1} other call${parallel.size === 2 ? '' : 's'}`}
    >∥ ${parallel.index + 1}/${parallel.size}</span
  >`
}

/** The approval wait apart from the run: "waited 1.20 s for approval · ran 700 ms". */
function timing(card: SessionCard): ComponentChildren {
  const wait = card.approvalWaitMs
  if (wait === null || wait === undefined) return null
  const run = card.runMs
  return html`<span class="timing"><span class="waited">waited ${formatDuration(wait)} for approval</span>${
    run !== null && run !== undefined ? html` · <span class="ran">ran ${formatDuration(run)}</span>` : null
  }</span>`
}

export function Card(props: CardProps): ComponentChildren {
  const card = useMemo(() => JSON.parse(props.row.json) as SessionCard, [props.row.json])
  const subs = props.children.get(card.id) ?? []
  const title = card.call.title
  const error = card.error
  const pending = card.pendingApproval
  const parallel = card.parallel ?? null
  const turn = props.turn ?? null
  return html`<article
    class=${`card status-${card.status.kind}${card.parentId !== null ? ' sub' : ''}${turn !== null ? ' in-turn' : ''}${
      parallel !== null ? ' in-parallel' : ''
    }`}
    data-call-id=${card.callId ?? card.id}
    data-card-id=${card.id}
    data-tool=${card.tool}
    data-status=${card.status.kind}
    data-caller=${card.caller ?? ''}
    data-turn-id=${turn?.id}
    data-step=${turn?.step}
    data-parallel-group=${parallel?.group}
    data-sandbox=${card.sandbox ?? undefined}
  >
    <header>
      <span class="tool">${vis(card.tool)}</span>
      ${card.agent !== null ? html`<span class="agent">${vis(card.agent)}</span>` : null}
      ${card.caller ? html`<span class="caller" title="caller">${vis(card.caller)}</span>` : null}
      <span class=${`badge ${card.status.kind}`}>${vis(statusLabel(card.status))}</span>
      ${parallelBadge(parallel)}
      ${sandboxBadge(card.sandbox)}
      ${card.durationMs !== null ? html`<span class="duration">${formatDuration(card.durationMs)}</span>` : null}
      ${timing(card)}
      <span class="title">${vis(title)}</span>
      <span class="call-id">${vis(card.callId ?? card.id)}</span>
    </header>
    ${
      card.notes.length > 0
        ? html`<ul class="card-notes">${card.notes.map((n) => html`<li class="note warn">${vis(n)}</li>`)}</ul>`
        : null
    }
    ${card.approvals.length > 0 ? html`<ol class="approvals">${card.approvals.map((s) => approvalLine(s))}</ol>` : null}
    ${pending !== null && props.approve ? html`<${DecideBar} card=${props} callId=${card.callId ?? card.id} pending=${pending} />` : null}
    ${card.program !== null ? html`<div class="program"><${Code} code=${card.program} lang="typescript" /></div>` : null}
    ${error !== null && !resultMentions(card, error.message) ? html`<div class="error-message">${vis(error.message)}</div>` : null}
    <div class="body">
      ${
        card.result !== null
          ? html`<${ResultView} view=${card.result} diffs=${card.diffs} />`
          : card.program === null
            ? html`<${CallView} view=${card.call} diffs=${card.diffs} />`
            : null
      }
    </div>
    ${subs.length > 0 ? html`<${SubCalls} ...${props} subs=${subs} />` : null}
    ${
      card.args !== null
        ? html`<details class="args"><summary>arguments</summary><${JsonTree} value=${card.args} open=${true} /></details>`
        : null
    }
  </article>`
}
