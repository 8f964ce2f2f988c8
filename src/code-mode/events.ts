import type { ContentBlock } from '../contract/content.js'
import type { Agent, CallId, ToolExecution } from '../contract/execution.js'
import type { ToolRuntimeCore } from '../runtime/index.js'

/** One settled `run_code` sub-dispatch about to be logged. */
export interface CodeDispatchLog {
  readonly exec: ToolExecution
  readonly agent?: Agent
  readonly subCallId: CallId
  readonly name: string
  readonly isError: boolean
  readonly content: ContentBlock[]
}

/** A durable copy of one settled Code Mode sub-dispatch, for a session log. */
export interface CodeDispatchRecord {
  readonly parentCallId: string
  readonly rootCallId: string
  readonly subCallId: string
  readonly name: string
  readonly isError: boolean
  readonly content: ContentBlock[]
}

declare module 'cordis' {
  interface Events {
    /** Replace the durable log copy of one `run_code` sub-dispatch's content. Scope-filtered. */
    'tools/code-dispatch-log'(
      this: ToolRuntimeCore,
      dispatch: CodeDispatchLog,
      next: () => Promise<ContentBlock[]>,
    ): Promise<ContentBlock[]>
    /** The durable record of one settled `run_code` sub-dispatch. Scope-filtered emit. */
    'tools/code-dispatch'(this: ToolRuntimeCore, record: CodeDispatchRecord, dispatch: CodeDispatchLog): void
  }
}
