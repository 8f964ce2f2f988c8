import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createFsTools } from '../../src/tools/index.js'
import { byName, fakeRunContext, runTool, tempDir, textOf } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }
let tools: ToolDefinition[]
const tool = (name: string) => byName(tools, name)

const A_TS = 'export const a = 1\nexport const b = 2\n// note\nexport function c() {}\nconst d = 4\n'

beforeEach(async () => {
  ws = await tempDir('fs')
  await mkdir(path.join(ws.dir, 'src/sub'), { recursive: true })
  await mkdir(path.join(ws.dir, 'node_modules/pkg'), { recursive: true })
  await mkdir(path.join(ws.dir, '.git'), { recursive: true })
  await writeFile(path.join(ws.dir, 'src/a.ts'), A_TS)
  await writeFile(path.join(ws.dir, 'src/sub/b.ts'), 'export const b = "sub"\n')
  await writeFile(path.join(ws.dir, 'README.md'), '# Title\nexport nothing here\n')
  await writeFile(path.join(ws.dir, '.env'), 'SECRET=export\n')
  await writeFile(path.join(ws.dir, 'node_modules/pkg/index.ts'), 'export const dep = 1\n')
  await writeFile(path.join(ws.dir, '.git/config.ts'), 'export const git = 1\n')
  await writeFile(path.join(ws.dir, 'blob.bin'), Buffer.from([0x65, 0x78, 0x00, 0x70, 0x6f, 0x72, 0x74]))
  tools = createFsTools({ root: ws.dir })
})

afterEach(async () => {
  await ws.cleanup()
})

describe('R-DEF reference file tools: definitions (issue 7)', () => {
  it('createFsTools returns the six file tools in order with exact parameter names', () => {
    expect(tools.map((t) => t.name)).toEqual(['read_file', 'write_file', 'edit_file', 'glob', 'grep', 'list_dir'])
    const props = (name: string) => Object.keys((tool(name).parameters as { properties: object }).properties)
    expect(props('read_file')).toEqual(['path', 'offset', 'limit'])
    expect(props('write_file')).toEqual(['path', 'content'])
    expect(props('edit_file')).toEqual(['path', 'old_string', 'new_string'])
    expect(props('glob')).toEqual(['pattern'])
    expect(props('grep')).toEqual(['pattern', 'path', 'glob'])
    expect(props('list_dir')).toEqual(['path', 'pattern'])
  })

  it('reads are concurrency-safe with timeouts; writes are exclusive', () => {
    for (const name of ['read_file', 'glob', 'grep', 'list_dir']) {
      expect(tool(name).isConcurrencySafe?.({ path: 'x', pattern: 'x' })).toBe(true)
      expect(tool(name).timeoutMs).toBeGreaterThan(0)
    }
    for (const name of ['write_file', 'edit_file']) expect(tool(name).isConcurrencySafe?.({}) ?? false).toBe(false)
  })

  it('every definition carries an output schema, render, presentationMeta and both presenters', () => {
    for (const t of tools) {
      expect(typeof t.output.schema).toBe('object')
      expect(typeof t.output.render).toBe('function')
      expect(typeof t.output.presentationMeta).toBe('function')
      expect(typeof t.presentCall).toBe('function')
      expect(typeof t.presentResult).toBe('function')
    }
  })
})

