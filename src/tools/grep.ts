import { readFile, stat } from 'node:fs/promises'
import { groupSearchMatches, type SearchMatch } from '../presentation/search-matches.js'
import type { SearchFileMatches, ToolResultView } from '../presentation/views.js'
import { defineTool } from '../schema/define-tool.js'
import type { ToolDefinition } from '../schema/tool-definition.js'
import { looksBinary } from './binary.js'
import type { FsToolContext } from './fs-context.js'
import { compileGlob, type GlobMatcher } from './glob-match.js'
import { cutText } from './limits.js'
import { bool, callPresenter, int, list, listOf, record, resultPresenter, str } from './present-util.js'
import { walkFiles } from './walk.js'
import { checkAborted, resolveInWorkspace } from './workspace.js'

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

/** The file filter: a glob without `/` matches the file name at any depth, otherwise the path below `path`. */
function fileFilter(glob: string | undefined): { test(rel: string): boolean; matcher?: GlobMatcher; byName: boolean } {
  if (glob === undefined) return { test: () => true, byName: true }
  const matcher = compileGlob(glob)
  const byName = !glob.includes('/')
  return {
    matcher,
    byName,
    test: (rel) => matcher.matches(byName ? rel.slice(rel.lastIndexOf('/') + 1) : rel),
  }
}

/**
 * `grep { pattern, path?, glob? }`: lines matching a JavaScript regular expression, grouped by file.
 * Caps: `grepMaxMatches` matches shown (every match is still counted in `total`), matched lines cut at
 * `grepMaxLineChars`, files above `grepMaxFileBytes` and binary files (NUL in the first 8000 bytes)
 * skipped, at most `grepMaxFiles` files searched and `walkMaxEntries` entries walked — hitting either
 * budget sets `truncated` and makes `total` a lower bound.
 */
export function createGrepTool(fs: FsToolContext): ToolDefinition {
  const { limits } = fs
  return defineTool({
    name: 'grep',
    description:
      'Search file contents in the workspace for lines matching a JavaScript regular expression. ' +
      'path limits the search to a file or directory; glob filters file names (e.g. "*.ts") or, with a "/", ' +
      `paths below path. Binary and very large files are skipped; at most ${limits.grepMaxMatches} matches are shown.`,
    parameters: {
      pattern: { type: 'string', required: true, description: 'JavaScript regular expression (no flags).' },
      path: {
        type: 'string',
        description: 'File or directory to search, relative to the workspace root (default: all).',
      },
      glob: { type: 'string', description: 'Glob filter for the files searched.' },
    },
    output: {
      schema: {
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
        },
      },
      render(_args, value) {
        if (value.total === 0) {
          return [
            {
              type: 'text',
              text: `No matches for /${value.pattern}/ in ${value.filesSearched} file(s)${value.truncated ? ' (search was cut short)' : ''}`,
            },
          ]
        }
        const lines: string[] = []
        let shown = 0
        for (const file of value.files) {
          for (const match of file.matches) {
            lines.push(`${file.path}:${match.line}:${match.text}`)
            shown++
          }
        }
        if (value.truncated)
          lines.push(`(showing ${shown} of ${value.total}+ matches; narrow the pattern, path or glob)`)
        return [{ type: 'text', text: lines.join('\n') }]
      },
      presentationMeta(_args, value) {
        return { pattern: value.pattern, files: value.files, total: value.total, truncated: value.truncated }
      },
    },
    async execute(args, exec) {
      const regex = compilePattern(args.pattern)
      const filter = fileFilter(args.glob)
      const rootReal = await fs.realRoot()
      const start = await resolveInWorkspace(fs.root, rootReal, args.path ?? '.', 'existing')
      const kept: SearchMatch[] = []
      let total = 0
      let filesSearched = 0
      let filesSkipped = 0
      let budgetHit = false

      const searchFile = async (abs: string, rel: string): Promise<void> => {
        const info = await stat(abs)
        if (info.size > limits.grepMaxFileBytes) {
          filesSkipped++
          return
        }
        const bytes = await readFile(abs)
        if (looksBinary(bytes)) {
          filesSkipped++
          return
        }
        const text = bytes.toString('utf8')
        filesSearched++
        let lineNo = 0
        let from = 0
        while (from <= text.length) {
          let nl = text.indexOf('\n', from)
          if (nl === -1) nl = text.length
          if (nl === text.length && from === text.length) break
          lineNo++
          let line = text.slice(from, nl)
          if (line.endsWith('\r')) line = line.slice(0, -1)
          if (regex.test(line)) {
            total++
            if (kept.length < limits.grepMaxMatches) {
              kept.push({ path: rel, line: lineNo, text: cutText(line, limits.grepMaxLineChars).text })
            }
          }
          from = nl + 1
        }
      }

      const startInfo = await stat(start.abs)
      if (startInfo.isFile()) {
        await searchFile(start.abs, start.rel)
      } else if (startInfo.isDirectory()) {
        const prefix = start.rel === '.' ? '' : `${start.rel}/`
        const walk = await walkFiles(
          start.abs,
          {
            signal: exec.signal,
            maxEntries: limits.walkMaxEntries,
            descend:
              filter.matcher !== undefined && !filter.byName ? (rel) => filter.matcher!.couldContain(rel) : undefined,
          },
          async (file) => {
            if (!filter.test(file.rel)) return true
            if (filesSearched >= limits.grepMaxFiles) {
              budgetHit = true
              return false
            }
            checkAborted(exec.signal)
            await searchFile(file.abs, prefix + file.rel)
            return true
          },
        )
        if (walk.exhausted) budgetHit = true
      } else {
        throw new Error(`path: ${start.rel} is neither a file nor a directory`)
      }
      const grouped = groupSearchMatches(kept, limits.grepMaxMatches, { total, truncated: budgetHit })
      return {
        pattern: args.pattern,
        files: grouped.files,
        total: grouped.total,
        truncated: grouped.truncated,
        filesSearched,
        filesSkipped,
      }
    },
    timeoutMs: 60_000,
    isConcurrencySafe: () => true,
    presentCall: callPresenter('grep', (args) => ({
      card: 'generic',
      title: `Grep /${args.pattern}/${args.path !== undefined ? ` in ${args.path}` : ''}${args.glob !== undefined ? ` (${args.glob})` : ''}`,
      kind: 'search',
      ...(args.path !== undefined ? { locations: [{ path: args.path }] } : {}),
    })),
    presentResult: resultPresenter('grep', (_args, meta): ToolResultView | undefined => {
      const pattern = str(meta, 'pattern')
      const total = int(meta, 'total')
      const truncated = bool(meta, 'truncated')
      const files = listOf(list(meta, 'files'), readFileMatches)
      if (pattern === undefined || total === undefined || truncated === undefined || files === undefined)
        return undefined
      return { card: 'search', shape: 'matches', title: `Grep /${pattern}/`, truncated, total, files }
    }),
  })
}
