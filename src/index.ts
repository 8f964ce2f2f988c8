// biome-ignore-all assist/source/organizeImports: the exports are grouped by topic, not sorted by path
// toolgate: the tool registry and execution pipeline of an LLM agent, as a Cordis 4 service.
//
// Every public name is listed here by hand, in groups, so this file is the table of contents of the
// package. test/public-api.test.ts fails on a runtime name that is exported but not listed there.
// The subpaths (`toolgate/presentation`, `toolgate/mcp`, `toolgate/code-mode` and the model adapters'
// subpath) have their own index files; the root never imports the model adapters.

// --- Getting started: a runtime, agents, and the `tools` service --------------------------------
export { type AgentHandle, createAgent } from './runtime/agent.js'
export { type CreateToolRuntimeOptions, createToolRuntime, type ToolRuntimeHandle } from './runtime/create.js'
export { ToolRuntimeCore, type ToolRuntimeCoreConfig } from './runtime/service.js'
// The preset service: the core with Code Mode installed (also the default export, for `ctx.plugin`).
export { ToolRuntime, ToolRuntime as default, type ToolRuntimeConfig } from './runtime/tool-runtime.js'
export type { ToolTransport } from './runtime/transport.js'
export type { Scoped } from './runtime/events.js'

// --- Declaring tools: defineTool, the schema DSL and the definition types --------------------------
export {
  type ArgsOfSchema,
  type DefineToolOutput,
  type DefineToolSpec,
  defineTool,
  type OutputSchemaInput,
  type ParametersInput,
  type ToolArgsOf,
  type ToolValueOf,
  type TypedToolDefinition,
  type ValueOfSchema,
} from './schema/define-tool.js'
export type { InferArgs, InferValue } from './schema/infer.js'
// A Standard JSON Schema (zod 4, arktype, valibot's toStandardJsonSchema) in place of a DSL spec
export type { InferStandardOutput, StandardJsonSchema } from './schema/standard-schema.js'
export type {
  ArrayValueSchemaSpec,
  BooleanValueSchemaSpec,
  IntegerValueSchemaSpec,
  JsonValueSchemaSpec,
  NullValueSchemaSpec,
  NumberValueSchemaSpec,
  ObjectPropertySpec,
  ObjectValueSchemaSpec,
  OneOfValueSchemaSpec,
  ParameterPropertySpec,
  ParameterSchemaSpec,
  SchemaSpecAnnotations,
  StringValueSchemaSpec,
  ValueSchemaSpec,
} from './schema/spec.js'
export type { ToolDefinition, ToolOutputDefinition, ToolResult, ToolSchema } from './contract/tool-definition.js'
export type { ContentBlock, ImageContentBlock, TextContentBlock, UserMessage } from './contract/content.js'

// --- Calls and results: what `execute` takes and returns, what policies see ----------------------
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
} from './contract/execution.js'

// --- Errors: the codes a failed result carries, and the classes toolgate throws -----------------
export { ERROR_CODES, type ErrorCode, type ErrorCodeInfo, type ErrorCodeSurface } from './errors/codes.js'
export { ToolgateError } from './errors/toolgate-error.js'
export {
  ABORTED,
  ABORTED_BEFORE_DISPATCH,
  AGENT_DISPOSED,
  AgentDisposedError,
  APPROVAL_SUSPENDED,
  FINALIZE_FAILED,
  INTERNAL_ERROR,
  INVALID_ARGS,
  INVALID_DECISION,
  INVALID_INPUT,
  INVALID_RESULT,
  INVALID_TOOL_OUTPUT,
  POLICY_ERROR,
  RENDER_FAILED,
  RUNTIME_DISPOSED,
  RuntimeDisposedError,
  TOOL_ABORTED,
  TOOL_ABORTED_BEFORE_DISPATCH,
  TOOL_BLOCKED,
  TOOL_DENIED,
  TOOL_ERROR,
  TOOL_TIMEOUT,
  ToolAbortedBeforeDispatchError,
  ToolAbortedError,
  ToolDeniedError,
  ToolNotFoundError,
  ToolPipelineError,
  ToolSuspendedError,
  ToolTimeoutError,
  UNKNOWN_TOOL,
} from './runtime/errors.js'
export { ToolRegistrationError } from './runtime/definition-check.js'
export { JsonSchemaError, ToolArgsError, ToolOutputError } from './schema/errors.js'
export { JsonValueError } from './json/json-value-error.js'

// --- Scheduling and policies: batches, deadlines, result budgets, approval services -------------
export {
  type BatchCallResult,
  type BatchResult,
  type BatchToolRuntime,
  DEFAULT_MAX_PARALLEL,
  type ExecuteBatchOptions,
  executeBatch,
} from './scheduling/execute-batch.js'
export { TimeoutPolicy, type TimeoutPolicyConfig } from './scheduling/timeout-policy.js'
export {
  capContent,
  DEFAULT_RESULT_BUDGET_BYTES,
  ResultBudget,
  type ResultBudgetConfig,
} from './scheduling/result-budget.js'
export {
  type ApprovalInputStream,
  type ApprovalOutputStream,
  CallbackApproval,
  type CallbackApprovalConfig,
  normalizeApprovalOutcome,
  TerminalApproval,
  type TerminalApprovalConfig,
} from './scheduling/approval.js'
export { SuspendingApproval, type SuspendingApprovalConfig } from './scheduling/suspending-approval.js'

