// Folds journal records into one card per call, replaying each through its tool's presenters.
import { diffLines } from 'diff'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolResult } from '../contract/tool-definition.js'
import type { FileDiff, ToolCallView, ToolResultView } from '../contract/views.js'
import { isJsonValue } from '../json/index.js'
import { sanitizeContent } from '../presentation/generic.js'
import { isPlainRecord, readOwn } from '../presentation/json-guard.js'
import { languageFromPath } from '../presentation/language.js'
import { splitLines } from '../presentation/read-window.js'
import type { ViewerPendingCall } from './approval-state.js'
import { boundForCard, MAX_CARD_DEPTH, VIEW_DEPTH_MARGIN } from './depth-bound.js'
import type { LineAt } from './follow.js'
import type { JournalLineRecord } from './journal-line.js'
import type {
  ApprovalStep,
  CardStatus,
  DiffBlock,
  DiffLine,
  SessionCard,
  TurnStepView,
  TurnUsage,
  TurnView,
} from './model.js'
import { presentCallSafely, presentResultSafely, type ToolPresenter } from './presenters.js'

const RUN_CODE = 'run_code'

/**
 * A record's large part (arguments, a result) in memory, or where its journal line is when the
 * session can read the file again: a journal of 200 MB is then a few dozen bytes per call, and a
 * card is built from the line when it is sent.
 */
type Held<T> = { value: T } | { at: LineAt }

/** Reads the record of a line again (`undefined` when the line is no longer that record). */
export type LineRereader = (at: LineAt) => JournalLineRecord | undefined

/** What the status and the card's header need of a result, kept; the result itself is `Held`. */
interface HeldResult {
  isError: boolean
  /** `errorCode` of the result. */
  code: string | null
  error: SessionCard['error']
  sandbox: string | null
  source: Held<Record<string, unknown>>
}

