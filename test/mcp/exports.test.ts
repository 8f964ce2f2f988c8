// toolgate/mcp is a subpath of the BUILT package, and the package root never loads the MCP SDK.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))

/** Every module URL a fresh process resolves while importing `specifier` (dynamic imports included). */
function loadedModules(specifier: string): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolgate-mcp-graph-'))
  try {
    const logFile = path.join(dir, 'loaded.log')
    const recorder = pathToFileURL(path.join(root, 'test/fixtures/load-recorder.mjs')).href
    const script = `import { register } from 'node:module'
      register(${JSON.stringify(recorder)}, { data: { logFile: ${JSON.stringify(logFile)} } })
      await import(${JSON.stringify(specifier)})`
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: 'pipe', timeout: 60_000 })
    return readFileSync(logFile, 'utf8').split('\n').filter(Boolean)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('toolgate/mcp (built)', () => {
  it('is an exports subpath with types, and the bin is the built CLI', () => {
    expect(pkg.exports['./mcp']).toEqual({ types: './dist/mcp/index.d.ts', import: './dist/mcp/index.js' })
    // The executable is CommonJS (no ES module loader at start); bin.js stays for code that ran it by path.
    expect(pkg.bin).toEqual({ toolgate: './dist/cli/bin.cjs' })
    for (const file of ['dist/cli/bin.cjs', 'dist/cli/bin.js'])
      expect(readFileSync(path.join(root, file), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
  })

  it('exports connectMcpServer, createMcpOAuthProvider and createMcpServer', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('toolgate/mcp'); console.log(JSON.stringify(Object.keys(m).sort()))",
      ],
      { cwd: root, encoding: 'utf8' },
    )
    expect(JSON.parse(out)).toEqual([
      'McpClientDirectory',
      'McpRequestError',
      'McpToolError',
      'connectMcpServer',
      'createMcpOAuthProvider',
      'createMcpRelay',
      'createMcpServer',
    ])
  })

  it('the package root does not import the MCP SDK', () => {
    const urls = loadedModules('toolgate')
    const own = urls.filter((url) => url.startsWith(pathToFileURL(path.join(root, 'dist')).href))
    expect(own.length).toBeGreaterThan(0)
    expect(urls.filter((url) => url.includes('modelcontextprotocol'))).toEqual([])
    // The entry is bundled, so MCP code would show up as its own names, not as a file path.
    const mcpCode = own.filter((url) =>
      /\b(connectMcpServer|createMcpServer)\b/.test(readFileSync(fileURLToPath(url), 'utf8')),
    )
    expect(mcpCode).toEqual([])
    // The check can fail: the MCP subpath's own graph does contain both.
    const mcpUrls = loadedModules('toolgate/mcp')
    expect(mcpUrls.some((url) => url.includes('modelcontextprotocol'))).toBe(true)
  })
})
