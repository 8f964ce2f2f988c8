import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { ContentBlock } from '../contract/content.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { SearchFileMatches, ToolCallView, ToolResultView } from '../contract/views.js'
import { groupSearchMatches, type SearchMatch } from '../presentation/search-matches.js'
import { defineTool, type ValueOfSchema } from '../schema/define-tool.js'
import type { FsToolContext } from './fs-context.js'
import { loadGitignoreChain } from './gitignore.js'
import { compileGlob } from './glob-match.js'
import { globWalk } from './glob-walk.js'
import { cutText, type FsToolLimits } from './limits.js'
import { bool, callPresenter, int, list, listOf, record, resultPresenter, str } from './present-util.js'
import { ripgrepSearch } from './ripgrep.js'
import { checkAborted, openInWorkspace, type ResolvedPath, resolveInWorkspace } from './workspace.js'

const GREP_OUTPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    pattern: { type: 'string', required: true },
    files: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: { type: 'string', required: true },
          matches: {
            type: 'array',
            required: true,
            items: {
              type: 'object',
              additionalProperties: false,
              properties: { line: { type: 'integer', required: true }, text: { type: 'string', required: true } },
            },
          },
        },
      },
    },
    total: { type: 'integer', required: true },
    truncated: { type: 'boolean', required: true },
    filesSearched: { type: 'integer', required: true },
    filesSkipped: { type: 'integer', required: true },
    binarySkipped: { type: 'integer', required: true },
  },
} as const

interface GrepArgs {
  pattern: string
  path?: string
  glob?: string
}
type GrepValue = ValueOfSchema<typeof GREP_OUTPUT_SCHEMA>

/** One search: where it starts (a file or a directory, already confined) and what it looks for. */
interface GrepSearch {
  args: GrepArgs
  rootReal: string
  start: ResolvedPath
  startIsFile: boolean
  limits: Readonly<FsToolLimits>
  signal: AbortSignal
}

function compilePattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern)
  } catch (error) {
    throw new Error(`pattern: invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`)
  }
}

function readFileMatches(item: unknown): SearchFileMatches | undefined {
  const r = record(item)
  if (r === undefined) return undefined
  const path = str(r, 'path')
  const matches = listOf(list(r, 'matches'), (m) => {
    const mr = record(m)
    const line = mr && int(mr, 'line')
    const text = mr && str(mr, 'text')
    return line === undefined || text === undefined ? undefined : { line, text }
  })
  return path === undefined || matches === undefined ? undefined : { path, matches }
}

/** What an empty answer says about binary files, which are never searched (nor shown). */
function binaryNote(skipped: number): string {
  if (skipped === 0) return ''
  return `; ${skipped} binary file${skipped === 1 ? '' : 's'} skipped (binary files are not searched)`
}

/** The model's view: one `path:line:text` per match shown, or what an empty search covered. */
function renderGrep(value: GrepValue): ContentBlock[] {
  if (value.total === 0) {
    const cut = value.truncated ? ' (search was cut short)' : ''
    const text = `No matches for /${value.pattern}/ in ${value.filesSearched} file(s)${binaryNote(value.binarySkipped)}${cut}`
    return [{ type: 'text', text }]
  }
  const lines: string[] = []
  for (const file of value.files) {
    for (const match of file.matches) lines.push(`${file.path}:${match.line}:${match.text}`)
  }
  if (value.truncated)
    lines.push(`(showing ${lines.length} of ${value.total}+ matches; narrow the pattern, path or glob)`)
  return [{ type: 'text', text: lines.join('\n') }]
}

function grepCallView(args: GrepArgs): ToolCallView {
  return {
    card: 'generic',
    title: `Grep /${args.pattern}/${args.path !== undefined ? ` in ${args.path}` : ''}${args.glob !== undefined ? ` (${args.glob})` : ''}`,
    kind: 'search',
    ...(args.path !== undefined ? { locations: [{ path: args.path }] } : {}),
  }
}

function grepResultView(_args: GrepArgs, meta: Record<string, unknown>): ToolResultView | undefined {
  const pattern = str(meta, 'pattern')
  const total = int(meta, 'total')
  const truncated = bool(meta, 'truncated')
  const files = listOf(list(meta, 'files'), readFileMatches)
  if (pattern === undefined || total === undefined || truncated === undefined || files === undefined) return undefined
  return { card: 'search', shape: 'matches', title: `Grep /${pattern}/`, truncated, total, files }
}