interface CallState {
  /** The card's id: the call id, or with the turn when an earlier turn's call has that id. */
  id: string
  callId: string
  /** The model-loop turn whose reply emitted the call (its records' `turnId`), when they say. */
  turnId: string | null
  seq: number
  parentId: string | null
  rootId: string
  agent: string | null
  caller: string | null
  tool: string
  startedAt: number | null
  /** `undefined` until a record carried them. */
  args: Held<JsonValue> | undefined
  approvals: ApprovalStep[]
  /** The final result record's `result`, once settled. */
  result: HeldResult | undefined
  durationMs: number | null
  /** The result record's `approvalWaitMs` and `runMs`, when it carried them. */
  approvalWaitMs: number | null
  runMs: number | null
  /** A `code-dispatch` record standing in for a sub-call whose own records are missing. */
  dispatch: ToolResult | undefined
  card: SessionCard | undefined
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

function errorCode(result: Record<string, unknown>): string | null {
  if (readOwn(result, 'isError') !== true) return null
  const error = readOwn(result, 'error')
  const info = isPlainRecord(error) ? readOwn(error, 'info') : undefined
  return (isPlainRecord(info) ? text(readOwn(info, 'code')) : null) ?? 'TOOL_ERROR'
}

/** A suspended call's result stands until the call is resumed: it is a wait, not a failure. */
function isSuspension(result: HeldResult | undefined): boolean {
  return result !== undefined && result.code === 'APPROVAL_SUSPENDED'
}

/** The parts of a result kept whether or not the result itself is. */
function holdResult(result: Record<string, unknown>, at: LineAt | undefined): HeldResult {
  const code = errorCode(result)
  return {
    isError: readOwn(result, 'isError') === true,
    code,
    error: code === 'APPROVAL_SUSPENDED' ? null : errorOf(result),
    sandbox: sandboxOf(result),
    source: at === undefined ? { value: result } : { at },
  }
}

function statusOf(state: CallState): CardStatus {
  const result = state.result
  if (isSuspension(result)) return { kind: 'awaiting-approval' }
  if (result !== undefined) {
    if (!result.isError) return { kind: 'ok' }
    const code = result.code ?? 'TOOL_ERROR'
    if (code === 'TOOL_DENIED') return { kind: 'denied', code }
    if (code === 'TOOL_TIMEOUT') return { kind: 'timed-out', code }
    if (code === 'ABORTED' || code === 'ABORTED_BEFORE_DISPATCH') return { kind: 'aborted', code }
    return { kind: 'error', code }
  }
  if (state.dispatch !== undefined)
    return state.dispatch.isError ? { kind: 'error', code: 'TOOL_ERROR' } : { kind: 'ok' }
  const last = state.approvals[state.approvals.length - 1]
  if (last !== undefined && (last.step === 'asked' || last.outcome === 'suspended'))
    return { kind: 'awaiting-approval' }
  return { kind: 'running' }
}

function errorOf(result: Record<string, unknown>): SessionCard['error'] {
  if (readOwn(result, 'isError') !== true) return null
  const error = readOwn(result, 'error')
  if (!isPlainRecord(error)) return { message: '', code: 'TOOL_ERROR' }
  const info = readOwn(error, 'info')
  return {
    message: text(readOwn(error, 'message')) ?? '',
    code: (isPlainRecord(info) ? text(readOwn(info, 'code')) : null) ?? 'TOOL_ERROR',
  }
}

/** The presenter-facing projection of a journal result: `isError`, sanitized `content`, JSON `meta`. */
function toolResultOf(result: Record<string, unknown>): ToolResult {
  const meta = readOwn(result, 'meta')
  const out: { isError: boolean; content: ToolResult['content']; meta?: JsonValue } = {
    isError: readOwn(result, 'isError') === true,
    content: sanitizeContent(readOwn(result, 'content')),
  }
  if (meta !== undefined && isJsonValue(meta)) out.meta = meta
  return out
}

/** A presenter's view, cut to the depth a card shows (views are JSON by contract). */
function boundView<T extends ToolCallView | ToolResultView>(view: T, what: string, notes: string[]): T {
  return boundForCard(view as unknown as JsonValue, what, notes, MAX_CARD_DEPTH + VIEW_DEPTH_MARGIN) as unknown as T
}

function boundResult(result: ToolResult, notes: string[]): ToolResult {
  if (result.meta === undefined) return result
  return { ...result, meta: boundForCard(result.meta, 'the result data', notes) }
}

function diffBlock(diff: FileDiff): DiffBlock {
  const lang = languageFromPath(diff.path) ?? null
  if (diff.oldText === null) {
    return { path: diff.path, isNew: true, lang, lines: splitLines(diff.newText).map((t) => ({ tag: 'add', text: t })) }
  }
  const lines: DiffLine[] = []
  for (const change of diffLines(diff.oldText, diff.newText)) {
    const tag = change.added ? 'add' : change.removed ? 'del' : 'ctx'
    for (const t of splitLines(change.value)) lines.push({ tag, text: t })
  }
  return { path: diff.path, isNew: false, lang, lines }
}

function diffsOf(view: { card: string; diffs?: unknown }): DiffBlock[] {
  if (view.card !== 'diff' || !Array.isArray(view.diffs)) return []
  const out: DiffBlock[] = []
  for (const d of view.diffs as unknown[]) {
    if (!isPlainRecord(d)) continue
    const path = text(readOwn(d, 'path'))
    const newText = text(readOwn(d, 'newText'))
    const oldText = readOwn(d, 'oldText')
    if (path === null || newText === null || (oldText !== null && typeof oldText !== 'string')) continue
    out.push(diffBlock({ path, oldText, newText }))
  }
  return out
}

/**
 * The session of one journal, record by record. `ingest` answers which cards changed, so a live
 * viewer sends only those; cards are rebuilt lazily from the call's state.
 */
export class SessionState {
  /** By card id. */
  private readonly calls = new Map<string, CallState>()
  private readonly order: CallState[] = []
  /** Card id by turn and call id (`turnKey`): two turns that reuse a call id are two calls. */
  private readonly idOf = new Map<string, string>()
  /** Per call id: the card id given to it last (where a record that names no turn goes). */
  private readonly lastIdOf = new Map<string, string>()
  private readonly takenIds = new Set<string>()
  private board: readonly ViewerPendingCall[] | undefined
  private readonly turns = new Map<string, TurnView>()
  /** Turns changed since `takeChangedTurns` was last asked. */
  private readonly changedTurns = new Set<string>()
  /** Per card id: the turn and step whose reply emitted it. */
  private readonly stepOfCall = new Map<string, { id: string; step: number }>()
  /** Per card id: its parallel group, when it shared one. */
  private readonly groupOfCall = new Map<string, { group: string; size: number; index: number }>()

