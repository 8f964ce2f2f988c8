// toolgate: the tool registry and execution pipeline of an LLM agent, as a Cordis 4 service.
// Lossless JSON (R-JSON)

// Code Mode (R-CODE)
export * from './code-mode/index.js'
// The session journal and its reader (issue #14)
export * from './journal/index.js'
export type { JsonObject, JsonValue } from './json/index.js'
export { isJsonValue, JsonValueError, snapshotJsonValue } from './json/index.js'
// OpenTelemetry tracing (loads the optional @opentelemetry/api peer only when the plugin is constructed)
export { type OtelTracerProviderLike, OtelTracing, type OtelTracingConfig } from './observability/otel-tracing.js'
// Presentation helpers and the terminal card renderer (also the `toolgate/presentation` subpath)
export * from './presentation/index.js'
export { type AgentHandle, createAgent } from './runtime/agent.js'
export { type CreateToolRuntimeOptions, createToolRuntime, type ToolRuntimeHandle } from './runtime/create.js'
export { ToolRegistrationError } from './runtime/definition-check.js'
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
export type { Scoped } from './runtime/events.js'
// Registry and pipeline (R-REG, R-EXEC)
export { ToolRuntimeCore, type ToolRuntimeCoreConfig } from './runtime/service.js'
// The preset: the core with Code Mode installed (R-CODE)
export { ToolRuntime, ToolRuntime as default, type ToolRuntimeConfig } from './runtime/tool-runtime.js'
export type { ToolTransport } from './runtime/transport.js'
export type * from './runtime/types.js'
// Scheduling and policies (R-SCHED)
export * from './scheduling/index.js'
export type { ContentBlock, ImageContentBlock, TextContentBlock, UserMessage } from './schema/content.js'
// Raw JSON Schema subset, DSL, defineTool (R-JSCHEMA, R-DSL, R-DEF)
export * from './schema/index.js'
export type { ToolDefinition, ToolOutputDefinition, ToolResult, ToolSchema } from './schema/tool-definition.js'
// First-party reference tools
export * from './tools/index.js'