describe('R-VIEW read_file → read card (issue 7)', () => {
  it('returns a numbered 1-based window and a read card derived from meta', async () => {
    const args = { path: 'src/a.ts', offset: 2, limit: 2 }
    const { value, result } = await runTool(tool('read_file'), args)
    expect(value).toEqual({
      path: 'src/a.ts',
      offset: 2,
      lines: [
        { number: 2, text: 'export const b = 2' },
        { number: 3, text: '// note' },
      ],
      totalLines: 5,
      totalLinesExact: true,
      truncated: true,
      cutLines: 0,
    })
    expect(textOf(result)).toBe(
      '     2\texport const b = 2\n     3\t// note\n(showing lines 2-3 of 5; continue with offset=4)',
    )
    expect(tool('read_file').presentCall?.(args)).toEqual({
      card: 'generic',
      title: 'Read src/a.ts',
      kind: 'read',
      locations: [{ path: 'src/a.ts', line: 2 }],
    })
    expect(tool('read_file').presentResult?.(args, result)).toEqual({
      card: 'read',
      title: 'Read src/a.ts',
      path: 'src/a.ts',
      offset: 2,
      lines: [
        { number: 2, text: 'export const b = 2' },
        { number: 3, text: '// note' },
      ],
      totalLines: 5,
      lang: 'typescript',
      content: 'export const b = 2\n// note',
    })
  })

  it('a whole small file is not truncated; an offset past the end keeps the offset', async () => {
    const whole = await runTool(tool('read_file'), { path: 'src/a.ts' })
    expect(whole.value).toMatchObject({ totalLines: 5, truncated: false })
    const past = await runTool(tool('read_file'), { path: 'src/a.ts', offset: 40 })
    expect(past.value).toMatchObject({ offset: 40, lines: [], totalLines: 5, truncated: false })
    expect(textOf(past.result)).toMatch(/offset 40 is past the end of the file, which has 5 lines/)
    const card = tool('read_file').presentResult?.({ path: 'src/a.ts', offset: 40 }, past.result)
    expect(card).toMatchObject({ card: 'read', offset: 40, lines: [], totalLines: 5 })
  })

  it('refuses missing files, directories, binary files and bad offsets with clear errors', async () => {
    const read = (args: object) => tool('read_file').execute(args, fakeRunContext('read_file', args))
    await expect(read({ path: 'nope.ts' })).rejects.toThrow('path: nope.ts does not exist')
    await expect(read({ path: 'src' })).rejects.toThrow('path: src is a directory (use list_dir)')
    await expect(read({ path: 'blob.bin' })).rejects.toThrow('path: blob.bin is a binary file; refusing to read it')
    await expect(read({ path: 'src/a.ts', offset: 0 })).rejects.toThrow('offset: expected an integer ≥ 1, got 0')
    await expect(read({ path: 'src/a.ts', limit: -1 })).rejects.toThrow('limit: expected an integer ≥ 1, got -1')
  })

  it('a huge file yields a bounded window and a lower-bound line count', async () => {
    const line = `${'x'.repeat(63)}\n`
    await writeFile(path.join(ws.dir, 'huge.txt'), line.repeat(400_000)) // 25.6 MB
    const { value } = await runTool(tool('read_file'), { path: 'huge.txt' })
    const v = value as { lines: unknown[]; totalLines: number; totalLinesExact: boolean; truncated: boolean }
    expect(v.lines).toHaveLength(2000)
    expect(v.truncated).toBe(true)
    expect(v.totalLinesExact).toBe(false)
    expect(v.totalLines).toBeGreaterThanOrEqual(2000)
    expect(v.totalLines).toBeLessThan(400_000)
  })

  it('a single enormous line is cut, marked, and counted as one line', async () => {
    await writeFile(path.join(ws.dir, 'long.txt'), 'y'.repeat(5_000_000))
    const { value, result } = await runTool(tool('read_file'), { path: 'long.txt' })
    const v = value as { lines: Array<{ text: string }>; totalLines: number; cutLines: number; truncated: boolean }
    expect(v.lines).toHaveLength(1)
    expect(v.lines[0].text).toBe(`${'y'.repeat(2000)}…`)
    expect(v).toMatchObject({ totalLines: 1, cutLines: 1, truncated: true })
    expect(textOf(result)).toMatch(/1 long line\(s\) cut at 2000 characters/)
  })

  it('clamps limit to the configured maximum and says the window is partial', async () => {
    const small = createFsTools({ root: ws.dir, limits: { readMaxLines: 2 } })
    const { value } = await runTool(byName(small, 'read_file'), { path: 'src/a.ts', limit: 100 })
    expect(value).toMatchObject({ lines: [{ number: 1 }, { number: 2 }], truncated: true, totalLines: 5 })
  })

  it('honours an aborted signal', async () => {
    const controller = new AbortController()
    controller.abort()
    const args = { path: 'src/a.ts' }
    await expect(tool('read_file').execute(args, fakeRunContext('read_file', args, controller))).rejects.toThrow()
  })
})

