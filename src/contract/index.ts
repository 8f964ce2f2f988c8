// The tool contract: what a tool is (definition, schema, content), what a call is (execution,
// run context, decisions, approvals) and what it yields (the result), as types only. This folder
// imports nothing from the rest of toolgate (test/contract.test.ts checks), so every layer (the
// schema DSL, the runtime, policies, providers, MCP, the viewer) builds on the same vocabulary.

export type { ContentBlock, ImageContentBlock, TextContentBlock, UserMessage } from './content.js'
export type {
  Agent,
  ApprovalAnswerSource,
  ApprovalContext,
  ApprovalOutcome,
  ApprovalOutcomeKind,
  ApprovalRequest,
  ApprovalService,
  CallId,
  PostToolDecision,
  PreToolDecision,
  ScopeKey,
  StandingApprovalRule,
  ToolDispatchExecution,
  ToolErrorInfo,
  ToolExecution,
  ToolExecutionFailure,
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolExecutionSuccess,
  ToolExecutionToken,
  ToolFailure,
  ToolGuard,
  ToolPresentationMode,
  ToolProgress,
  ToolRestriction,
  ToolRunContext,
} from './execution.js'
export type { JsonSchemaNode, JsonSchemaScalar, JsonSchemaType, ObjectJsonSchema } from './json-schema.js'
export type { JsonObject, JsonValue } from './json-value.js'
export type { ToolDefinition, ToolOutputDefinition, ToolResult, ToolSchema } from './tool-definition.js'
export type {
  FileDiff,
  FileLocation,
  ReadFileLine,
  SearchFileMatches,
  ToolCallKind,
  ToolCallView,
  ToolResultView,
  WebSource,
} from './views.js'
