import type { Dirent } from 'node:fs'
import { opendir, stat } from 'node:fs/promises'
import path from 'node:path'
import type picomatchFn from 'picomatch'
import type { ContentBlock } from '../contract/content.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolResultView } from '../contract/views.js'
import { defineTool, type ValueOfSchema } from '../schema/define-tool.js'
import { lazyRequire } from '../util/lazy-require.js'
import type { FsToolContext } from './fs-context.js'
import { loadGitignoreChain } from './gitignore.js'
import { bool, callPresenter, int, list, listOf, record, resultPresenter, str } from './present-util.js'
import { SmallestNames } from './smallest-names.js'
import { checkAborted, linkStaysInside, resolveInWorkspace } from './workspace.js'

const picomatch = lazyRequire<typeof picomatchFn>('picomatch')

type EntryType = 'file' | 'directory' | 'symlink' | 'other'

function entryPath(dir: string, name: string, type: string): string {
  const joined = dir === '.' ? name : `${dir}/${name}`
  return type === 'directory' ? `${joined}/` : joined
}

const LIST_DIR_OUTPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', required: true },
    entries: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          name: { type: 'string', required: true },
          type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'], required: true },
        },
      },
    },
    total: { type: 'integer', required: true },
    truncated: { type: 'boolean', required: true },
    ignored: { type: 'integer', required: true },
  },
} as const

type ListDirValue = ValueOfSchema<typeof LIST_DIR_OUTPUT_SCHEMA>

/** The model's view: one name per line (`/` after a directory, `@` after a symlink) and what is hidden. */
function renderListDir(pattern: string | undefined, value: ListDirValue): ContentBlock[] {
  const hidden = value.ignored > 0 ? ` (${value.ignored} entries ignored by .gitignore not shown)` : ''
  if (value.total === 0) {
    const what = pattern === undefined ? 'is empty' : `has no entries matching ${pattern}`
    return [{ type: 'text', text: `${value.path} ${what}${hidden}` }]
  }
  const lines = value.entries.map((e) =>
    e.type === 'directory' ? `${e.name}/` : e.type === 'symlink' ? `${e.name}@` : e.name,
  )
  if (value.truncated) lines.push(`(showing ${value.entries.length} of ${value.total} entries)`)
  if (hidden) lines.push(hidden.trim())
  return [{ type: 'text', text: lines.join('\n') }]
}

function entryType(d: Dirent): EntryType {
  return d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'directory' : d.isFile() ? 'file' : 'other'
}

/** List one workspace directory: the first `listMaxEntries` names in order, with the counts. */
async function listDirectory(
  fs: FsToolContext,
  args: { path?: string; pattern?: string },
  signal: AbortSignal,
): Promise<ListDirValue> {
  const matcher = args.pattern === undefined ? undefined : picomatch()(args.pattern, { dot: false })
  const rootReal = await fs.realRoot()
  const resolved = await resolveInWorkspace(fs.root, rootReal, args.path ?? '.', 'existing')
  if (!(await stat(resolved.abs)).isDirectory()) throw new Error(`path: ${resolved.rel} is not a directory`)
  checkAborted(signal)
  const rules = await loadGitignoreChain(rootReal, resolved.rel)
  const prefix = resolved.rel === '.' ? '' : `${resolved.rel}/`
  // Streamed in batches (the event loop turns between them) and only the first
  // `listMaxEntries` names by order are kept: a directory of a million entries neither
  // materialises a million entries at once nor sorts them.
  const dir = await opendir(resolved.abs, { bufferSize: 1024 })
  const kept = new SmallestNames<Dirent>(fs.limits.listMaxEntries)
  let ignored = 0
  let total = 0
  for await (const d of dir) {
    // A link leading out of the root is not listed at all, not even counted.
    if (d.isSymbolicLink() && !(await linkStaysInside(rootReal, path.join(resolved.abs, d.name)))) continue
    if (rules.ignores(prefix + d.name, d.isDirectory())) {
      ignored++
      continue
    }
    if (matcher !== undefined && !matcher(d.name)) continue
    total++
    kept.offer(d)
    if ((total & 4095) === 0) checkAborted(signal)
  }
  const entries = kept.sorted().map((d) => ({ name: d.name, type: entryType(d) }))
  return { path: resolved.rel, entries, total, truncated: total > entries.length, ignored }
}

function listDirResultView(_args: unknown, meta: Record<string, unknown>): ToolResultView | undefined {
  const dir = str(meta, 'path')
  const total = int(meta, 'total')
  const truncated = bool(meta, 'truncated')
  const entries = listOf(list(meta, 'entries'), (e) => {
    const r = record(e)
    const name = r && str(r, 'name')
    const type = r && str(r, 'type')
    return name === undefined || type === undefined ? undefined : { name, type }
  })
  if (dir === undefined || total === undefined || truncated === undefined || entries === undefined) return undefined
  const paths = entries.map((e) => entryPath(dir, e.name, e.type))
  return { card: 'search', shape: 'paths', title: `List ${dir}`, truncated, total, paths }
}

/**
 * `list_dir { path?, pattern? }`: the entries of one workspace directory, sorted by name, at most
 * `listMaxEntries` (`truncated`/`total` say when more exist). Entries `.gitignore` files ignore are
 * left out and counted in `ignored`; dotfiles are listed. `pattern` filters entry names with a
 * picomatch glob (character classes, braces, extglobs; wildcards skip dotfiles unless the pattern
 * names the dot). Symlinks are listed as `symlink`, not followed, and only when they lead to an
 * existing path inside the workspace: links out of it (or dangling) are left out. The result card is a `search`
 * card of shape `paths` (directories end in `/`).
 */
export function createListDirTool(fs: FsToolContext): ToolDefinition {
  const { limits } = fs
  return defineTool({
    name: 'list_dir',
    description:
      'List the entries of a directory in the workspace (default: the workspace root), with their types. ' +
      'Entries ignored by .gitignore are left out (and counted). pattern filters names with a glob ' +
      `(e.g. "*.{ts,tsx}", "[A-Z]*"). Returns at most ${limits.listMaxEntries} entries.`,
    parameters: {
      path: { type: 'string', description: 'Directory path, relative to the workspace root (default ".").' },
      pattern: { type: 'string', description: 'Glob the entry names must match (default: all).' },
    },
    output: {
      schema: LIST_DIR_OUTPUT_SCHEMA,
      render: (args, value) => renderListDir(args.pattern, value),
      presentationMeta(_args, value) {
        return { path: value.path, entries: value.entries, total: value.total, truncated: value.truncated }
      },
    },
    execute: (args, exec) => listDirectory(fs, args, exec.signal),
    timeoutMs: 30_000,
    isConcurrencySafe: () => true,
    presentCall: callPresenter('list_dir', (args) => ({
      card: 'generic',
      title: `List ${args.path ?? '.'}`,
      kind: 'read',
      locations: [{ path: args.path ?? '.' }],
    })),
    presentResult: resultPresenter('list_dir', listDirResultView),
  })
}