describe('R-VIEW write_file → diff card (issue 7)', () => {
  it('a new file (parents created) is a full-file diff with oldText null', async () => {
    const args = { path: 'new/dir/c.ts', content: 'one\ntwo\n' }
    const { value, result } = await runTool(tool('write_file'), args)
    expect(await readFile(path.join(ws.dir, 'new/dir/c.ts'), 'utf8')).toBe('one\ntwo\n')
    expect(value).toEqual({ path: 'new/dir/c.ts', created: true, bytes: 8, added: 2, removed: 0, diffs: [] })
    expect(textOf(result)).toBe('Created new/dir/c.ts (8 bytes, 2 lines)')
    expect(result.meta).toEqual({ path: 'new/dir/c.ts', created: true, diffs: [] })
    expect(tool('write_file').presentResult?.(args, result)).toEqual({
      card: 'diff',
      title: 'Created new/dir/c.ts',
      diffs: [{ path: 'new/dir/c.ts', oldText: null, newText: 'one\ntwo\n' }],
    })
    expect(tool('write_file').presentCall?.(args)).toEqual({
      card: 'generic',
      title: 'Write new/dir/c.ts',
      kind: 'edit',
      locations: [{ path: 'new/dir/c.ts' }],
    })
  })

  it('an overwrite is a diff of context hunks', async () => {
    const args = { path: 'src/a.ts', content: A_TS.replace('// note', '// changed') }
    const { value, result } = await runTool(tool('write_file'), args)
    expect(value).toMatchObject({ created: false, added: 1, removed: 1 })
    const card = tool('write_file').presentResult?.(args, result)
    expect(card).toEqual({
      card: 'diff',
      title: 'Updated src/a.ts',
      diffs: [{ path: 'src/a.ts', oldText: A_TS, newText: args.content }],
    })
  })

  it('refuses to overwrite a directory or a binary file', async () => {
    const write = (args: object) => tool('write_file').execute(args, fakeRunContext('write_file', args))
    await expect(write({ path: 'src', content: 'x' })).rejects.toThrow('path: src is a directory')
    await expect(write({ path: 'blob.bin', content: 'x' })).rejects.toThrow(/blob\.bin is a binary file/)
    await expect(write({ path: 'src/a.ts/x', content: 'x' })).rejects.toThrow(/not a directory/)
  })
})

describe('R-VIEW edit_file → diff card (issue 7)', () => {
  it('replaces one exact occurrence and reports hunks with context', async () => {
    const args = { path: 'src/a.ts', old_string: '// note', new_string: '// $& kept literally' }
    const { value, result } = await runTool(tool('edit_file'), args)
    const after = await readFile(path.join(ws.dir, 'src/a.ts'), 'utf8')
    expect(after).toBe(A_TS.replace('// note', () => '// $& kept literally'))
    expect(value).toMatchObject({ path: 'src/a.ts', line: 3, added: 1, removed: 1 })
    expect(textOf(result)).toBe('Edited src/a.ts: replaced 1 occurrence at line 3 (+1 -1 lines)')
    expect(tool('edit_file').presentResult?.(args, result)).toEqual({
      card: 'diff',
      title: 'Edited src/a.ts',
      diffs: [{ path: 'src/a.ts', oldText: A_TS, newText: after }],
    })
    expect(tool('edit_file').presentCall?.(args)).toEqual({
      card: 'diff',
      title: 'Edit src/a.ts',
      diffs: [{ path: 'src/a.ts', oldText: '// note', newText: '// $& kept literally' }],
      locations: [{ path: 'src/a.ts' }],
    })
  })

  it('hunks of a large file carry only nearby context', async () => {
    const big = Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join('\n')
    await writeFile(path.join(ws.dir, 'big.txt'), big)
    const args = { path: 'big.txt', old_string: 'row 50\n', new_string: 'ROW FIFTY\n' }
    const { result } = await runTool(tool('edit_file'), args)
    const card = tool('edit_file').presentResult?.(args, result)
    expect(card).toEqual({
      card: 'diff',
      title: 'Edited big.txt',
      diffs: [
        {
          path: 'big.txt',
          oldText: 'row 47\nrow 48\nrow 49\nrow 50\nrow 51\nrow 52\nrow 53\n',
          newText: 'row 47\nrow 48\nrow 49\nROW FIFTY\nrow 51\nrow 52\nrow 53\n',
        },
      ],
    })
  })

  it('an absent or non-unique old_string is a clear error and leaves the file alone', async () => {
    const edit = (args: object) => tool('edit_file').execute(args, fakeRunContext('edit_file', args))
    await expect(edit({ path: 'src/a.ts', old_string: 'missing', new_string: 'x' })).rejects.toThrow(
      'old_string: not found in src/a.ts (it must match exactly, including whitespace)',
    )
    await expect(edit({ path: 'src/a.ts', old_string: 'export const', new_string: 'x' })).rejects.toThrow(
      'old_string: not unique in src/a.ts (2 occurrences, at lines 1, 2); include more surrounding context',
    )
    await expect(edit({ path: 'src/a.ts', old_string: '', new_string: 'x' })).rejects.toThrow(/must not be empty/)
    await expect(edit({ path: 'src/a.ts', old_string: 'a', new_string: 'a' })).rejects.toThrow(/identical/)
    await expect(edit({ path: 'gone.ts', old_string: 'a', new_string: 'b' })).rejects.toThrow(/does not exist/)
    await expect(edit({ path: 'blob.bin', old_string: 'ex', new_string: 'b' })).rejects.toThrow(/binary file/)
    expect(await readFile(path.join(ws.dir, 'src/a.ts'), 'utf8')).toBe(A_TS)
  })
})