  /**
   * With `reread`, records that carry where their line is (`at`) are not kept: their arguments and
   * results are read again from the file when a card is built, and built cards are not cached.
   */
  constructor(
    private readonly presenters: ReadonlyMap<string, ToolPresenter>,
    private readonly reread?: LineRereader,
  ) {}

  /** Keep `value`, or only where its line is when the line can be read again. */
  private hold<T>(value: T, r: JournalLineRecord): Held<T> {
    return this.reread !== undefined && r.at !== undefined ? { at: r.at } : { value }
  }

  /** A held value's record read again; `undefined` (with a note) when the line changed under us. */
  private recordAt(at: LineAt, state: CallState, notes: string[]): JournalLineRecord | undefined {
    const r = this.reread?.(at)
    if (r !== undefined && r.callId === state.callId) return r
    notes.push('the journal changed since this call was read; part of the call cannot be shown')
    return undefined
  }

  private argsOf(state: CallState, notes: string[]): JsonValue | null {
    const held = state.args
    if (held === undefined) return null
    if ('value' in held) return held.value
    const r = this.recordAt(held.at, state, notes)
    const request = r === undefined ? undefined : readOwn(r.raw, 'request')
    const args =
      r === undefined
        ? undefined
        : r.type === 'approval-asked'
          ? isPlainRecord(request)
            ? readOwn(request, 'arguments')
            : undefined
          : readOwn(r.raw, 'arguments')
    return args !== undefined && isJsonValue(args) ? args : null
  }

  private resultOf(state: CallState, held: HeldResult, notes: string[]): Record<string, unknown> {
    if ('value' in held.source) return held.source.value
    const r = this.recordAt(held.source.at, state, notes)
    const result = r === undefined ? undefined : readOwn(r.raw, 'result')
    return isPlainRecord(result) ? result : { isError: held.isError }
  }

  /**
   * The card id of a turn's call, given on first sight (a model reply names its calls before they
   * start): the call id, unless another call has it already. A record that names no turn (an older
   * journal, a call no model loop made) goes to the call id's last card.
   */
  private cardIdOf(turnId: string | null, callId: string): string {
    const key = turnKey(turnId, callId)
    let id = this.idOf.get(key)
    if (id !== undefined) return id
    if (turnId === null) {
      const last = this.lastIdOf.get(callId)
      if (last !== undefined) return last
    }
    id = callId
    for (let n = 2; this.takenIds.has(id); n++) id = `${callId} (${turnId ?? 'no turn'}${n > 2 ? ` #${n}` : ''})`
    this.idOf.set(key, id)
    this.lastIdOf.set(callId, id)
    this.takenIds.add(id)
    return id
  }

  /** The card id of a call another record names (its parent, its root): never given here. */
  private knownIdOf(turnId: string | null, callId: string): string {
    return this.idOf.get(turnKey(turnId, callId)) ?? this.lastIdOf.get(callId) ?? callId
  }

