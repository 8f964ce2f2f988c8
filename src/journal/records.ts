import type { CodeDispatchRecord } from '../code-mode/events.js'
import type {
  ApprovalAnswerSource,
  ApprovalOutcome,
  ApprovalRequest,
  CallId,
  ToolExecutionResult,
} from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'

/** The journal format version every record carries as `v`. */
export const JOURNAL_VERSION = 1

/** Who made a call, as the journal records it: the authenticated caller's subject, groups and scopes. */
export interface JournalIdentity {
  readonly subject: string
  readonly groups: readonly string[]
  readonly scopes: readonly string[]
}

/** Fields every journal record carries. */
export interface JournalRecordBase {
  readonly v: typeof JOURNAL_VERSION
  readonly type: string
  /** When the event happened, ms since the epoch. */
  readonly ts: number
  readonly callId: CallId
  readonly rootCallId: CallId
  /** The enclosing call's id for a Code Mode sub-call; null for a model-direct call. */
  readonly parentCallId: CallId | null
  /** The id given to `createAgent`, or null for a call without an agent. */
  readonly agentId: string | null
  readonly toolName: string
  /**
   * Who the call is for, when the host authenticated its caller (absent otherwise, and in journals
   * written before identities were recorded).
   */
  readonly identity?: JournalIdentity
}

/** A call entered the pipeline. */
export interface CallStartedRecord extends JournalRecordBase {
  readonly type: 'call-started'
  /** The call's JSON arguments, or null when they were not JSON. */
  readonly arguments: JsonValue | null
}

/** A policy asked for approval and the request went to the approval step. */
export interface ApprovalAskedRecord extends JournalRecordBase {
  readonly type: 'approval-asked'
  readonly request: ApprovalRequest
}

/** The approval step answered. */
export interface ApprovalAnsweredRecord extends JournalRecordBase {
  readonly type: 'approval-answered'
  readonly outcome: ApprovalOutcome
  /** True when a standing rule answered without calling the approval service. */
  readonly standing: boolean
  /** Who answered: the approval service, a standing rule, or a decision handed to a resume. */
  readonly source: ApprovalAnswerSource
  /** The person or client that decided, when the approver said (the outcome's `decidedBy`). */
  readonly decidedBy?: string
}

/** The frozen final result of a call. */
export interface ResultRecord extends JournalRecordBase {
  readonly type: 'result'
  readonly result: ToolExecutionResult
  /** From the call's start to its final result (0 when the journal did not see the start). */
  readonly durationMs: number
}

/** One settled Code Mode sub-dispatch (its durable log copy). `callId` is the sub-call's id. */
export interface CodeDispatchJournalRecord extends JournalRecordBase {
  readonly type: 'code-dispatch'
  readonly record: CodeDispatchRecord
}

/**
 * One line of the journal. Readers must ignore unknown `type`s and unknown fields: later versions
 * add both.
 */
export type JournalRecord =
  | CallStartedRecord
  | ApprovalAskedRecord
  | ApprovalAnsweredRecord
  | ResultRecord
  | CodeDispatchJournalRecord

/** Every journal record `type` this version writes. */
export type JournalRecordType = JournalRecord['type']
