// Every runtime name each entry point exports, listed by hand: a name added to (or dropped from) an
// index file fails here until this list says so, so the public surface only changes on purpose.
// (Type-only exports have no runtime trace; the consumer check in scripts/check-consumer.ts and
// the API reference cover those.)
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const entryPoints: Record<string, { module: () => Promise<Record<string, unknown>>; names: readonly string[] }> = {
  root: {
    module: () => import('../src/index.js'),
    names: [
      'AgentDisposedError',
      'CallbackApproval',
      'ConfigError',
      'DEFAULT_FS_TOOL_LIMITS',
      'DEFAULT_MAX_LINE_BYTES',
      'DEFAULT_MAX_PARALLEL',
      'DEFAULT_RESULT_BUDGET_BYTES',
      'ERROR_CODES',
      'JOURNAL_VERSION',
      'JSON_SCHEMA_TYPES',
      'Journal',
      'JournalReadError',
      'JsonSchemaError',
      'JsonValueError',
      'MAX_MODEL_TEXT_CHARS',
      'MAX_RECORDED_CALLS',
      'OtelTracing',
      'ResultBudget',
      'RuntimeDisposedError',
      'SEARCH_TOOLS_NAME',
      'SuspendingApproval',
      'TerminalApproval',
      'terminalApproval',
      'TextSearchEngine',
      'TimeoutPolicy',
      'ToolAbortedBeforeDispatchError',
      'ToolAbortedError',
      'ToolArgsError',
      'ToolDeniedError',
      'ToolNotFoundError',
      'ToolOutputError',
      'ToolPipelineError',
      'ToolRegistrationError',
      'ToolRuntime',
      'ToolRuntimeCore',
      'ToolSuspendedError',
      'ToolTimeoutError',
      'ToolgateError',
      'WorkspacePathError',
      'assertObjectJsonSchema',
      'assertSupportedJsonSchema',
      'capContent',
      'collectJsonSchemaIssues',
      'compileGlob',
      'createAgent',
      'createBashTool',
      'createFsTools',
      'createToolRuntime',
      'default',
      'defineTool',
      'executeBatch',
      'expandBraces',
      'getArgsValidator',
      'getJsonSchemaValidator',
      'installToolSearch',
      'isJsonValue',
      'isKnownSupportedJsonSchema',
      'normalizeApprovalOutcome',
      'parameterSchemaSpecToJsonSchema',
      'readJournal',
      'snapshotJsonValue',
      'validateArgs',
      'validateJsonSchemaValue',
      'valueSchemaSpecToJsonSchema',
    ],
  },
  'toolgate/presentation': {
    module: () => import('../src/presentation/index.js'),
    names: [
      'DIFF_CONTEXT_LINES',
      'DIFF_MAX_EDIT_LENGTH',
      'buildDiffResultView',
      'defaultTerminalColor',
      'diffCard',
      'diffFile',
      'genericCallView',
      'genericResultView',
      'groupSearchMatches',
      'languageFromPath',
      'readWindow',
      'renderToolCallLines',
      'renderToolResultLines',
      'sanitizeContent',
      'splitLines',
    ],
  },
  'toolgate/providers': {
    module: () => import('../src/providers/index.js'),
    names: [
      'DEFAULT_MAX_STEPS',
      'ModelLoopError',
      'PROVIDER_FORMATS',
      'ResumeStateError',
      'deferredSchemas',
      'parseToolCalls',
      'resumeModelLoop',
      'runModelLoop',
      'streamModelLoop',
      'toProviderMessages',
      'toProviderTools',
    ],
  },
  'toolgate/testing': {
    module: () => import('../src/testing/index.js'),
    names: ['scriptedModel', 'startFakeProvider'],
  },
  // One subpath per SDK (issue 25): toolgate/providers names no SDK type.
  'toolgate/providers/openai': {
    module: () => import('../src/providers/openai/index.js'),
    names: ['openAIChatModel', 'openAIResponsesModel'],
  },
  'toolgate/providers/anthropic': {
    module: () => import('../src/providers/anthropic/index.js'),
    names: ['anthropicModel'],
  },
  'toolgate/providers/gemini': {
    module: () => import('../src/providers/gemini/index.js'),
    names: ['geminiModel'],
  },
  'toolgate/providers/ai-sdk': {
    module: () => import('../src/providers/ai-sdk/index.js'),
    names: ['toAiSdkTools'],
  },
  'toolgate/providers/openai-agents': {
    module: () => import('../src/providers/openai-agents/index.js'),
    names: ['toAgentsTools'],
  },
  'toolgate/mcp': {
    module: () => import('../src/mcp/index.js'),
    names: [
      'McpClientDirectory',
      'McpRequestError',
      'McpToolError',
      'connectMcpServer',
      'createMcpOAuthProvider',
      'createMcpRelay',
      'createMcpServer',
    ],
  },
  'toolgate/code-mode': {
    module: () => import('../src/code-mode/index.js'),
    names: [
      'CodeMode',
      'CodeRunFailedError',
      'CodeTypeError',
      'QuickJsCodeRuntime',
      'WorkerCodeRuntime',
      'RUN_CODE_DESCRIPTION',
      'RUN_CODE_NAME',
      'RUN_CODE_OUTPUT_SCHEMA',
      'RUN_CODE_PARAMETERS',
      'ToolCallError',
      'createQuickJsRuntime',
      'createWorkerRuntime',
      'createRunCodeDefinition',
      'installCodeMode',
      'jsonSchemaToTs',
      'renderRunCodeContent',
      'renderToolsSdk',
    ],
  },
  // issue 26: the state store; `pg` loads only when a PostgreSQL store opens.
  'toolgate/store': {
    module: () => import('../src/store/index.js'),
    names: ['SCHEMA_VERSION', 'StoreError', 'createFileStore', 'createPostgresStore', 'standingApprovalsIn'],
  },
}

describe('the public names of each entry point', () => {
  it.each(Object.keys(entryPoints))('%s exports exactly the listed names', async (label) => {
    const entry = entryPoints[label]
    const exported = Object.keys(await entry.module()).sort()
    expect(exported).toEqual([...entry.names].sort())
  })

  it('package.json exports exactly these entry points', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    const subpaths = Object.keys(pkg.exports).filter((key) => key !== './package.json')
    const expected = Object.keys(entryPoints).map((label) => (label === 'root' ? '.' : label.replace('toolgate', '.')))
    expect(subpaths.sort()).toEqual(expected.sort())
  })

  it('the root index names every export explicitly, in commented groups', () => {
    const index = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8')
    expect(index).not.toMatch(/export\s+(type\s+)?\*/)
    expect(index.match(/^\/\/ --- /gm)?.length).toBeGreaterThanOrEqual(8)
  })
})