  private callOf(r: JournalLineRecord): CallState {
    const id = this.cardIdOf(r.turnId, r.callId)
    let state = this.calls.get(id)
    if (state === undefined) {
      state = {
        id,
        callId: r.callId,
        turnId: r.turnId,
        seq: this.order.length,
        parentId: r.parentCallId === null ? null : this.knownIdOf(r.turnId, r.parentCallId),
        rootId: r.rootCallId === r.callId ? id : this.knownIdOf(r.turnId, r.rootCallId),
        agent: r.agentId,
        caller: r.caller,
        tool: r.toolName,
        startedAt: r.ts,
        args: undefined,
        approvals: [],
        result: undefined,
        durationMs: null,
        approvalWaitMs: null,
        runMs: null,
        dispatch: undefined,
        card: undefined,
      }
      this.calls.set(id, state)
      this.order.push(state)
    }
    state.caller ??= r.caller
    return state
  }

  /** Fold one record in; answers the ids of the cards it changed (none for unknown types). */
  ingest(r: JournalLineRecord): string[] {
    const raw = r.raw
    switch (r.type) {
      case 'call-started': {
        const state = this.callOf(r)
        this.resumed(state)
        const args = readOwn(raw, 'arguments')
        if (args !== undefined && isJsonValue(args)) state.args = this.hold(args, r)
        break
      }
      case 'approval-asked': {
        const state = this.callOf(r)
        const request = readOwn(raw, 'request')
        const reason = isPlainRecord(request) ? text(readOwn(request, 'reason')) : null
        if (state.args === undefined && isPlainRecord(request)) {
          const args = readOwn(request, 'arguments')
          if (args !== undefined && isJsonValue(args)) state.args = this.hold(args, r)
        }
        state.approvals.push({ step: 'asked', ts: r.ts, reason })
        break
      }
      case 'approval-answered': {
        const state = this.callOf(r)
        const outcome = readOwn(raw, 'outcome')
        const kind = isPlainRecord(outcome) ? text(readOwn(outcome, 'kind')) : null
        if (kind !== 'suspended') this.resumed(state)
        state.approvals.push({
          step: 'answered',
          ts: r.ts,
          outcome: kind ?? 'unknown',
          reason: isPlainRecord(outcome) ? text(readOwn(outcome, 'reason')) : null,
          standing: readOwn(raw, 'standing') === true,
          ...decidedByOf(raw, outcome),
        })
        break
      }
      case 'result': {
        const state = this.callOf(r)
        const result = readOwn(raw, 'result')
        if (!isPlainRecord(result)) return []
        state.result = holdResult(result, this.reread === undefined ? undefined : r.at)
        state.durationMs = finite(readOwn(raw, 'durationMs'))
        state.approvalWaitMs = finite(readOwn(raw, 'approvalWaitMs'))
        state.runMs = finite(readOwn(raw, 'runMs'))
        break
      }
      case 'turn-started':
      case 'model-reply':
      case 'step-ended':
      case 'turn-ended':
        return this.ingestTurn(r)
      case 'code-dispatch': {
        // The durable copy of a sub-dispatch: it stands in for the sub-call when its own records
        // are absent (a journal scoped to top-level calls), and never overrides them.
        const record = readOwn(raw, 'record')
        if (!isPlainRecord(record)) return []
        const subCallId = text(readOwn(record, 'subCallId'))
        const name = text(readOwn(record, 'name'))
        if (subCallId === null || name === null) return []
        const state = this.callOf({
          ...r,
          callId: subCallId,
          toolName: name,
          parentCallId: text(readOwn(record, 'parentCallId')) ?? r.callId,
          rootCallId: text(readOwn(record, 'rootCallId')) ?? r.rootCallId,
        })
        state.dispatch = {
          isError: readOwn(record, 'isError') === true,
          content: sanitizeContent(readOwn(record, 'content')),
        }
        if (state.result !== undefined) return []
        state.card = undefined
        return [state.id]
      }
      default:
        return []
    }
    const state = this.calls.get(this.cardIdOf(r.turnId, r.callId))!
    state.card = undefined
    return [state.id]
  }

