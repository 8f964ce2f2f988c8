// toolgate/mcp is a subpath of the BUILT package, and the package root never loads the MCP SDK.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))

/** Static import graph of a built module (dynamic imports are lazy by definition). */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>()
  const stack = [entry]
  while (stack.length) {
    const file = stack.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    if (!file.startsWith('/')) continue
    const text = readFileSync(file, 'utf8')
    for (const match of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'|^import\s+'([^']+)'/gm)) {
      const spec = match[1] ?? match[2]
      stack.push(spec.startsWith('.') ? path.resolve(path.dirname(file), spec) : spec)
    }
  }
  return seen
}

describe('toolgate/mcp (built)', () => {
  it('is an exports subpath with types, and the bin is the built CLI', () => {
    expect(pkg.exports['./mcp']).toEqual({ types: './dist/mcp/index.d.ts', import: './dist/mcp/index.js' })
    expect(pkg.bin).toEqual({ toolgate: './dist/cli/bin.js' })
    expect(readFileSync(path.join(root, 'dist/cli/bin.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
  })

  it('exports connectMcpServer and createMcpServer', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('toolgate/mcp'); console.log(JSON.stringify(Object.keys(m).sort()))",
      ],
      { cwd: root, encoding: 'utf8' },
    )
    expect(JSON.parse(out)).toEqual(['McpToolError', 'connectMcpServer', 'createMcpServer'])
  })

  it('the package root does not import the MCP SDK', () => {
    const graph = [...staticGraph(path.join(root, 'dist/index.js'))]
    expect(graph.some((file) => file.includes('dist/runtime/'))).toBe(true)
    expect(graph.filter((file) => file.includes('modelcontextprotocol') || file.includes('/mcp/'))).toEqual([])
  })
})
