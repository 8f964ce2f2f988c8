import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createFsTools, WorkspacePathError } from '../../src/tools/index.js'
import { byName, fakeRunContext, runTool, tempDir } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }
let outside: { dir: string; cleanup(): Promise<void> }
let root: string
let tools: ToolDefinition[]

const run = (name: string, args: object) => byName(tools, name).execute(args, fakeRunContext(name, args))

beforeEach(async () => {
  ws = await tempDir('ws')
  outside = await tempDir('outside')
  root = path.join(ws.dir, 'root')
  await mkdir(path.join(root, 'src'), { recursive: true })
  await writeFile(path.join(root, 'src/in.ts'), 'inside\n')
  await writeFile(path.join(ws.dir, 'sibling.txt'), 'sibling secret\n')
  await writeFile(path.join(outside.dir, 'secret.ts'), 'export const SECRET = 1\n')
  await symlink(path.join(outside.dir, 'secret.ts'), path.join(root, 'file-link.ts'))
  await symlink(outside.dir, path.join(root, 'dir-link'))
  await symlink(path.join(outside.dir, 'missing.txt'), path.join(root, 'dangling.txt'))
  await symlink(path.join(outside.dir, 'missing-dir'), path.join(root, 'dangling-dir'))
  await symlink('src/in.ts', path.join(root, 'inner-link.ts'))
  tools = createFsTools({ root })
})

afterEach(async () => {
  await ws.cleanup()
  await outside.cleanup()
})

describe('reference tools stay inside the workspace (issue 7: escaping attempts)', () => {
  it('refuses .. segments, even ones that would come back inside', async () => {
    await expect(run('read_file', { path: '../sibling.txt' })).rejects.toThrow(WorkspacePathError)
    await expect(run('read_file', { path: '../sibling.txt' })).rejects.toThrow(/'\.\.' segments are not allowed/)
    await expect(run('read_file', { path: 'src/../../sibling.txt' })).rejects.toThrow(/'\.\.'/)
    await expect(run('read_file', { path: 'src/../src/in.ts' })).rejects.toThrow(/'\.\.'/)
    await expect(run('write_file', { path: '../evil.txt', content: 'x' })).rejects.toThrow(/'\.\.'/)
    await expect(run('list_dir', { path: '..' })).rejects.toThrow(/'\.\.'/)
    await expect(run('grep', { pattern: 'x', path: '..' })).rejects.toThrow(/'\.\.'/)
    await expect(stat(path.join(ws.dir, 'evil.txt'))).rejects.toThrow()
  })

  it('refuses absolute paths outside the root and accepts ones inside', async () => {
    await expect(run('read_file', { path: path.join(ws.dir, 'sibling.txt') })).rejects.toThrow(
      /is outside the workspace/,
    )
    await expect(run('read_file', { path: '/etc/passwd' })).rejects.toThrow(/is outside the workspace/)
    await expect(run('write_file', { path: path.join(outside.dir, 'new.txt'), content: 'x' })).rejects.toThrow(
      /is outside the workspace/,
    )
    const inside = await runTool(byName(tools, 'read_file'), { path: path.join(root, 'src/in.ts') })
    expect(inside.value).toMatchObject({ path: 'src/in.ts', lines: [{ number: 1, text: 'inside' }] })
  })

  it('refuses symlinks that lead outside, for reading, writing, editing and listing', async () => {
    await expect(run('read_file', { path: 'file-link.ts' })).rejects.toThrow(/resolves outside the workspace/)
    await expect(run('read_file', { path: 'dir-link/secret.ts' })).rejects.toThrow(/resolves outside/)
    await expect(run('write_file', { path: 'file-link.ts', content: 'pwned' })).rejects.toThrow(/resolves outside/)
    await expect(run('write_file', { path: 'dir-link/new.ts', content: 'pwned' })).rejects.toThrow(/resolves outside/)
    await expect(run('edit_file', { path: 'file-link.ts', old_string: 'SECRET', new_string: 'X' })).rejects.toThrow(
      /resolves outside/,
    )
    await expect(run('list_dir', { path: 'dir-link' })).rejects.toThrow(/resolves outside/)
    await expect(run('grep', { pattern: 'SECRET', path: 'dir-link' })).rejects.toThrow(/resolves outside/)
    expect(await readFile(path.join(outside.dir, 'secret.ts'), 'utf8')).toBe('export const SECRET = 1\n')
    await expect(stat(path.join(outside.dir, 'new.ts'))).rejects.toThrow()
  })

  it('refuses to write through dangling symlinks', async () => {
    await expect(run('write_file', { path: 'dangling.txt', content: 'x' })).rejects.toThrow(/is a broken symlink/)
    await expect(run('write_file', { path: 'dangling-dir/x.txt', content: 'x' })).rejects.toThrow(/broken symlink/)
    await expect(stat(path.join(outside.dir, 'missing.txt'))).rejects.toThrow()
    await expect(stat(path.join(outside.dir, 'missing-dir'))).rejects.toThrow()
  })

  it('follows symlinks that stay inside', async () => {
    const { value } = await runTool(byName(tools, 'read_file'), { path: 'inner-link.ts' })
    expect(value).toMatchObject({ path: 'inner-link.ts', lines: [{ number: 1, text: 'inside' }] })
  })

  it('recursive searches never follow symlinks out', async () => {
    const globbed = await runTool(byName(tools, 'glob'), { pattern: '**/*.ts' })
    expect((globbed.value as { paths: string[] }).paths).toEqual(['src/in.ts'])
    const grepped = await runTool(byName(tools, 'grep'), { pattern: 'SECRET' })
    expect(grepped.value).toMatchObject({ total: 0, files: [] })
  })

  it('rejects malformed paths and a missing root clearly', async () => {
    await expect(run('read_file', { path: 'a\0b' })).rejects.toThrow(/NUL byte/)
    await expect(run('read_file', { path: '' })).rejects.toThrow(/non-empty path/)
    const gone = createFsTools({ root: path.join(ws.dir, 'does-not-exist') })
    const args = { path: 'x' }
    await expect(byName(gone, 'read_file').execute(args, fakeRunContext('read_file', args))).rejects.toThrow(
      /Workspace root .* is not accessible/,
    )
    expect(() => createFsTools({ root: '' })).toThrow(/root: expected a directory path/)
    expect(() => createFsTools({ root, limits: { grepMaxMatches: 0 } })).toThrow(
      'limits.grepMaxMatches: expected a positive integer, got 0',
    )
  })
})
