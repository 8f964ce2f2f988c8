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
  /**
   * The stored turn whose resume made the call (`ToolExecution.storedTurnId`), when there was one:
   * a resume of that turn reads only its own records as evidence (absent for other calls, and in
   * journals written before it was recorded).
   */
  readonly storedTurnId?: string
  /**
   * The model-loop turn whose reply emitted the call (the `turnId` of that turn's own records), when
   * a model loop made it: two turns that reuse a call id are two calls (absent otherwise, and in
   * journals written before it was recorded).
   */
  readonly turnId?: string
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

/**
 * The credential an upstream call carried: the caller's exchanged token (`exchange`), the caller's
 * own secret from the vault (`vault`), or one credential for everyone (`shared`); never the secret.
 */
export interface JournalCredential {
  readonly kind: 'exchange' | 'vault' | 'shared'
  /** Who the upstream saw, when known. */
  readonly upstreamSubject?: string
}

/** Which policy decided a call: its verdict, the deciding rule (an `id` or `rules[N]`), the policy's digest. */
export interface JournalPolicyDecision {
  readonly decision: 'allow' | 'deny' | 'ask' | 'quota'
  /** The deciding rule's label; absent when no rule decided (an allow with no rule naming the tool). */
  readonly rule?: string
  /** `sha256:` and the hex digest of the policy document in force. */
  readonly digest: string
}

/** The frozen final result of a call. */
export interface ResultRecord extends JournalRecordBase {
  readonly type: 'result'
  readonly result: ToolExecutionResult
  /** The credential the call of an upstream tool carried, when the host says (absent otherwise). */
  readonly credential?: JournalCredential
  /**
   * The policy's decision, when the host installed a policy and names it through the journal's
   * `policyOf` (absent otherwise, and in journals written before it was recorded).
   */
  readonly policy?: JournalPolicyDecision
  /** From the call's start to its final result (0 when the journal did not see the start). */
  readonly durationMs: number
  /**
   * How long the call waited in the approval step, when this process saw it ask and get its answer
   * (absent otherwise, and in journals written before it was recorded). Part of `durationMs`.
   */
  readonly approvalWaitMs?: number
  /**
   * From the approval's answer (the call was free to run its body) to the final result, when an
   * answer was recorded for the call in this process; absent otherwise (then `durationMs` is the run).
   */
  readonly runMs?: number
}

/** One settled Code Mode sub-dispatch (its durable log copy). `callId` is the sub-call's id. */
export interface CodeDispatchJournalRecord extends JournalRecordBase {
  readonly type: 'code-dispatch'
  readonly record: CodeDispatchRecord
}

/** The longest model text (a prompt, a step's reply) a model-side record carries, in characters. */
export const MAX_MODEL_TEXT_CHARS = 16 * 1024

/** The most calls a `model-reply` record lists (a reply with more lists the first ones and says so). */
export const MAX_RECORDED_CALLS = 1024

/**
 * Fields of the records the model loop writes (its side of the conversation). They belong to a turn,
 * not to a call: `callId` and `rootCallId` hold the turn's id, `parentCallId` is null, `toolName` is ''.
 */
export interface ModelRecordBase extends JournalRecordBase {
  /** The turn's id (a `runModelLoop`/`streamModelLoop` run, or one `resumeModelLoop`). Also in `callId`. */
  readonly turnId: string
  readonly parentCallId: null
  readonly toolName: ''
}

/** Model text cut to {@link MAX_MODEL_TEXT_CHARS}: `textChars` says how long it was when it was cut. */
export interface RecordedText {
  readonly text: string
  /** The whole text's length in characters, present only when `text` was cut. */
  readonly textChars?: number
}

/** A model loop started a turn. */
export interface TurnStartedRecord extends ModelRecordBase, RecordedText {
  readonly type: 'turn-started'
  /** The model format the conversation is in. */
  readonly format: string
  /**
   * True for `resumeModelLoop`: it continues a turn an earlier record started (its prompt is there);
   * `text` is then ''.
   */
  readonly resumed: boolean
}

/** One call a `model-reply` emitted. */
export interface RecordedModelCall {
  readonly callId: string
  readonly name: string
}

/** The model answered one request of the turn: its text, and the calls it emitted (which run next). */
export interface ModelReplyRecord extends ModelRecordBase, RecordedText {
  readonly type: 'model-reply'
  /** The step's index in the turn's loop (0 for the first model request). */
  readonly step: number
  readonly calls: readonly RecordedModelCall[]
  /** The reply emitted more calls than {@link MAX_RECORDED_CALLS}: how many. */
  readonly callCount?: number
}

/** The tokens a step or a turn used (the loop's `TokenUsage`). */
export interface RecordedUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
  readonly cachedInputTokens?: number
  readonly reasoningTokens?: number
}

/** A step is over: its reply is in and each of its calls has its result. */
export interface StepEndedRecord extends ModelRecordBase {
  readonly type: 'step-ended'
  readonly step: number
  /** The tokens the step's model request used, when the provider reported them. */
  readonly usage?: RecordedUsage
  /**
   * How the scheduler ran the step's calls: each group is the call ids it ran together, in call
   * order — a run of parallel calls shares the parallel pool (they overlap), an exclusive call is a
   * group of its own. Only calls that ran in this process (a resume lists the ones it ran).
   */
  readonly groups: readonly (readonly string[])[]
}

/** The turn ended (any stop reason: done, concluded, max-steps, aborted, approval-required). */
export interface TurnEndedRecord extends ModelRecordBase {
  readonly type: 'turn-ended'
  readonly stopReason: string
  /** The tokens the turn used (a resume: the stored steps' too). */
  readonly usage: RecordedUsage
}

/** The records the model loop writes. */
export type ModelJournalRecord = TurnStartedRecord | ModelReplyRecord | StepEndedRecord | TurnEndedRecord

/**
 * One line of the journal. Readers must ignore unknown `type`s and unknown fields: later versions
 * add both (and keep `v` at 1 while they only add; `v` changes only when a record's existing fields
 * change meaning).
 */
export type JournalRecord =
  | CallStartedRecord
  | ApprovalAskedRecord
  | ApprovalAnsweredRecord
  | ResultRecord
  | CodeDispatchJournalRecord
  | ModelJournalRecord

/** Every journal record `type` this version writes. */
export type JournalRecordType = JournalRecord['type']
