import type { ContentBlock } from '../contract/content.js'
import type {
  Agent,
  ApprovalAnswerSource,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  PostToolDecision,
  PreToolDecision,
  ToolDispatchExecution,
  ToolExecution,
  ToolExecutionResult,
  ToolProgress,
} from '../contract/execution.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolRuntimeCore } from './service.js'

declare module 'cordis' {
  interface Context {
    approval?: ApprovalService
  }

  interface Events {
    /** The visible tool set of some scope changed. Unfiltered. */
    'tools/change'(): void
    /**
     * A definition joined a layer (`agent` undefined: the global layer), before `tools/change`.
     * Unfiltered synchronous observer, for indexes kept beside the registry; failures are logged.
     */
    'tools/registered'(definition: ToolDefinition, agent: Agent | undefined): void
    /** A definition left its layer (unregistered or its owner disposed). Like `tools/registered`. */
    'tools/unregistered'(definition: ToolDefinition, agent: Agent | undefined): void
    /**
     * A call entered the pipeline (its arguments are materialized; nothing has run yet).
     * Scope-filtered synchronous observer: a throwing listener is logged and never reaches the call.
     */
    'tools/call'(this: ToolRuntimeCore, exec: Readonly<ToolExecution>): void
    /** A policy asked and the request goes to the approval step. Scope-filtered synchronous observer. */
    'tools/approval-asked'(this: ToolRuntimeCore, request: ApprovalRequest, exec: Readonly<ToolExecution>): void
    /** The approval step answered (after normalization). Scope-filtered synchronous observer. */
    'tools/approval-answered'(
      this: ToolRuntimeCore,
      request: ApprovalRequest,
      outcome: ApprovalOutcome,
      source: ApprovalAnswerSource,
      exec: Readonly<ToolExecution>,
    ): void
    /** Allow, deny, or ask before dispatch. Scope-filtered waterfall. */
    'tools/pre-execute'(
      this: ToolRuntimeCore,
      exec: ToolExecution,
      next: () => Promise<PreToolDecision>,
    ): Promise<PreToolDecision>
    /** Around-dispatch waterfall; wrappers may change only `exec.signal`. Scope-filtered. */
    'tools/execute'(
      this: ToolRuntimeCore,
      exec: ToolDispatchExecution,
      next: () => Promise<ToolExecutionResult>,
    ): Promise<ToolExecutionResult>
    /** Accept, replace, or block a normalized result. Scope-filtered waterfall. */
    'tools/post-execute'(
      this: ToolRuntimeCore,
      exec: ToolExecution,
      result: Readonly<ToolExecutionResult>,
      next: () => Promise<PostToolDecision>,
    ): Promise<PostToolDecision>
    /**
     * A running tool reported progress through `exec.progress(...)`. Scope-filtered synchronous
     * observer; a throwing listener is logged and never reaches the tool.
     */
    'tools/progress'(this: ToolRuntimeCore, exec: Readonly<ToolExecution>, progress: Readonly<ToolProgress>): void
    /**
     * The last-mile content seam of every call, after the definition's own `finalizeContent`:
     * the same contract (synchronous, called once per outcome, `undefined` keeps the content, only
     * content may change; a throw or invalid content becomes a `FINALIZE_FAILED` result that no
     * later finalizer sees). Listeners run in registration order, each seeing the previous answer.
     * Scope-filtered.
     */
    'tools/finalize-content'(
      this: ToolRuntimeCore,
      exec: Readonly<ToolExecution>,
      result: Readonly<ToolExecutionResult>,
    ): ContentBlock[] | undefined
    /** Observe the frozen final outcome. Scope-filtered emit; failures contained. */
    'tools/result'(this: ToolRuntimeCore, exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): void
  }
}

export type { ToolDefinition }
