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
  /** The viewer's approval handler lists this call as waiting for a decision. */
  decidable: boolean
  /** The turn the handler says the call waits in: the page sends it back with a decision. */
  turnId?: string
}

/** One call of the session: the viewer's card. */
export interface SessionCard {
  /**
   * The card's id, unique in a session: the call id, or the call id and its turn when an earlier
   * turn's call has that id (turns may reuse call ids).
   */
  id: string
  /** The call id. */
  callId: string
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
  /** The turn and step whose model reply emitted the call, when the model loop journaled it. */
  turn?: { id: string; step: number } | null
  /**
   * The parallel group the scheduler ran the call in, when it had company: the group's first call
   * id, its size, and this call's place in it (from 0). Null for a call that ran alone.
   */
  parallel?: { group: string; size: number; index: number } | null
  /** What confined the call (a result's `meta.sandbox`: bash says `bwrap` or `none`). */
  sandbox?: string | null
  /** How long the call waited for its approval, when it asked for one and got an answer. */
  approvalWaitMs?: number | null
  /** How long it ran once approved (its duration without the wait), when it waited for one. */
  runMs?: number | null
}

/** Tokens as the journal records them. */
export interface TurnUsage {
  inputTokens: number
  outputTokens: number
  totalTokens: number
}

/** One model request of a turn: what the model said and the calls it emitted, in call order. */
export interface TurnStepView {
  step: number
  /** The model's text (cut at the journal's bound: `textChars` is then the full length). */
  text: string
  textChars: number | null
  calls: string[]
  usage: TurnUsage | null
  /** The step's calls all have their results. */
  ended: boolean
}

/** One turn of the conversation the model loop journaled: the user's prompt and the model's steps. */
export interface TurnView {
  id: string
  /** Order of the turn among turns. */
  seq: number
  /** How many calls the journal showed before the turn began: it is drawn before the call with this `seq`. */
  at: number
  agent: string | null
  /** The user's prompt (cut at the journal's bound: `promptChars` is then the full length). */
  prompt: string
  promptChars: number | null
  /** A resumed turn continues one that stopped for approval (its prompt is in the earlier turn). */
  resumed: boolean
  startedAt: number | null
  /** The turn's stop reason once it ended, else null. */
  stopReason: string | null
  usage: TurnUsage | null
  steps: TurnStepView[]
}

/** The whole session. */
export interface SessionSnapshot {
  /** The journal's file name (display only). */
  title: string
  cards: SessionCard[]
  /** Approve/deny buttons are offered (the viewer runs with `--approve` and a state file). */
  approve: boolean
  /** The conversation's turns, when the model loop journaled them. */
  turns?: TurnView[]
}

/**
 * Server → page messages are the server-sent events `snapshot` (the session starts over; its head
 * carries `title`, `approve` and the approval token, and a large session continues in `cards` events),
 * `cards` (more or changed cards) and `turns` (new or changed turns: after the head line, one
 * {@link TurnView} JSON line each). An event's data lines are a JSON object (the head), then per
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