  /** The turn a model-side record belongs to (made on its first record, started or not). */
  private turnOf(r: JournalLineRecord): TurnView {
    const id = text(readOwn(r.raw, 'turnId')) ?? r.callId
    let turn = this.turns.get(id)
    if (turn === undefined) {
      turn = {
        id,
        seq: this.turns.size,
        at: this.order.length,
        agent: r.agentId,
        prompt: '',
        promptChars: null,
        resumed: false,
        startedAt: r.ts,
        stopReason: null,
        usage: null,
        steps: [],
      }
      this.turns.set(id, turn)
    }
    this.changedTurns.add(id)
    return turn
  }

  private stepOf(turn: TurnView, step: number): TurnStepView {
    let view = turn.steps.find((s) => s.step === step)
    if (view === undefined) {
      view = { step, text: '', textChars: null, calls: [], usage: null, ended: false }
      turn.steps.push(view)
      turn.steps.sort((a, b) => a.step - b.step)
    }
    return view
  }

  /** Fold a model-side record into its turn; answers the cards it changed (their turn or group). */
  private ingestTurn(r: JournalLineRecord): string[] {
    const raw = r.raw
    const turn = this.turnOf(r)
    const step = readOwn(raw, 'step')
    const stepIndex = typeof step === 'number' && Number.isSafeInteger(step) && step >= 0 ? step : null
    const changed: string[] = []
    switch (r.type) {
      case 'turn-started':
        turn.prompt = text(readOwn(raw, 'text')) ?? ''
        turn.promptChars = finite(readOwn(raw, 'textChars'))
        turn.resumed = readOwn(raw, 'resumed') === true
        turn.startedAt = r.ts
        break
      case 'model-reply': {
        if (stepIndex === null) break
        const view = this.stepOf(turn, stepIndex)
        view.text = text(readOwn(raw, 'text')) ?? ''
        view.textChars = finite(readOwn(raw, 'textChars'))
        const calls = readOwn(raw, 'calls')
        view.calls = []
        for (const call of Array.isArray(calls) ? calls : []) {
          const callId = isPlainRecord(call) ? text(readOwn(call, 'callId')) : null
          if (callId === null) continue
          const id = this.cardIdOf(turn.id, callId)
          view.calls.push(id)
          this.stepOfCall.set(id, { id: turn.id, step: stepIndex })
          if (this.touch(id)) changed.push(id)
        }
        break
      }
      case 'step-ended': {
        if (stepIndex === null) break
        const view = this.stepOf(turn, stepIndex)
        view.ended = true
        view.usage = usageOf(readOwn(raw, 'usage'))
        const groups = readOwn(raw, 'groups')
        for (const group of Array.isArray(groups) ? groups : []) {
          if (!Array.isArray(group)) continue
          const ids = group
            .filter((id): id is string => typeof id === 'string')
            .map((callId) => this.cardIdOf(turn.id, callId))
          if (ids.length < 2) continue
          ids.forEach((id, index) => {
            this.groupOfCall.set(id, { group: ids[0], size: ids.length, index })
            if (this.touch(id)) changed.push(id)
          })
        }
        break
      }
      case 'turn-ended':
        turn.stopReason = text(readOwn(raw, 'stopReason')) ?? 'unknown'
        turn.usage = usageOf(readOwn(raw, 'usage'))
        break
    }
    return changed
  }

  /** Drop a call's built card so it is built again; true when the call is known. */
  private touch(callId: string): boolean {
    const state = this.calls.get(callId)
    if (state === undefined) return false
    state.card = undefined
    return true
  }

  /** The turns changed since the last ask (each once), in turn order. */
  takeChangedTurns(): TurnView[] {
    const out = [...this.changedTurns].map((id) => this.turns.get(id)!).sort((a, b) => a.seq - b.seq)
    this.changedTurns.clear()
    return out
  }

