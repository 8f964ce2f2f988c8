// A Code Mode program kept in the gateway's store while its sub-calls' approvals are put to an MCP
// 2026-07-28 client as an input-required result: what the 2026 face (server-modern.ts) needs of
// the keeper that holds it (the gateway's, src/gateway/program-rounds.ts). The first round keeps
// the paused program and names it in the sealed requestState; the retry records the client's
// decisions and continues the program from its replay log, on whichever instance takes it.
import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../../contract/execution.js'
import type { AuthInfo } from '../protocol/wire-types.js'

/** Where a paused program is kept, and the sub-calls it waits for (to be asked of the client). */
export interface KeptPause {
  readonly turnId: string
  readonly waiting: readonly ApprovalRequest[]
}

/** What a kept program's round ended with: its result, or another pause. */
export type KeptRound = { readonly result: ToolExecutionResult } | { readonly paused: KeptPause }

/** A 2026 client's answers to a kept program's waiting sub-calls, as its opened state names them. */
export interface KeptAnswers {
  readonly turnId: string
  /** The sub-calls the state asked about, in the order they were asked. */
  readonly calls: readonly string[]
  /** The client's decision for each of `calls`. */
  readonly decisions: Readonly<Record<string, ApprovalOutcome>>
  readonly authInfo?: AuthInfo
  /** The arguments of the retried call (the program's own). */
  readonly arguments: unknown
  /** Ends the wait for the program's next round (the client went away). */
  readonly signal: AbortSignal
}

export interface KeptProgramRounds {
  /** Whether a call of `name` by this caller is kept when its sub-calls ask. */
  keeps(name: string, agent: Agent | undefined, authInfo: AuthInfo | undefined): boolean
  /** Run the call: its result, or, when its program paused on approvals, where it is kept. */
  run(
    input: ToolExecutionInput,
    options: ToolExecuteOptions,
    run: (options: ToolExecuteOptions) => Promise<ToolExecutionResult>,
    call: { readonly authInfo?: AuthInfo; readonly programId?: unknown },
  ): Promise<KeptRound>
  /**
   * Record the client's decisions and continue the program: its next round, or why the answers are
   * refused (nothing ran then).
   */
  answer(answers: KeptAnswers): Promise<KeptRound | { readonly refused: string }>
}
