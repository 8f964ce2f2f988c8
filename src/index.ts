// biome-ignore-all assist/source/organizeImports: the exports are grouped by topic, not sorted by path
// toolgate: the tool registry and execution pipeline of an LLM agent, as a Cordis 4 service.
//
// Every public name is listed here by hand, in groups, so this file is the table of contents of the
// package. test/public-api.test.ts fails on a runtime name that is exported but not listed there.
// Each public name has one home: the features with subpaths (`toolgate/code-mode`,
// `toolgate/presentation`, `toolgate/mcp` and the model adapters' subpath) are exported there and only there
// (docs/decisions.md, "Architecture"); the root never imports the model adapters.

// --- Getting started: a runtime, agents, and the `tools` service --------------------------------
// The preset: the core with Code Mode, the timeout policy and an approval service installed.
export {
  type CreateToolRuntimeOptions,
  createToolRuntime,
  ToolRuntime,
  ToolRuntime as default,
  type ToolRuntimeConfig,
  type ToolRuntimeHandle,
} from './preset/index.js'
// The core alone, and the host API features plug in through.
export {
  type AgentHandle,
  type CallPausing,
  createAgent,
  type ToolHider,
  type ToolHost,
  ToolRuntimeCore,
  type ToolRuntimeCoreConfig,
  type ToolTransport,
} from './runtime/index.js'

// One policy document for the library and the gateway: `createToolRuntime({ policy })`,
// `tools.setPolicy(policy, agent?)`, `tools.explain(call)`.
export {
  type PolicyDecision,
  type PolicyDocument,
  type PolicyInput,
  type PolicyQuota,
  type PolicyQuotaCheck,
  type PolicyRule,
  type PolicyRuleRef,
  type PolicyWho,
  type PolicyWhoInput,
  type ClaimValue as PolicyClaimValue,
  QuotaExceededError,
} from './policy/index.js'

// Tool search over deferred tools: the engine (or your own ranker) and the `search_tools` finder.
export {
  installToolSearch,
  type MatchReason,
  type PrepareOptions,
  type RankedTool,
  SEARCH_TOOLS_NAME,
  type TextEngineOptions,
  TextSearchEngine,
  type ToolSearch,
  type ToolSearchCallOptions,
  type ToolSearchEngine,
  type ToolSearchMatch,
  type ToolRanker,
  type ToolSearchDocument,
  type ToolSearchField,
  type ToolSearchOptions,
} from './search/index.js'

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
export type {
  ToolAnnotations,
  ToolDefinition,
  ToolMeta,
  ToolOutputDefinition,
  ToolResult,
  ToolSchema,
} from './contract/tool-definition.js'
export type {
  AudioContentBlock,
  ContentAnnotations,
  ContentBlock,
  ContentBlockExtras,
  ContentIcon,
  ContentMeta,
  EmbeddedBlobResource,
  EmbeddedResourceContentBlock,
  EmbeddedTextResource,
  ImageContentBlock,
  ResourceLinkContentBlock,
  TextContentBlock,
  UserMessage,
} from './contract/content.js'

// --- Calls and results: what `execute` takes and returns, what policies see ----------------------
export type {
  Agent,
  AgentIdentity,
  ApprovalAnswerSource,
  ApprovalContext,
  ApprovalOutcome,
  ApprovalOutcomeKind,
  ApprovalRequest,
  ApprovalService,
  CallId,
  PostToolDecision,
  PreToolDecision,
  ProgramResumption,
  ProgramSuspension,
  ScopeKey,
  StandingApprovalRule,
  StandingApprovalStore,
  ToolDispatchExecution,
  ToolExecuteOptions,
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
  TraceContext,
} from './contract/execution.js'

// --- Errors: the codes a failed result carries, and the classes toolgate throws -----------------
export { ERROR_CODES, type ErrorCode, type ErrorCodeInfo, type ErrorCodeSurface } from './errors/codes.js'
export { ToolgateError } from './errors/toolgate-error.js'
export { ConfigError } from './errors/config-error.js'
export {
  AgentDisposedError,
  RuntimeDisposedError,
  ToolAbortedBeforeDispatchError,
  ToolAbortedError,
  ToolDeniedError,
  ToolNotFoundError,
  ToolPipelineError,
  ToolSuspendedError,
  ToolTimeoutError,
  ToolRegistrationError,
} from './runtime/index.js'
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
export {
  type TerminalApprovalDecider,
  type TerminalApprovalOptions,
  terminalApproval,
} from './scheduling/terminal-approval.js'

// --- The session journal and its reader ------------------------------------------------------------
export { Journal, type JournalConfig, type JournalFileConfig, type JournalStoreConfig } from './journal/journal.js'
export { type ReadJournalOptions, readJournal, type SkippedJournalLine } from './journal/read-journal.js'
export { DEFAULT_MAX_LINE_BYTES, JournalReadError } from './journal/journal-limits.js'
export {
  type ApprovalAnsweredRecord,
  type ApprovalAskedRecord,
  type CallStartedRecord,
  type CodeDispatchJournalRecord,
  JOURNAL_VERSION,
  type JournalCredential,
  type JournalIdentity,
  type JournalPolicyDecision,
  type JournalRecord,
  type JournalRecordBase,
  type JournalRecordType,
  MAX_MODEL_TEXT_CHARS,
  MAX_RECORDED_CALLS,
  type ModelJournalRecord,
  type ModelRecordBase,
  type ModelReplyRecord,
  type RecordedModelCall,
  type RecordedText,
  type RecordedUsage,
  type ResultRecord,
  type StepEndedRecord,
  type TurnEndedRecord,
  type TurnStartedRecord,
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
