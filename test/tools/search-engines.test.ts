import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createFsTools } from '../../src/tools/index.js'
import { bundledRipgrep } from '../../src/tools/ripgrep.js'
import { byName, fakeRunContext, tempDir } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }

async function write(rel: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(path.join(ws.dir, rel)), { recursive: true })
  await writeFile(path.join(ws.dir, rel), content)
}

async function run(tool: ToolDefinition, args: Record<string, unknown>, controller?: AbortController) {
  return (await tool.execute(args, fakeRunContext(tool.name, args, controller))) as Record<string, unknown>
}

const grepPaths = (value: Record<string, unknown>) => (value.files as Array<{ path: string }>).map((f) => f.path)

beforeEach(async () => {
  ws = await tempDir('engines')
  await write('.gitignore', 'dist/\n*.log\n!keep.log\n')
  await write('src/a.ts', 'export const needle = 1\n')
  await write('src/b.tsx', 'export const needle = 2\n')
  await write('src/file1.ts', 'needle one\n')
  await write('src/fileX.ts', 'needle x\n')
  await write('src/a.test.ts', 'needle test\n')
  await write('dist/out.js', 'needle built\n')
  await write('debug.log', 'needle log\n')
  await write('keep.log', 'needle kept\n')
  await write('.hidden/secret.ts', 'needle hidden\n')
  await write('nested/.gitignore', 'generated.ts\n')
  await write('nested/generated.ts', 'needle generated\n')
  await write('nested/real.ts', 'needle real\n')
  await write('node_modules/pkg/index.js', 'needle dep\n')
  await write('blob.bin', Buffer.concat([Buffer.from('needle'), Buffer.alloc(16), Buffer.from('needle')]))
})

afterEach(async () => {
  await ws.cleanup()
})

