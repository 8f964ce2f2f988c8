// One table of error codes and one base class (issue 17): every code toolgate produces is a row of
// ERROR_CODES, every error it throws extends ToolgateError, and the guide's table is the module's.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pageErrorTable, renderErrorTable } from '../scripts/error-table.js'
import { UsageError } from '../src/cli/command.js'
import { ConfigError } from '../src/cli/config.js'
import * as codeMode from '../src/code-mode/index.js'
import { ERROR_CODES } from '../src/errors/codes.js'
import * as root from '../src/index.js'
import * as mcp from '../src/mcp/index.js'
import * as providers from '../src/providers/index.js'
import { RipgrepPatternError } from '../src/tools/ripgrep.js'

const src = new URL('../src/', import.meta.url)

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'client' ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

// Errors that deliberately stay plain `Error`s, and why.
const PLAIN_ERRORS: Record<string, string> = {
  // Thrown into a Code Mode program's guest: its own fields must be exactly toolName and message.
  ToolCallError: 'src/code-mode/errors.ts',
  // Internal to read_file, which catches it and reports its own message.
  BinaryFileError: 'src/tools/line-reader.ts',
}

describe('the error table', () => {
  const thrown = [
    new root.ToolNotFoundError('x'),
    new root.ToolArgsError(['args.a: expected string']),
    new root.ToolOutputError(['value: expected object']),
    new root.ToolDeniedError('x', 'no'),
    new root.ToolSuspendedError('x', 'later'),
    new root.ToolAbortedBeforeDispatchError('x'),
    new root.ToolAbortedError('x'),
    new root.ToolTimeoutError('x', 10),
    new root.RuntimeDisposedError('register'),
    new root.AgentDisposedError('a1', 'execute'),
    new root.ToolRegistrationError('tool "x"', ['name: expected a string']),
    new root.JsonSchemaError(['type: unsupported']),
    new root.JsonValueError('value', 'is undefined'),
    new root.WorkspacePathError('path: outside'),
    new root.CodeRunFailedError('syntax', 'bad', []),
    new mcp.McpToolError('closed'),
    new providers.ModelLoopError('failed', { messages: [], steps: [] }, new Error('cause')),
    new providers.ResumeStateError(['state: edited']),
    new RipgrepPatternError('bad pattern'),
    new ConfigError('toolgate.json', ['root: expected a string']),
    new UsageError('unknown flag'),
    new root.JournalReadError('session.jsonl', 'not a regular file (it is a device)'),
  ]

  it.each(thrown.map((error) => [error.name, error] as const))(
    '%s extends ToolgateError and its code is a row naming that class',
    (name, error) => {
      expect(error).toBeInstanceOf(root.ToolgateError)
      expect(error).toBeInstanceOf(Error)
      const row = (ERROR_CODES as Record<string, { errorClass?: string }>)[error.code]
      expect(row, `${name}: ${error.code} is not in ERROR_CODES`).toBeDefined()
      // ToolPipelineError subclasses share one class per code; the others name themselves.
      expect(row.errorClass).toBe(name)
    },
  )

  it('every code constant an entry point exports is a row', () => {
    const constants = [root, codeMode, mcp, providers].flatMap((module) =>
      Object.entries(module).filter(
        ([name, value]) => /^[A-Z][A-Z0-9_]*$/.test(name) && typeof value === 'string' && /^[A-Z][A-Z_]+$/.test(value),
      ),
    )
    expect(constants.length).toBeGreaterThan(15)
    for (const [name, value] of constants) expect(Object.keys(ERROR_CODES), name).toContain(value)
  })

  it('every UPPER_SNAKE string literal in src is a row or a known non-code', () => {
    // LC_ALL: an environment variable; ERR_WORKER_OUT_OF_MEMORY: Node's code for a worker past its resourceLimits.
    const notCodes = new Set(['LC_ALL', 'ERR_WORKER_OUT_OF_MEMORY'])
    const unknown: string[] = []
    for (const file of sourceFiles(src.pathname)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) {
        if (!(match[1] in ERROR_CODES) && !notCodes.has(match[1])) unknown.push(`${file}: ${match[1]}`)
      }
    }
    expect(unknown).toEqual([])
  })

  it('every error class in src extends ToolgateError (or is a listed exception)', () => {
    const plain: string[] = []
    for (const file of sourceFiles(src.pathname)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/^export (?:abstract )?class (\w+) extends Error\b/gm)) {
        if (match[1] !== 'ToolgateError' && !file.endsWith(PLAIN_ERRORS[match[1]] ?? '\0')) plain.push(match[1])
      }
    }
    expect(plain).toEqual([])
  })

  it('the rows are well-formed', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z_]+$/)
      expect(['result', 'thrown', 'result, thrown']).toContain(info.surface)
      expect(info.meaning).toMatch(/^\S.*\.$/)
    }
  })

  it('docs/guide/errors.md shows exactly this table (npx tsx scripts/error-table.ts --write)', () => {
    const page = readFileSync(new URL('../docs/guide/errors.md', import.meta.url), 'utf8')
    expect(pageErrorTable(page)).toBe(renderErrorTable())
  })
})
