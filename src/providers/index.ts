// toolgate/providers: provider tool formats, the model loop and SDK adapters.
// Nothing here names an SDK type, so it type-checks with any set of the optional SDKs installed:
// the adapters live in toolgate/providers/openai, …/anthropic, …/gemini and …/ai-sdk.

export { PROVIDER_FORMATS, parseToolCalls, toProviderMessages, toProviderTools } from './formats.js'
export type { ModelDelta, ModelReply, ModelRequest, ProviderModel } from './model.js'
export {
  DEFAULT_MAX_STEPS,
  type ModelLoopCallResult,
  ModelLoopError,
  type ModelLoopEvent,
  type ModelLoopPending,
  type ModelLoopResult,
  type ModelLoopState,
  type ModelLoopStep,
  type ModelLoopStopReason,
  type ModelLoopTools,
  type RunModelLoopOptions,
  runModelLoop,
} from './model-loop.js'
export {
  type ResumeModelLoopOptions,
  type ResumeModelLoopResult,
  ResumeStateError,
  resumeModelLoop,
  type UnprovenCall,
} from './resume.js'
export type { StateKey } from './state-seal.js'
export { type ModelLoopDoneEvent, type StreamModelLoopEvent, streamModelLoop } from './stream-loop.js'
export { type DeferredToolsSource, deferredSchemas } from './tool-search.js'
export type {
  ParseToolCallsOptions,
  ProviderBatch,
  ProviderBatchEntry,
  ProviderFormat,
  ProviderMessage,
  ProviderMessageMap,
  ProviderResponse,
  ProviderResponseMap,
  ProviderTool,
  ProviderToolCall,
  ProviderToolMap,
  ProviderTools,
  ProviderToolsOptions,
  ToolSearchMode,
  UntypedProviderValue,
} from './types.js'
export type { TokenUsage } from './usage.js'