describe('grep on ripgrep', () => {
  it('the bundled ripgrep binary is installed from the npm registry', () => {
    const rg = bundledRipgrep()
    expect(rg).toBeDefined()
    expect(rg).toMatch(/@vscode[\\/]ripgrep-[a-z0-9]+-[a-z0-9]+[\\/]bin[\\/]rg(\.exe)?$/)
  })

  it('honours .gitignore (nested files and negation), skips binaries, .git and node_modules, searches dotfiles', async () => {
    const grep = byName(createFsTools({ root: ws.dir }), 'grep')
    const value = await run(grep, { pattern: 'needle' })
    expect(grepPaths(value)).toEqual([
      '.hidden/secret.ts',
      'keep.log',
      'nested/real.ts',
      'src/a.test.ts',
      'src/a.ts',
      'src/b.tsx',
      'src/file1.ts',
      'src/fileX.ts',
    ])
    expect(value.total).toBe(8)
    expect(value.truncated).toBe(false)
  })

  it('huge output (lines with 100,000 hits, non-UTF-8 text, many files): caps hold, every match is counted', async () => {
    // A minified-style line: ripgrep's JSON for it lists 100,000 submatches (megabytes on one line).
    await write('a-min/huge.js', `${'needle;'.repeat(100_000)}\n`)
    for (let i = 0; i < 60; i++) await write(`many/f${String(i).padStart(2, '0')}.txt`, 'needle\nneedle again\n')
    await write('latin1.txt', Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' needle\n')]))
    const tools = createFsTools({ root: ws.dir, limits: { grepMaxMatches: 50, grepMaxLineChars: 40 } })
    const value = await run(byName(tools, 'grep'), { pattern: 'needle' })
    // 8 searched fixture lines (the rest is ignored or binary) + the huge line + 120 in many/ + Latin-1.
    expect(value.total).toBe(8 + 1 + 120 + 1)
    expect(value.truncated).toBe(true)
    const matches = (value.files as Array<{ path: string; matches: Array<{ line: number; text: string }> }>).flatMap(
      (f) => f.matches.map((m) => ({ path: f.path, ...m })),
    )
    expect(matches).toHaveLength(50)
    const latin = matches.find((m) => m.path === 'latin1.txt')
    expect(latin?.text).toBe('caf\ufffd needle')
    const huge = matches.find((m) => m.path === 'a-min/huge.js')
    expect(huge?.line).toBe(1)
    expect(huge?.text.startsWith('needle;needle;')).toBe(true)
    expect(huge!.text.length).toBeLessThan(100)
  })

  it('the JavaScript fallback finds the same files', async () => {
    const grep = byName(createFsTools({ root: ws.dir, ripgrep: false }), 'grep')
    const value = await run(grep, { pattern: 'needle' })
    expect(grepPaths(value)).toEqual([
      '.hidden/secret.ts',
      'keep.log',
      'nested/real.ts',
      'src/a.test.ts',
      'src/a.ts',
      'src/b.tsx',
      'src/file1.ts',
      'src/fileX.ts',
    ])
    expect(value.filesSkipped).toBe(1)
  })

  it('globs filter by name at any depth, or by path below `path`', async () => {
    for (const ripgrep of [undefined, false] as const) {
      const grep = byName(createFsTools({ root: ws.dir, ripgrep }), 'grep')
      expect(grepPaths(await run(grep, { pattern: 'needle', glob: '*.tsx' }))).toEqual(['src/b.tsx'])
      expect(grepPaths(await run(grep, { pattern: 'needle', glob: 'file[0-9].ts', path: 'src' }))).toEqual([
        'src/file1.ts',
      ])
      expect(grepPaths(await run(grep, { pattern: 'needle', path: 'nested' }))).toEqual(['nested/real.ts'])
    }
  })

  it('a pattern ripgrep refuses is a clear, path-qualified error; the fallback speaks JavaScript', async () => {
    const grep = byName(createFsTools({ root: ws.dir }), 'grep')
    await expect(run(grep, { pattern: '(unclosed' })).rejects.toThrow(
      /^pattern: invalid regular expression "\(unclosed": regex parse error/,
    )
    await expect(run(grep, { pattern: 'needle(?= one)' })).rejects.toThrow(
      /^pattern: invalid regular expression "needle\(\?= one\)": .*look-around.*\(ripgrep's Rust regex syntax has no look-around or backreferences\)$/,
    )
    expect(
      (grep.parameters as { properties: { pattern: { description: string } } }).properties.pattern.description,
    ).toMatch(/Rust/)
    const js = byName(createFsTools({ root: ws.dir, ripgrep: false }), 'grep')
    expect(grepPaths(await run(js, { pattern: 'needle(?= one)' }))).toEqual(['src/file1.ts'])
  })

  it('a ripgrep binary that cannot run is a clear error', async () => {
    const grep = byName(createFsTools({ root: ws.dir, ripgrep: path.join(ws.dir, 'no-such-rg') }), 'grep')
    await expect(run(grep, { pattern: 'x' })).rejects.toThrow(/^grep: could not run ripgrep \(.*no-such-rg\): /)
  })

  it('stays inside the workspace: no symlink is followed, and path escapes are refused', async () => {
    const outside = await tempDir('outside')
    try {
      await writeFile(path.join(outside.dir, 'x.ts'), 'needle outside\n')
      await symlink(outside.dir, path.join(ws.dir, 'escape'))
      await symlink(path.join(outside.dir, 'x.ts'), path.join(ws.dir, 'escape.ts'))
      const grep = byName(createFsTools({ root: ws.dir }), 'grep')
      const value = await run(grep, { pattern: 'outside' })
      expect(value.total).toBe(0)
      await expect(run(grep, { pattern: 'x', path: '../' })).rejects.toThrow(/'\.\.' segments are not allowed/)
      await expect(run(grep, { pattern: 'x', path: 'escape' })).rejects.toThrow(/outside the workspace/)
    } finally {
      await outside.cleanup()
    }
  })

  it('cancellation kills the ripgrep process', async () => {
    // Millions of matching lines: the search is still streaming when the abort lands.
    const filler = 'filler line\n'.repeat(300_000)
    await Promise.all(Array.from({ length: 10 }, (_, f) => write(`big/${f}.txt`, filler)))
    const grep = byName(createFsTools({ root: ws.dir }), 'grep')
    const controller = new AbortController()
    const marker = `cancel-marker-${process.pid}-${Date.now()}`
    const pending = run(grep, { pattern: `${marker}|filler` }, controller)
    // Wait until the process exists, then abort.
    let pid: number | undefined
    for (let i = 0; i < 400 && pid === undefined; i++) {
      pid = findProcess(marker)
      if (pid === undefined) await new Promise((r) => setTimeout(r, 5))
    }
    controller.abort(new DOMException('stop', 'AbortError'))
    await expect(pending).rejects.toThrow('stop')
    expect(pid).toBeDefined()
    expect(processRunning(pid ?? 0)).toBe(false)
    expect(findProcess(marker)).toBeUndefined()
  })
})