/** Resolve the searched path inside the workspace; it must be a file or a directory. */
async function startSearch(fs: FsToolContext, args: GrepArgs, signal: AbortSignal): Promise<GrepSearch> {
  const rootReal = await fs.realRoot()
  const start = await resolveInWorkspace(fs.root, rootReal, args.path ?? '.', 'existing')
  const info = await stat(start.abs)
  if (!info.isFile() && !info.isDirectory()) throw new Error(`path: ${start.rel} is neither a file nor a directory`)
  return { args, rootReal, start, startIsFile: info.isFile(), limits: fs.limits, signal }
}

/** The search on ripgrep, in the searched directory (or the named file's). */
async function searchWithRipgrep(rg: string, search: GrepSearch): Promise<GrepValue> {
  const { args, start, startIsFile, limits } = search
  const name = path.basename(start.abs)
  const outcome = await ripgrepSearch({
    rg,
    pattern: args.pattern,
    cwd: startIsFile ? path.dirname(start.abs) : start.abs,
    file: startIsFile ? name : undefined,
    glob: startIsFile ? undefined : args.glob,
    prefix: startIsFile ? start.rel.slice(0, start.rel.length - name.length) : start.rel === '.' ? '' : `${start.rel}/`,
    maxMatches: limits.grepMaxMatches,
    maxLineChars: limits.grepMaxLineChars,
    maxFileBytes: limits.grepMaxFileBytes,
    signal: search.signal,
  })
  const grouped = groupSearchMatches(outcome.kept, limits.grepMaxMatches, { total: outcome.total })
  return {
    pattern: args.pattern,
    files: grouped.files,
    total: grouped.total,
    truncated: grouped.truncated,
    filesSearched: outcome.filesSearched,
    filesSkipped: outcome.filesSkipped,
    binarySkipped: outcome.filesSkipped,
  }
}

/** What the JavaScript search has found and skipped so far. */
class JavaScriptTally {
  readonly kept: SearchMatch[] = []
  total = 0
  filesSearched = 0
  filesSkipped = 0
  binarySkipped = 0
  budgetHit = false
}

/**
 * A file's bytes, or why it is skipped: too large, unreadable, or swapped for something that is not
 * a regular file inside the workspace since the walk (the open is confined and never blocks).
 */
async function readSearchable(search: GrepSearch, abs: string, rel: string): Promise<Buffer | undefined> {
  try {
    const handle = await openInWorkspace(search.rootReal, abs, rel, 'read')
    try {
      const info = await handle.stat()
      return info.size > search.limits.grepMaxFileBytes ? undefined : await handle.readFile()
    } finally {
      await handle.close()
    }
  } catch {
    return undefined
  }
}

/** Count every line of `text` the regex matches; keep them up to the cap, cut to the line limit. */
function matchLines(text: string, regex: RegExp, rel: string, limits: Readonly<FsToolLimits>, tally: JavaScriptTally) {
  let lineNo = 0
  let from = 0
  while (from < text.length) {
    let nl = text.indexOf('\n', from)
    if (nl === -1) nl = text.length
    lineNo++
    let line = text.slice(from, nl)
    if (line.endsWith('\r')) line = line.slice(0, -1)
    if (regex.test(line)) {
      tally.total++
      if (tally.kept.length < limits.grepMaxMatches) {
        tally.kept.push({ path: rel, line: lineNo, text: cutText(line, limits.grepMaxLineChars).text })
      }
    }
    from = nl + 1
  }
}

async function searchFileWithRegex(
  search: GrepSearch,
  regex: RegExp,
  abs: string,
  rel: string,
  tally: JavaScriptTally,
) {
  const bytes = await readSearchable(search, abs, rel)
  if (bytes === undefined) {
    tally.filesSkipped++
    return
  }
  // A NUL byte anywhere makes the file binary, as ripgrep decides once it meets one.
  if (bytes.includes(0)) {
    tally.filesSkipped++
    tally.binarySkipped++
    return
  }
  tally.filesSearched++
  matchLines(bytes.toString('utf8'), regex, rel, search.limits, tally)
}