  /** Every turn, in order. */
  turnViews(): TurnView[] {
    return [...this.turns.values()]
  }

  /** A suspended call moves on (a resume started it or answered its ask): its suspension is over. */
  private resumed(state: CallState): void {
    if (!isSuspension(state.result)) return
    state.result = undefined
    state.durationMs = null
    state.approvalWaitMs = null
    state.runMs = null
  }

  /**
   * The calls the approval handler lists as waiting for a decision, each with its turn and the
   * decision recorded so far; `undefined` when the viewer does not approve. Answers the ids of the
   * cards whose buttons or recorded decision changed.
   */
  setDecidable(board: readonly ViewerPendingCall[] | undefined): string[] {
    const before = this.boardByCard()
    this.board = board
    const after = this.boardByCard()
    const changed: string[] = []
    for (const id of new Set([...before.keys(), ...after.keys()])) {
      const state = this.calls.get(id)
      const [was, is] = [before.get(id), after.get(id)]
      const same =
        was === undefined
          ? is === undefined
          : is !== undefined && was.decided === is.decided && was.turnId === is.turnId
      if (state === undefined || same) continue
      state.card = undefined
      changed.push(id)
    }
    return changed
  }

  /**
   * The board by card id: a pending call that names its journal turn is that turn's call; one that
   * does not (a state written before turns were recorded) is the call id's last card.
   */
  private boardByCard(): Map<string, ViewerPendingCall> {
    const out = new Map<string, ViewerPendingCall>()
    for (const entry of this.board ?? []) {
      const id =
        entry.journalTurnId === undefined
          ? this.lastIdOf.get(entry.callId)
          : this.idOf.get(turnKey(entry.journalTurnId, entry.callId))
      if (id !== undefined) out.set(id, entry)
    }
    return out
  }

  /** The card of a call awaiting a decision, by call id and (when given) the turn the handler named. */
  pendingCards(callId: string, turnId: string | undefined): SessionCard[] {
    const out: SessionCard[] = []
    for (const [id, entry] of this.boardByCard()) {
      if (entry.callId !== callId || (turnId !== undefined && entry.turnId !== turnId)) continue
      const card = this.card(id)
      if (card?.pendingApproval) out.push(card)
    }
    return out
  }

  /** The card of one call, or `undefined` for an unknown id. */
  card(id: string): SessionCard | undefined {
    const state = this.calls.get(id)
    return state === undefined ? undefined : this.build(state)
  }

  /** The card of the call that appeared `seq`-th (from 0). */
  cardAt(seq: number): SessionCard {
    return this.build(this.order[seq])
  }

  /** The order of first appearance of a call, or `undefined` for an unknown id. */
  seqOf(id: string): number | undefined {
    return this.calls.get(id)?.seq
  }

  /** Every card, in order of first appearance. */
  cards(): SessionCard[] {
    return this.order.map((s) => this.build(s))
  }

  get size(): number {
    return this.order.length
  }

