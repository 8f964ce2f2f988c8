// Issue 22: a symlink leading out of the workspace is neither followed nor listed by glob, grep or
// list_dir — relative or absolute, to a file or a directory, directly or through a chain of links.
// Links that stay inside keep working.
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createFsTools } from '../../src/tools/index.js'
import { byName, runTool, tempDir, textOf } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }
let root: string
let outside: string

/** Every link whose target lies outside the root, by name (all of them must stay invisible). */
const ESCAPING = [
  'rel-link-dir',
  'abs-link-dir',
  'rel-link-file.txt',
  'abs-link-file.txt',
  'chain-dir',
  'chain-file.txt',
  'dangling-out.txt',
]

beforeEach(async () => {
  ws = await tempDir('escape22')
  root = path.join(ws.dir, 'root')
  outside = path.join(ws.dir, 'outside')
  await mkdir(path.join(outside, 'sub'), { recursive: true })
  await writeFile(path.join(outside, 'secret.txt'), 'needle secret\n')
  await writeFile(path.join(outside, 'sub', 'deep.txt'), 'needle deep secret\n')
  await mkdir(path.join(root, 'inside-dir'), { recursive: true })
  await writeFile(path.join(root, 'inside-dir', 'a.txt'), 'needle inside\n')
  const link = (target: string, name: string) => symlink(target, path.join(root, name))
  await link('../outside', 'rel-link-dir')
  await link(outside, 'abs-link-dir')
  await link('../outside/secret.txt', 'rel-link-file.txt')
  await link(path.join(outside, 'secret.txt'), 'abs-link-file.txt')
  await link('rel-link-dir', 'chain-dir')
  await link('rel-link-file.txt', 'chain-file.txt')
  await link('../outside/missing.txt', 'dangling-out.txt')
  await link('../../outside', 'inside-dir/deep-out')
  await link('inside-dir', 'inner-link-dir')
  await link('inside-dir/a.txt', 'inner-link-file.txt')
  await link('inner-link-dir', 'inner-chain')
})
afterEach(async () => {
  await ws.cleanup()
})

const tool = (name: string, ripgrep?: false): ToolDefinition =>
  byName(createFsTools({ root, ...(ripgrep === false ? { ripgrep } : {}) }), name)

/** What a result shows of the file system: paths, matched lines and entry names (not the echoed arguments). */
function shown(value: unknown): string[] {
  const v = value as {
    paths?: string[]
    files?: Array<{ path: string; matches: Array<{ text: string }> }>
    entries?: Array<{ name: string }>
  }
  return [
    ...(v.paths ?? []),
    ...(v.files ?? []).flatMap((f) => [f.path, ...f.matches.map((m) => m.text)]),
    ...(v.entries ?? []).map((e) => e.name),
  ]
}

/** Nothing in a result, nor in the text the model reads (arguments echoed aside), names or shows what lies outside. */
function expectNothingOutside(value: unknown, text: string, args: Record<string, unknown>): void {
  let rendered = text
  for (const arg of Object.values(args)) if (typeof arg === 'string') rendered = rendered.split(arg).join('')
  for (const leaked of ['secret', 'deep', ...ESCAPING]) {
    for (const item of shown(value)) expect(item).not.toContain(leaked)
    expect(rendered).not.toContain(leaked)
  }
}

describe('issue 22: glob never follows or lists a link out of the root', () => {
  it.each([
    'rel-link-dir/*',
    'abs-link-dir/*',
    'chain-dir/*',
    'rel-link-dir/**',
    'chain-dir/sub/*',
    'rel-link-dir/secret.txt',
    'rel-link-dir/sub/deep.txt',
    'inside-dir/deep-out/*',
    '*/secret.txt',
    '{rel-link-dir,abs-link-dir,inside-dir}/*',
    '**',
    '**/*.txt',
    '*',
  ])('pattern %s', async (pattern) => {
    const { value, result } = await runTool(tool('glob'), { pattern })
    expectNothingOutside(value, textOf(result), { pattern })
  })

  it('links that stay inside keep working', async () => {
    for (const pattern of ['inner-link-dir/*', 'inner-chain/*']) {
      const { value } = await runTool(tool('glob'), { pattern })
      expect((value as { paths: string[] }).paths).toEqual([pattern.replace('*', 'a.txt')])
    }
    const all = await runTool(tool('glob'), { pattern: '**' })
    expect((all.value as { paths: string[] }).paths).toEqual(['inside-dir/a.txt'])
  })
})

describe.each([
  ['ripgrep', undefined],
  ['JavaScript', false],
] as const)('issue 22: grep (%s) never follows or lists a link out of the root', (_engine, ripgrep) => {
  it.each([
    {},
    { glob: 'rel-link-dir/*' },
    { glob: 'chain-dir/**' },
    { glob: '*.txt' },
    { glob: '**/secret.txt' },
    { path: 'inside-dir' },
    { path: 'inside-dir', glob: 'deep-out/*' },
  ])('arguments %j', async (extra) => {
    const args = { pattern: 'needle', ...extra }
    const { value, result } = await runTool(tool('grep', ripgrep), args)
    expectNothingOutside(value, textOf(result), args)
    expect((value as { filesSkipped: number }).filesSkipped).toBe(0)
  })

  it.each(ESCAPING)('an explicit path through %s is refused', async (name) => {
    await expect(runTool(tool('grep', ripgrep), { pattern: 'needle', path: name })).rejects.toThrow(
      /resolves outside the workspace|is a broken symlink|does not exist/,
    )
  })

  it('links that stay inside keep working when named', async () => {
    for (const p of ['inner-link-dir', 'inner-chain', 'inner-link-file.txt']) {
      const { value } = await runTool(tool('grep', ripgrep), { pattern: 'needle', path: p })
      expect(value).toMatchObject({ total: 1, files: [{ matches: [{ text: 'needle inside' }] }] })
    }
  })
})

describe('issue 22: list_dir never lists a link out of the root', () => {
  it('the root lists inside links as symlinks and leaves escaping ones out', async () => {
    const { value, result } = await runTool(tool('list_dir'), {})
    expectNothingOutside(value, textOf(result), {})
    expect(value).toEqual({
      path: '.',
      entries: [
        { name: 'inner-chain', type: 'symlink' },
        { name: 'inner-link-dir', type: 'symlink' },
        { name: 'inner-link-file.txt', type: 'symlink' },
        { name: 'inside-dir', type: 'directory' },
      ],
      total: 4,
      truncated: false,
      ignored: 0,
    })
  })

  it('a subdirectory, a pattern, and a directory reached through an inside link', async () => {
    for (const args of [{ path: 'inside-dir' }, { path: 'inner-chain' }, { path: 'inner-link-dir', pattern: '*' }]) {
      const { value, result } = await runTool(tool('list_dir'), args)
      expectNothingOutside(value, textOf(result), args)
      expect(value).toMatchObject({ entries: [{ name: 'a.txt', type: 'file' }], total: 1 })
    }
    const patterned = await runTool(tool('list_dir'), { pattern: '*link*' })
    expectNothingOutside(patterned.value, textOf(patterned.result), { pattern: '*link*' })
    expect(patterned.value).toMatchObject({ total: 2 })
  })

  it.each(ESCAPING.filter((n) => n.endsWith('dir')))('listing %s itself is refused', async (name) => {
    await expect(runTool(tool('list_dir'), { path: name })).rejects.toThrow(/resolves outside the workspace/)
  })
})