describe('glob and list_dir on tinyglobby/picomatch', () => {
  it('glob: character classes, extglobs, braces; .gitignore honoured; dotfiles only when named', async () => {
    const glob = byName(createFsTools({ root: ws.dir }), 'glob')
    const paths = async (pattern: string) => (await run(glob, { pattern })).paths
    expect(await paths('src/file[0-9].ts')).toEqual(['src/file1.ts'])
    expect(await paths('src/!(*.test).ts')).toEqual(['src/a.ts', 'src/file1.ts', 'src/fileX.ts'])
    expect(await paths('**/*.{ts,tsx}')).toEqual([
      'nested/real.ts',
      'src/a.test.ts',
      'src/a.ts',
      'src/b.tsx',
      'src/file1.ts',
      'src/fileX.ts',
    ])
    expect(await paths('**/*.log')).toEqual(['keep.log'])
    expect(await paths('dist/**')).toEqual([])
    expect(await paths('.hidden/*.ts')).toEqual(['.hidden/secret.ts'])
    expect(await paths('**/*.js')).toEqual([])
    await expect(run(glob, { pattern: '../*' })).rejects.toThrow(/must not contain '\.\.'/)
    await expect(run(glob, { pattern: '/etc/*' })).rejects.toThrow(/relative to the workspace/)
  })

  it('glob: the entry budget cuts the walk and marks it truncated', async () => {
    const glob = byName(createFsTools({ root: ws.dir, limits: { walkMaxEntries: 5 } }), 'glob')
    const value = await run(glob, { pattern: '**/*' })
    expect(value.truncated).toBe(true)
  })

  it('list_dir: hides what .gitignore ignores (and counts it), lists dotfiles, filters by pattern', async () => {
    const list = byName(createFsTools({ root: ws.dir }), 'list_dir')
    const root = await run(list, {})
    const names = (root.entries as Array<{ name: string }>).map((e) => e.name)
    expect(names).toEqual(['.gitignore', '.hidden', 'blob.bin', 'keep.log', 'nested', 'node_modules', 'src'])
    expect(root.ignored).toBe(2)
    const nested = await run(list, { path: 'nested' })
    expect((nested.entries as Array<{ name: string }>).map((e) => e.name)).toEqual(['.gitignore', 'real.ts'])
    expect(nested.ignored).toBe(1)
    const filtered = await run(list, { path: 'src', pattern: '*.@(ts|tsx)' })
    expect((filtered.entries as Array<{ name: string }>).map((e) => e.name)).toEqual([
      'a.test.ts',
      'a.ts',
      'b.tsx',
      'file1.ts',
      'fileX.ts',
    ])
    const text = list.output.render({}, root as never)
    expect(text[0].type === 'text' && text[0].text).toMatch(/\(2 entries ignored by \.gitignore not shown\)$/)
  })
})

/** The pid of a live process whose command line contains `needle`, if any. */
function findProcess(needle: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (cmdline.includes(needle) && processRunning(Number(entry))) return Number(entry)
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined
}

function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}