  private build(state: CallState): SessionCard {
    if (state.card !== undefined) return state.card
    const presenter = this.presenters.get(state.tool)
    // Presenters see the same bounded preview the card shows; their views are bounded again, since
    // a presenter may put deep data of its own (a result's `meta`) into them.
    const notes: string[] = []
    const args = boundForCard(this.argsOf(state, notes), 'the arguments', notes)
    const call = boundView(presentCallSafely(presenter, state.tool, args), 'the call view', notes)
    const settled =
      state.result !== undefined
        ? boundResult(toolResultOf(this.resultOf(state, state.result, notes)), notes)
        : state.dispatch
    const result =
      settled !== undefined
        ? boundView(presentResultSafely(presenter, state.tool, args, settled), 'the result view', notes)
        : null
    const status = statusOf(state)
    const program =
      state.tool === RUN_CODE && isPlainRecord(args) ? text(readOwn(args as Record<string, unknown>, 'code')) : null
    let pendingApproval: SessionCard['pendingApproval'] = null
    if (status.kind === 'awaiting-approval') {
      const asked = state.approvals.findLast((s) => s.step === 'asked')
      const entry = this.boardByCard().get(state.id)
      pendingApproval = {
        reason: asked?.step === 'asked' ? asked.reason : null,
        decided: entry?.decided ?? null,
        decidable: entry !== undefined,
        ...(entry?.turnId === undefined ? {} : { turnId: entry.turnId }),
      }
    }
    const card: SessionCard = {
      id: state.id,
      callId: state.callId,
      seq: state.seq,
      parentId: state.parentId,
      rootId: state.rootId,
      agent: state.agent,
      caller: state.caller,
      tool: state.tool,
      status,
      startedAt: state.startedAt,
      durationMs: state.durationMs,
      approvals: [...state.approvals],
      args,
      call,
      result,
      diffs: diffsOf(result ?? call),
      error: state.result?.error ?? null,
      program,
      pendingApproval,
      notes,
      turn: this.stepOfCall.get(state.id) ?? null,
      parallel: this.groupOfCall.get(state.id) ?? null,
      sandbox: state.result?.sandbox ?? null,
      ...timingOf(state),
    }
    // A file-backed session builds each card when it is sent, rather than keep them all.
    if (this.reread === undefined) state.card = card
    return card
  }
}

/** The key of a call in a turn (a call that names no turn has the empty turn). */
function turnKey(turnId: string | null, callId: string): string {
  return `${turnId ?? ''}\u0000${callId}`
}

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null
}

function usageOf(value: unknown): TurnUsage | null {
  if (!isPlainRecord(value)) return null
  const input = finite(readOwn(value, 'inputTokens'))
  const output = finite(readOwn(value, 'outputTokens'))
  const total = finite(readOwn(value, 'totalTokens'))
  if (input === null || output === null) return null
  return { inputTokens: input, outputTokens: output, totalTokens: total ?? input + output }
}

/** What confined the call, as its result's data says (`meta.sandbox`). */
function sandboxOf(result: Record<string, unknown>): string | null {
  const meta = readOwn(result, 'meta')
  return isPlainRecord(meta) ? text(readOwn(meta, 'sandbox')) : null
}

/**
 * The approval wait apart from the run. The result record's own figures when it has them (the
 * process measured both); else the journal's times, from the first ask to the answer that let the
 * call go on (a turn suspended and resumed later waited all that while).
 */
function timingOf(state: CallState): { approvalWaitMs: number | null; runMs: number | null } {
  let wait = state.approvalWaitMs
  const suspended = state.approvals.some((s) => s.step === 'answered' && s.outcome === 'suspended')
  if (wait === null || suspended) {
    const asked = state.approvals.find((s) => s.step === 'asked')
    const answered = state.approvals.findLast((s) => s.step === 'answered' && s.outcome !== 'suspended')
    if (asked?.ts != null && answered?.ts != null && answered.ts >= asked.ts) wait = answered.ts - asked.ts
  }
  if (wait === null) return { approvalWaitMs: null, runMs: null }
  const duration = state.durationMs
  const run = state.runMs ?? (duration === null ? null : suspended ? duration : Math.max(0, duration - wait))
  return { approvalWaitMs: wait, runMs: run }
}

/** Who decided an approval: the record's `decidedBy`, else its outcome's. */
function decidedByOf(raw: Record<string, unknown>, outcome: unknown): { decidedBy?: string } {
  const top = readOwn(raw, 'decidedBy')
  if (typeof top === 'string' && top !== '') return { decidedBy: top }
  const inner = isPlainRecord(outcome) ? readOwn(outcome, 'decidedBy') : undefined
  return typeof inner === 'string' && inner !== '' ? { decidedBy: inner } : {}
}