/** The files below the searched directory: the same walk as glob (.gitignore honoured, .git/node_modules/symlinks skipped; dotfiles searched). */
async function walkSearchedDirectory(search: GrepSearch): Promise<{ paths: string[]; exhausted: boolean }> {
  const { args, rootReal, start } = search
  return await globWalk({
    rootAbs: rootReal,
    cwdAbs: start.abs,
    rules: await loadGitignoreChain(rootReal, start.rel),
    dot: true,
    patterns: [args.glob === undefined ? '**' : args.glob.includes('/') ? args.glob : `**/${args.glob}`],
    signal: search.signal,
    maxEntries: search.limits.walkMaxEntries,
  })
}

/** The fallback search: a `RegExp` per line over the walk, within the file and entry budgets. */
async function searchWithJavaScript(search: GrepSearch): Promise<GrepValue> {
  const { args, start, limits } = search
  const regex = compilePattern(args.pattern)
  if (args.glob !== undefined) compileGlob(args.glob)
  const tally = new JavaScriptTally()
  if (search.startIsFile) {
    await searchFileWithRegex(search, regex, start.abs, start.rel, tally)
  } else {
    const prefix = start.rel === '.' ? '' : `${start.rel}/`
    const walk = await walkSearchedDirectory(search)
    if (walk.exhausted) tally.budgetHit = true
    for (const rel of walk.paths) {
      if (tally.filesSearched >= limits.grepMaxFiles) {
        tally.budgetHit = true
        break
      }
      checkAborted(search.signal)
      await searchFileWithRegex(search, regex, path.join(start.abs, rel), prefix + rel, tally)
    }
  }
  const grouped = groupSearchMatches(tally.kept, limits.grepMaxMatches, {
    total: tally.total,
    truncated: tally.budgetHit,
  })
  return {
    pattern: args.pattern,
    files: grouped.files,
    total: grouped.total,
    truncated: grouped.truncated,
    filesSearched: tally.filesSearched,
    filesSkipped: tally.filesSkipped,
    binarySkipped: tally.binarySkipped,
  }
}

/**
 * `grep { pattern, path?, glob? }`: matching lines grouped by file, sorted by path. It runs ripgrep
 * (`rg --json`, see `ripgrepSearch`: linear-time Rust regex, `.gitignore` honoured, binary files
 * skipped, cancellation kills the process) when a binary is available, else a JavaScript search
 * over the same walk as `glob` (dotfiles searched). Caps: `grepMaxMatches` matches shown (every
 * match is still counted in `total`), matched lines cut at `grepMaxLineChars`, files above
 * `grepMaxFileBytes` skipped. A binary file (a NUL byte in it) is skipped by both engines, never
 * shown in part, and counted in `binarySkipped`. The JavaScript search stops at `grepMaxFiles`
 * files searched and `walkMaxEntries` entries walked — hitting either budget sets `truncated` and
 * makes `total` a lower bound.
 */
export function createGrepTool(fs: FsToolContext): ToolDefinition {
  const { limits } = fs
  const rg = fs.ripgrep
  const syntax = rg
    ? 'regular expression (Rust regex syntax, as ripgrep: no look-around or backreferences)'
    : 'JavaScript regular expression'
  return defineTool({
    name: 'grep',
    description:
      `Search file contents in the workspace for lines matching a ${syntax}. ` +
      'path limits the search to a file or directory; glob filters file names (e.g. "*.ts") or, with a "/", ' +
      'paths below path. Files ignored by .gitignore, binary and very large files are skipped; ' +
      `at most ${limits.grepMaxMatches} matches are shown.`,
    parameters: {
      pattern: {
        type: 'string',
        required: true,
        description: rg ? 'Regular expression (Rust syntax, no flags).' : 'JavaScript regular expression (no flags).',
      },
      path: {
        type: 'string',
        description: 'File or directory to search, relative to the workspace root (default: all).',
      },
      glob: { type: 'string', description: 'Glob filter for the files searched.' },
    },
    output: {
      schema: GREP_OUTPUT_SCHEMA,
      render: (_args, value) => renderGrep(value),
      presentationMeta(_args, value) {
        return { pattern: value.pattern, files: value.files, total: value.total, truncated: value.truncated }
      },
    },
    async execute(args, exec) {
      const search = await startSearch(fs, args, exec.signal)
      return rg ? await searchWithRipgrep(rg, search) : await searchWithJavaScript(search)
    },
    timeoutMs: 60_000,
    isConcurrencySafe: () => true,
    presentCall: callPresenter('grep', grepCallView),
    presentResult: resultPresenter('grep', grepResultView),
  })
}
