/** Where a code shows up. */
export type ErrorCodeSurface =
  /** As `result.error.info.code` of a failed tool call: the model sees it, nothing is thrown. */
  | 'result'
  /** As the `code` of an error thrown to the caller of a toolgate API. */
  | 'thrown'
  /** Both: a failed call's result, and a throw from the non-call methods (`register`, `get`, ...). */
  | 'result, thrown'
  /** As `error.data.reason` of a JSON-RPC error that `toolgate serve` answers its MCP client. */
  | 'mcp'

/** One row of {@link ERROR_CODES}. */
export interface ErrorCodeInfo {
  /** What went wrong, in one sentence. */
  readonly meaning: string
  /** Where the code shows up. */
  readonly surface: ErrorCodeSurface
  /** The error class that carries the code, when one does. */
  readonly errorClass?: string
}

/**
 * Every error code toolgate produces, with its meaning: the one table the documentation renders
 * (a test keeps `docs/guide/errors.md` equal to it). A tool's own thrown error keeps its own
 * string `code` (say `ENOENT`); a thrown value without one is reported as `TOOL_ERROR`.
 */
export const ERROR_CODES = {
  // The call never reached the tool's body.
  UNKNOWN_TOOL: {
    meaning: 'The named tool is not registered, or the calling scope cannot see it.',
    surface: 'result',
    errorClass: 'ToolNotFoundError',
  },
  INVALID_ARGS: {
    meaning: "The arguments do not match the tool's parameter schema; every violation is listed with its path.",
    surface: 'result',
    errorClass: 'ToolArgsError',
  },
  INVALID_INPUT: {
    meaning: 'The execute input itself is malformed (for example an agent that createAgent did not make).',
    surface: 'result',
  },
  TOOL_DENIED: {
    meaning: 'A policy, a guard or the approver denied the call; the reason is in the message the model sees.',
    surface: 'result',
    errorClass: 'ToolDeniedError',
  },
  APPROVAL_SUSPENDED: {
    meaning: 'The call waits for an approval decision that will arrive later, possibly in another process.',
    surface: 'result',
    errorClass: 'ToolSuspendedError',
  },
  ABORTED_BEFORE_DISPATCH: {
    meaning: "The call was cancelled before the tool's body started.",
    surface: 'result',
    errorClass: 'ToolAbortedBeforeDispatchError',
  },
  RUNTIME_DISPOSED: {
    meaning: 'The runtime was disposed: it registers and runs nothing more.',
    surface: 'result, thrown',
    errorClass: 'RuntimeDisposedError',
  },
  AGENT_DISPOSED: {
    meaning: 'The calling agent was disposed: its scope registers and runs nothing more.',
    surface: 'result, thrown',
    errorClass: 'AgentDisposedError',
  },
  // The body ran, or was running.
  ABORTED: {
    meaning: "The call was cancelled while the tool's body was running.",
    surface: 'result',
    errorClass: 'ToolAbortedError',
  },
  TOOL_TIMEOUT: {
    meaning: "The call's deadline passed (or, with an idle timeout, it reported no progress for that long).",
    surface: 'result',
    errorClass: 'ToolTimeoutError',
  },
  TOOL_ERROR: {
    meaning: 'The tool threw a value that carries no string code of its own.',
    surface: 'result',
  },
  INVALID_TOOL_OUTPUT: {
    meaning: "The body's value does not satisfy the tool's output schema; every violation is listed with its path.",
    surface: 'result',
    errorClass: 'ToolOutputError',
  },
  RENDER_FAILED: {
    meaning: "The tool's render function threw or returned content that is not valid.",
    surface: 'result',
  },
  // Policies.
  QUOTA_EXCEEDED: {
    meaning:
      "A policy rule's quota is used up for this window; `retryAfterMs` in the error info says when the next call is allowed.",
    surface: 'result',
    errorClass: 'QuotaExceededError',
  },
  POLICY_ERROR: {
    meaning: 'A policy listener (pre-execute, guard, around-dispatch, post-execute) threw or misused next().',
    surface: 'result',
  },
  INVALID_DECISION: {
    meaning: 'A policy listener answered with a decision that is not one of the allowed shapes.',
    surface: 'result',
  },
  INVALID_RESULT: {
    meaning: 'An around-dispatch listener returned something that is not a valid tool result.',
    surface: 'result',
  },
  TOOL_BLOCKED: {
    meaning: "A post-execute policy blocked the tool's result; the model sees the policy's feedback instead.",
    surface: 'result',
  },
  FINALIZE_FAILED: {
    meaning: 'A finalizeContent listener threw or returned content that is not valid.',
    surface: 'result',
  },
  INTERNAL_ERROR: {
    meaning: 'toolgate itself failed while running the call (a bug: please report it).',
    surface: 'result',
  },
  // First-party tools and integrations (the body throws; the call ends with the code).
  PATH_OUTSIDE_WORKSPACE: {
    meaning: "A file tool's path is malformed or leads outside the workspace root.",
    surface: 'result',
    errorClass: 'WorkspacePathError',
  },
  INVALID_PATTERN: {
    meaning: "grep's pattern is not a regular expression ripgrep accepts.",
    surface: 'result',
    errorClass: 'RipgrepPatternError',
  },
  CODE_RUN_FAILED: {
    meaning:
      'A run_code program produced no result: syntax error, uncaught throw, non-JSON return value, or a CPU, memory, stack or call limit.',
    surface: 'result',
    errorClass: 'CodeRunFailedError',
  },
  CODE_TYPE_ERROR: {
    meaning:
      "A run_code program does not type-check against its agent's SDK (codeMode.typeCheck 'refuse'); nothing of it ran.",
    surface: 'result',
    errorClass: 'CodeTypeError',
  },
  CODE_REPLAY_DIVERGED: {
    meaning:
      'A run_code program resumed after an approval asked for other sub-calls than its replay log holds (or the log is not its own); nothing new of it ran.',
    surface: 'result',
    errorClass: 'CodeReplayDivergedError',
  },
  APPROVAL_ASKED_AGAIN: {
    meaning:
      "A kept gateway program's sub-call asked for approval again under the id of one whose decision was already used; a call is decided once, so the program ended.",
    surface: 'result',
  },
  INVALID_PROGRAM_ID: {
    meaning:
      'The name a client gave its run_code program (_meta "toolgate/program") is not 1 to 128 visible ASCII characters.',
    surface: 'result',
  },
  PROGRAM_ID_TAKEN: {
    meaning:
      'The caller named a run_code program with a name its kept program of other arguments already has; nothing ran.',
    surface: 'result',
  },
  PROGRAM_NOT_KEPT: {
    meaning:
      "The kept turn of the named run_code program does not verify under the state key (or is not the caller's); nothing ran.",
    surface: 'result',
  },
  PROGRAM_ENDED: {
    meaning:
      'The kept run_code program a client waited for ended without a result it could be given; its result is in the journal.',
    surface: 'result',
  },
  PROGRAM_RESUME_FAILED: {
    meaning:
      'A kept run_code program failed to resume three times in a row on one gateway instance (the message says why), so it ended; its claims were given back after each failure.',
    surface: 'result',
  },
  MCP_TOOL_ERROR: {
    meaning: 'A remote MCP tool failed: the server answered with an error, closed, or did not answer in time.',
    surface: 'result',
    errorClass: 'McpToolError',
  },
  MCP_REQUEST_FAILED: {
    meaning:
      "A request about an MCP server's resources, prompts or completions failed: the server answered with an error, did not declare the capability, closed, or did not answer in time.",
    surface: 'thrown',
    errorClass: 'McpRequestError',
  },
  OUTCOME_UNKNOWN: {
    meaning: 'On resume: an earlier attempt of the call started but left no result anywhere, so it is not run again.',
    surface: 'result',
  },
  ALREADY_RUN: {
    meaning:
      'On resume with a journal: another resume of the same state claimed the call first (it ran there), so it is not run again.',
    surface: 'result',
  },
  RESULT_NOT_RECORDED: {
    meaning:
      "toolgate serve withheld a tool call's result because its journal record could not be committed to the store (JSON-RPC error -32010); the call may have run.",
    surface: 'mcp',
  },
  // Thrown to the caller of an API.
  INVALID_REGISTRATION: {
    meaning: 'register() refused a tool definition; every issue is listed and the registry is unchanged.',
    surface: 'thrown',
    errorClass: 'ToolRegistrationError',
  },
  INVALID_JSON_SCHEMA: {
    meaning: 'A schema uses JSON Schema that toolgate does not enforce; every offending path is listed.',
    surface: 'thrown',
    errorClass: 'JsonSchemaError',
  },
  INVALID_JSON_VALUE: {
    meaning: 'A value is not lossless JSON (undefined, a function, NaN, a cycle, a class instance, ...).',
    surface: 'thrown',
    errorClass: 'JsonValueError',
  },
  MODEL_REQUEST_FAILED: {
    meaning: 'The model loop could not get a reply from the model; the error carries the conversation so far.',
    surface: 'thrown',
    errorClass: 'ModelLoopError',
  },
  INVALID_RESUME: {
    meaning:
      'resumeModelLoop refused a state or decisions (edited, truncated, from another format or agent); nothing ran.',
    surface: 'thrown',
    errorClass: 'ResumeStateError',
  },
  INVALID_CONFIG: {
    meaning:
      "An option, config value or argument given to a toolgate API (or the command line's config file) is not valid; path names it.",
    surface: 'result, thrown',
    errorClass: 'ConfigError',
  },
  INVALID_USAGE: {
    meaning: 'The toolgate command line was called with arguments it does not understand.',
    surface: 'thrown',
    errorClass: 'UsageError',
  },
  INVALID_JOURNAL: {
    meaning:
      'A journal reader refused its file: not a regular file (a device, FIFO or directory), or a line longer than maxLineBytes.',
    surface: 'thrown',
    errorClass: 'JournalReadError',
  },
  STORE_UNAVAILABLE: {
    meaning:
      'The state store (PostgreSQL) could not be reached or failed mid-operation; nothing was recorded by the failed operation, and it may be retried.',
    surface: 'thrown',
    errorClass: 'StoreError',
  },
  STORE_SCHEMA: {
    meaning:
      'The state store holds a newer schema than this version of toolgate knows (or a migration failed); it is not used.',
    surface: 'thrown',
    errorClass: 'StoreError',
  },
  UPSTREAM_CREDENTIAL: {
    meaning:
      "The caller's own credential for an upstream could not be had: a static-token caller of a token-exchange server, a refused or mismatched exchange, or no secret of theirs in the vault.",
    surface: 'result',
    errorClass: 'UpstreamCredentialError',
  },
} as const satisfies Record<string, ErrorCodeInfo>

/** A code listed in {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES
