// The session as the viewer page sees it: plain JSON the server computes from journal records
// (with the tools' own presenters) and the browser renders. Types only: shared with the client.
import type { JsonValue } from '../contract/json-value.js'
import type { ToolCallView, ToolResultView } from '../contract/views.js'

/** Where a call stands. `code` is the result's `error.info.code`. */
export type CardStatus =
  | { kind: 'running' }
  | { kind: 'awaiting-approval' }
  | { kind: 'ok' }
  | { kind: 'error'; code: string }
  | { kind: 'denied'; code: string }
  | { kind: 'timed-out'; code: string }
  | { kind: 'aborted'; code: string }

/** The filterable status names, in display order. */
export const STATUS_KINDS = ['ok', 'error', 'denied', 'timed-out', 'aborted', 'running', 'awaiting-approval'] as const
export type StatusKind = (typeof STATUS_KINDS)[number]

/** One step of a call's approval history. */
export type ApprovalStep =
  | { step: 'asked'; ts: number | null; reason: string | null }
  | {
      step: 'answered'
      ts: number | null
      outcome: string
      reason: string | null
      standing: boolean
      /** Who decided, when the journal says (an authenticated subject). */
      decidedBy?: string
    }

/** One display line of a diff hunk. */
export interface DiffLine {
  tag: 'add' | 'del' | 'ctx'
  text: string
}

/** One hunk of a `diff` card, already split into marked lines (the server owns the diff library). */
export interface DiffBlock {
  path: string
  /** The file did not exist before. */
  isNew: boolean
  /** The file's language hint for highlighting, when known. */
  lang: string | null
  lines: DiffLine[]
}

/** A call awaiting approval. The page offers buttons only when the viewer approves and it is decidable. */
export interface PendingApproval {
  reason: string | null
  /** The decision recorded in the state file (`allowed-once`, `denied`, …) until the turn is resumed. */
  decided: string | null
  /** The viewer's state file lists this call as waiting for a decision. */
  decidable: boolean
}

/** One call of the session: the viewer's card. */
export interface SessionCard {
  /** The call id (unique in a journal). */
  id: string
  /** Order of first appearance in the journal. */
  seq: number
  /** Set for Code Mode sub-calls: the `run_code` call they belong to. */
  parentId: string | null
  rootId: string
  agent: string | null
  /** The authenticated subject the call was made for, when the journal records one. */
  caller: string | null
  tool: string
  status: CardStatus
  /** Epoch ms of the first record of the call. */
  startedAt: number | null
  durationMs: number | null
  approvals: ApprovalStep[]
  /** The call's JSON arguments (`null` when they were not JSON or unknown). */
  args: JsonValue | null
  /** Pending card from the tool's `presentCall`. */
  call: ToolCallView
  /** Completed card from the tool's `presentResult` (replaces the pending one), once settled. */
  result: ToolResultView | null
  /** Marked lines for the diff view shown (the result's when settled, else the call's). */
  diffs: DiffBlock[]
  /** The failure, for error results. */
  error: { message: string; code: string } | null
  /** The program of a `run_code` call. */
  program: string | null
  pendingApproval: PendingApproval | null
  /** What the card leaves out (say, arguments nested deeper than a card shows), for the reader. */
  notes: string[]
}

/** The whole session. */
export interface SessionSnapshot {
  /** The journal's file name (display only). */
  title: string
  cards: SessionCard[]
  /** Approve/deny buttons are offered (the viewer runs with `--approve` and a state file). */
  approve: boolean
}

/**
 * Server → page messages are the server-sent events `snapshot` (the session starts over; its head
 * carries `title`, `approve` and the approval token, and a large session continues in `cards` events)
 * and `cards` (more or changed cards). An event's data lines are a JSON object (the head), then per
 * card a {@link CardRowHeader} line and the card's JSON.
 *
 * The page's compact form of a card: what its list, filters and tree need, and the card itself as
 * JSON text, parsed only while it is drawn. A session of 100,000 calls is then 100,000 small
 * objects and strings in the page, not millions of objects for the garbage collector to trace.
 */
export interface CardRow {
  id: string
  seq: number
  parentId: string | null
  agent: string | null
  tool: string
  status: CardStatus['kind']
  /** The card's `caller`. */
  caller: string | null
  /** The whole `SessionCard` as JSON. */
  json: string
}

/** A row's fields on the wire, in this order, as one JSON array line before the card's own line. */
export type CardRowHeader = [string, number, string | null, string | null, string, CardStatus['kind'], (string | null)?]