describe('R-VIEW glob → search card of shape paths (issue 7)', () => {
  it('matches files, skips dotfiles, .git and node_modules, and presents paths', async () => {
    const args = { pattern: '**/*.ts' }
    const { value, result } = await runTool(tool('glob'), args)
    expect(value).toEqual({ pattern: '**/*.ts', paths: ['src/a.ts', 'src/sub/b.ts'], total: 2, truncated: false })
    expect(textOf(result)).toBe('src/a.ts\nsrc/sub/b.ts')
    expect(tool('glob').presentResult?.(args, result)).toEqual({
      card: 'search',
      shape: 'paths',
      title: 'Glob **/*.ts',
      truncated: false,
      total: 2,
      paths: ['src/a.ts', 'src/sub/b.ts'],
    })
    expect(tool('glob').presentCall?.(args)).toEqual({ card: 'generic', title: 'Glob **/*.ts', kind: 'search' })
  })

  it('supports braces and ? and reports no matches', async () => {
    const { value } = await runTool(tool('glob'), { pattern: '{README.md,src/?.ts}' })
    expect((value as { paths: string[] }).paths).toEqual(['README.md', 'src/a.ts'])
    const none = await runTool(tool('glob'), { pattern: '*.rs' })
    expect(textOf(none.result)).toBe('No files match *.rs')
  })

  it('caps the result and accounts for the rest', async () => {
    for (let i = 0; i < 5; i++) await writeFile(path.join(ws.dir, `f${i}.txt`), '')
    const capped = createFsTools({ root: ws.dir, limits: { globMaxResults: 2 } })
    const { value, result } = await runTool(byName(capped, 'glob'), { pattern: '*.txt' })
    expect(value).toEqual({ pattern: '*.txt', paths: ['f0.txt', 'f1.txt'], total: 5, truncated: true })
    expect(textOf(result)).toMatch(/showing 2 of 5\+ matching paths/)
    expect(byName(capped, 'glob').presentResult?.({ pattern: '*.txt' }, result)).toMatchObject({
      truncated: true,
      total: 5,
    })
  })

  it('a walk budget marks the result truncated', async () => {
    const capped = createFsTools({ root: ws.dir, limits: { walkMaxEntries: 2 } })
    const { value } = await runTool(byName(capped, 'glob'), { pattern: '**/*.ts' })
    expect(value).toMatchObject({ truncated: true })
  })
})

