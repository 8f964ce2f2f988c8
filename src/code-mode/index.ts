export type {
  CodeBindingCall,
  CodeBindingOutcome,
  CodeDraws,
  CodeRunFailureReason,
  CodeRunOutcome,
  CodeRunRequest,
  CodeRuntime,
} from './code-runtime.js'
export { RUN_CODE_NAME } from './constants.js'
export { CodeReplayDivergedError, CodeRunFailedError, CodeTypeError, ToolCallError } from './errors.js'
export type { CodeDispatchLog, CodeDispatchRecord } from './events.js'
export { CodeMode, installCodeMode } from './plugin.js'
export type { CodeTypeCheckMode } from './program-checker.js'
export { createQuickJsRuntime, QuickJsCodeRuntime, type QuickJsRuntimeOptions } from './quickjs-runtime.js'
export {
  type CodeModeHost,
  type CodeModeOptions,
  createRunCodeDefinition,
  RUN_CODE_DESCRIPTION,
  RUN_CODE_OUTPUT_SCHEMA,
  RUN_CODE_PARAMETERS,
  type RunCodeArgs,
  type RunCodeValue,
  renderRunCodeContent,
} from './run-code.js'
export {
  type JsonSchemaToTsOptions,
  jsonSchemaToTs,
  type RenderToolsSdkOptions,
  renderToolsSdk,
  type SdkToolEntry,
} from './sdk.js'
export type { CodeRuntimeChoice, CodeRuntimeSelection } from './select-runtime.js'
export {
  createWorkerRuntime,
  WorkerCodeRuntime,
  type WorkerCodeRuntimeOptions,
  type WorkerPoolStats,
  type WorkerResourceLimits,
} from './worker-runtime.js'
