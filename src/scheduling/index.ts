// Scheduling and policies (R-SCHED): the batch executor, the timeout policy, approval services.

export {
  type ApprovalInputStream,
  type ApprovalOutputStream,
  CallbackApproval,
  type CallbackApprovalConfig,
  normalizeApprovalOutcome,
  TerminalApproval,
  type TerminalApprovalConfig,
} from './approval.js'
export {
  type BatchCallResult,
  type BatchResult,
  type BatchToolRuntime,
  DEFAULT_MAX_PARALLEL,
  type ExecuteBatchOptions,
  executeBatch,
} from './execute-batch.js'
export { capContent, DEFAULT_RESULT_BUDGET_BYTES, ResultBudget, type ResultBudgetConfig } from './result-budget.js'
export { SuspendingApproval, type SuspendingApprovalConfig } from './suspending-approval.js'
export {
  type TerminalApprovalDecider,
  type TerminalApprovalOptions,
  terminalApproval,
} from './terminal-approval.js'
export { TimeoutPolicy, type TimeoutPolicyConfig } from './timeout-policy.js'