describe('R-VIEW grep → search card of shape matches (issue 7)', () => {
  it('groups matches per file, skips binary and hidden trees, and presents them (JavaScript search)', async () => {
    const args = { pattern: '^export const' }
    // The JavaScript fallback counts binary files as skipped; ripgrep's counts are in grep-ripgrep.test.ts.
    const jsGrep = byName(createFsTools({ root: ws.dir, ripgrep: false }), 'grep')
    const { value, result } = await runTool(jsGrep, args)
    expect(value).toEqual({
      pattern: '^export const',
      files: [
        {
          path: 'src/a.ts',
          matches: [
            { line: 1, text: 'export const a = 1' },
            { line: 2, text: 'export const b = 2' },
          ],
        },
        { path: 'src/sub/b.ts', matches: [{ line: 1, text: 'export const b = "sub"' }] },
      ],
      total: 3,
      truncated: false,
      filesSearched: 4,
      filesSkipped: 1,
      binarySkipped: 1,
    })
    expect(textOf(result)).toBe(
      'src/a.ts:1:export const a = 1\nsrc/a.ts:2:export const b = 2\nsrc/sub/b.ts:1:export const b = "sub"',
    )
    expect(tool('grep').presentResult?.(args, result)).toEqual({
      card: 'search',
      shape: 'matches',
      title: 'Grep /^export const/',
      truncated: false,
      total: 3,
      files: (value as { files: unknown }).files,
    })
  })

  it('filters by glob (file name or path) and searches a single file', async () => {
    const byGlob = await runTool(tool('grep'), { pattern: 'export', glob: '*.md' })
    expect((byGlob.value as { files: Array<{ path: string }> }).files.map((f) => f.path)).toEqual(['README.md'])
    const byPathGlob = await runTool(tool('grep'), { pattern: 'export', glob: 'sub/*.ts', path: 'src' })
    expect((byPathGlob.value as { files: Array<{ path: string }> }).files.map((f) => f.path)).toEqual(['src/sub/b.ts'])
    const single = await runTool(tool('grep'), { pattern: 'note', path: 'src/a.ts' })
    expect(single.value).toMatchObject({ files: [{ path: 'src/a.ts', matches: [{ line: 3, text: '// note' }] }] })
    expect(tool('grep').presentCall?.({ pattern: 'x', path: 'src', glob: '*.ts' })).toEqual({
      card: 'generic',
      title: 'Grep /x/ in src (*.ts)',
      kind: 'search',
      locations: [{ path: 'src' }],
    })
  })

  it('an invalid regular expression is a clear error', async () => {
    const args = { pattern: '(unclosed' }
    await expect(tool('grep').execute(args, fakeRunContext('grep', args))).rejects.toThrow(
      /^pattern: invalid regular expression "\(unclosed": /,
    )
  })

  it('caps matches and line length, counting everything found', async () => {
    await writeFile(path.join(ws.dir, 'many.txt'), `${'hit '.repeat(300)}\n`.repeat(10))
    const capped = createFsTools({ root: ws.dir, limits: { grepMaxMatches: 3, grepMaxLineChars: 8 } })
    const { value, result } = await runTool(byName(capped, 'grep'), { pattern: 'hit', path: 'many.txt' })
    expect(value).toMatchObject({
      total: 10,
      truncated: true,
      files: [
        {
          path: 'many.txt',
          matches: [
            { line: 1, text: 'hit hit …' },
            { line: 2, text: 'hit hit …' },
            { line: 3, text: 'hit hit …' },
          ],
        },
      ],
    })
    expect(textOf(result)).toMatch(/showing 3 of 10\+ matches/)
  })

  it('reports no matches', async () => {
    const { result } = await runTool(tool('grep'), { pattern: 'zzz_nothing' })
    expect(textOf(result)).toMatch(/^No matches for \/zzz_nothing\/ in \d+ file\(s\)$/)
  })
})

describe('R-VIEW list_dir → search card of shape paths (issue 7)', () => {
  it('lists sorted entries with types', async () => {
    await symlink('src/a.ts', path.join(ws.dir, 'link.ts'))
    const args = { path: 'src' }
    const { value, result } = await runTool(tool('list_dir'), args)
    expect(value).toEqual({
      path: 'src',
      entries: [
        { name: 'a.ts', type: 'file' },
        { name: 'sub', type: 'directory' },
      ],
      total: 2,
      truncated: false,
      ignored: 0,
    })
    expect(textOf(result)).toBe('a.ts\nsub/')
    expect(tool('list_dir').presentResult?.(args, result)).toEqual({
      card: 'search',
      shape: 'paths',
      title: 'List src',
      truncated: false,
      total: 2,
      paths: ['src/a.ts', 'src/sub/'],
    })
    const root = await runTool(tool('list_dir'), {})
    expect((root.value as { entries: Array<{ name: string; type: string }> }).entries).toContainEqual({
      name: 'link.ts',
      type: 'symlink',
    })
    expect(tool('list_dir').presentCall?.({})).toEqual({
      card: 'generic',
      title: 'List .',
      kind: 'read',
      locations: [{ path: '.' }],
    })
  })

  it('caps entries and refuses non-directories', async () => {
    const capped = createFsTools({ root: ws.dir, limits: { listMaxEntries: 1 } })
    const { value } = await runTool(byName(capped, 'list_dir'), { path: 'src' })
    expect(value).toMatchObject({ entries: [{ name: 'a.ts' }], total: 2, truncated: true })
    const args = { path: 'src/a.ts' }
    await expect(tool('list_dir').execute(args, fakeRunContext('list_dir', args))).rejects.toThrow(
      'path: src/a.ts is not a directory',
    )
  })
})
