// The public names the issues promise, checked against the package's own entry points.
import { describe, expect, it } from 'vitest'
import * as codeMode from '../src/code-mode/index.js'
import * as root from '../src/index.js'
import * as mcp from '../src/mcp/index.js'
import * as presentation from '../src/presentation/index.js'
import * as providers from '../src/providers/index.js'
import * as testing from '../src/testing/index.js'

const rootValues = [
  // foundation
  'isJsonValue',
  'snapshotJsonValue',
  'JsonValueError',
  'assertSupportedJsonSchema',
  'assertObjectJsonSchema',
  'validateJsonSchemaValue',
  'JsonSchemaError',
  'valueSchemaSpecToJsonSchema',
  'parameterSchemaSpecToJsonSchema',
  'validateArgs',
  'ToolArgsError',
  'ToolOutputError',
  'defineTool',
  // registry and pipeline
  'ToolRuntime',
  'createToolRuntime',
  'createAgent',
  'ToolNotFoundError',
  // scheduling
  'executeBatch',
  'TimeoutPolicy',
  'ResultBudget',
  'OtelTracing',
  'CallbackApproval',
  'TerminalApproval',
  // approvals and the journal
  'ToolSuspendedError',
  'Journal',
  'readJournal',
  'SuspendingApproval',
  'JOURNAL_VERSION',
  // tools
  'createFsTools',
  'createBashTool',
] as const

const codeModeValues = [
  'jsonSchemaToTs',
  'renderToolsSdk',
  'createQuickJsRuntime',
  'createWorkerRuntime',
  'CodeMode',
  'CodeRunFailedError',
  'ToolCallError',
  'RUN_CODE_NAME',
] as const

describe('public exports', () => {
  it.each(rootValues)('the package root exports %s', (name) => {
    expect(root[name]).toBeDefined()
  })

  it('the default export is ToolRuntime, and the codes have their documented values', () => {
    expect(root.default).toBe(root.ToolRuntime)
    expect(codeMode.RUN_CODE_NAME).toBe('run_code')
    // Codes have one home, ERROR_CODES (issue 21): no string constant or alias beside it.
    for (const code of ['UNKNOWN_TOOL', 'INVALID_ARGS', 'INVALID_TOOL_OUTPUT', 'TOOL_TIMEOUT', 'ABORTED']) {
      expect(root.ERROR_CODES).toHaveProperty(code)
      expect(root).not.toHaveProperty(code)
    }
    expect(root).not.toHaveProperty('TOOL_ABORTED')
    expect(root).not.toHaveProperty('TOOL_ABORTED_BEFORE_DISPATCH')
    expect(new root.ToolArgsError(['args.a: expected string']).code).toBe('INVALID_ARGS')
    expect(new root.ToolNotFoundError('x').code).toBe('UNKNOWN_TOOL')
  })

  it.each(codeModeValues)('toolgate/code-mode exports %s', (name) => {
    expect(codeMode[name]).toBeDefined()
  })

  it('the presentation subpath carries the card helpers', () => {
    for (const name of [
      'diffCard',
      'readWindow',
      'languageFromPath',
      'groupSearchMatches',
      'renderToolCallLines',
      'renderToolResultLines',
    ] as const) {
      expect(presentation[name]).toBeTypeOf('function')
    }
  })

  // Each public name has one home (docs/decisions.md, "Architecture"): the root never repeats a subpath.
  it.each([
    ['toolgate/code-mode', codeMode],
    ['toolgate/presentation', presentation],
    ['toolgate/mcp', mcp],
    ['toolgate/providers', providers],
    ['toolgate/testing', testing],
  ] as const)('no name of %s is exported again from the root', (_path, subpath) => {
    const twice = Object.keys(subpath).filter((name) => name in root)
    expect(twice).toEqual([])
  })
})
