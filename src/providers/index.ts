// toolgate/providers: provider tool formats, the model loop and SDK adapters.
// The SDKs are optional peer dependencies: this module imports them as types only.

export { type AiSdkToolsOptions, type AiSdkToolsRuntime, toAiSdkTools } from './ai-sdk.js'
export { type AnthropicModelOptions, anthropicModel } from './anthropic-model.js'
export { PROVIDER_FORMATS, parseToolCalls, toProviderMessages, toProviderTools } from './formats.js'
export { type GeminiModelOptions, geminiModel } from './gemini-model.js'
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
export { type OpenAIChatModelOptions, openAIChatModel } from './openai-chat-model.js'
export { type OpenAIResponsesModelOptions, openAIResponsesModel } from './openai-responses-model.js'
export {
  type ResumeModelLoopOptions,
  type ResumeModelLoopResult,
  ResumeStateError,
  resumeModelLoop,
  type UnprovenCall,
} from './resume.js'
export type { StateKey } from './state-seal.js'
export { type ModelLoopDoneEvent, type StreamModelLoopEvent, streamModelLoop } from './stream-loop.js'
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
} from './types.js'
export type { TokenUsage } from './usage.js'