// --- The session journal and its reader ------------------------------------------------------------
export { Journal, type JournalConfig } from './journal/journal.js'
export { type ReadJournalOptions, readJournal, type SkippedJournalLine } from './journal/read-journal.js'
export { DEFAULT_MAX_LINE_BYTES, JournalReadError } from './journal/open-journal.js'
export {
  type ApprovalAnsweredRecord,
  type ApprovalAskedRecord,
  type CallStartedRecord,
  type CodeDispatchJournalRecord,
  JOURNAL_VERSION,
  type JournalRecord,
  type JournalRecordBase,
  type JournalRecordType,
  type ResultRecord,
} from './journal/records.js'

// --- Observability: OpenTelemetry spans (loads the optional @opentelemetry/api peer lazily) ------
export { type OtelTracerProviderLike, OtelTracing, type OtelTracingConfig } from './observability/otel-tracing.js'

// --- First-party tools: workspace-confined file tools and bash ------------------------------------
export { type FsToolsOptions, createBashTool, createFsTools } from './tools/index.js'
export type { BashToolOptions } from './tools/bash.js'
export type { BashSandboxMode } from './tools/sandbox.js'
export { DEFAULT_FS_TOOL_LIMITS, type FsToolLimits } from './tools/limits.js'
export { compileGlob, expandBraces, type GlobMatcher } from './tools/glob-match.js'
export { WorkspacePathError } from './tools/workspace-error.js'

// --- Lossless JSON: the value type every argument and result is -----------------------------------
export type { JsonObject, JsonValue } from './contract/json-value.js'
export { isJsonValue, snapshotJsonValue } from './json/snapshot.js'

// --- Tool schemas: the enforced JSON Schema subset and its validator -------------------------------
export {
  assertObjectJsonSchema,
  assertSupportedJsonSchema,
  collectJsonSchemaIssues,
  isKnownSupportedJsonSchema,
  JSON_SCHEMA_TYPES,
} from './schema/assert.js'
export { parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema } from './schema/compile.js'
export type { JsonSchemaNode, JsonSchemaScalar, JsonSchemaType, ObjectJsonSchema } from './contract/json-schema.js'
export { getArgsValidator, validateArgs } from './schema/validate-args.js'
export {
  type CompiledJsonSchemaValidator,
  getJsonSchemaValidator,
  validateJsonSchemaValue,
} from './schema/validator.js'

// --- Code Mode: one TypeScript program calls the tools (also `toolgate/code-mode`) -----------------
export {
  type CodeBindingCall,
  type CodeBindingOutcome,
  type CodeDispatchLog,
  type CodeDispatchRecord,
  type CodeModeHost,
  type CodeModeOptions,
  type CodeRunFailureReason,
  type CodeRunOutcome,
  type CodeRunRequest,
  type CodeRuntime,
  type CodeRuntimeChoice,
  type CodeRuntimeSelection,
  CODE_RUN_FAILED,
  CodeMode,
  CodeRunFailedError,
  createQuickJsRuntime,
  createRunCodeDefinition,
  createWorkerRuntime,
  installCodeMode,
  type JsonSchemaToTsOptions,
  jsonSchemaToTs,
  QuickJsCodeRuntime,
  type QuickJsRuntimeOptions,
  type RenderToolsSdkOptions,
  RUN_CODE_DESCRIPTION,
  RUN_CODE_NAME,
  RUN_CODE_OUTPUT_SCHEMA,
  RUN_CODE_PARAMETERS,
  type RunCodeArgs,
  type RunCodeValue,
  renderRunCodeContent,
  renderToolsSdk,
  type SdkToolEntry,
  ToolCallError,
  WorkerCodeRuntime,
  type WorkerCodeRuntimeOptions,
  type WorkerPoolStats,
  type WorkerResourceLimits,
} from './code-mode/index.js'

// --- Presentation: cards for a UI, and the terminal renderer (also `toolgate/presentation`) -------
export {
  buildDiffResultView,
  DIFF_CONTEXT_LINES,
  DIFF_MAX_EDIT_LENGTH,
  defaultTerminalColor,
  diffCard,
  diffFile,
  type FileChange,
  type FileDiff,
  type FileDiffSummary,
  type FileLocation,
  type GroupedSearchMatches,
  type GroupSearchOptions,
  genericCallView,
  genericResultView,
  groupSearchMatches,
  languageFromPath,
  type ReadFileLine,
  type ReadWindow,
  readWindow,
  renderToolCallLines,
  renderToolResultLines,
  type SearchFileMatches,
  type SearchMatch,
  sanitizeContent,
  splitLines,
  type TerminalRenderOptions,
  type ToolCallKind,
  type ToolCallView,
  type ToolResultView,
  type WebSource,
} from './presentation/index.js'
