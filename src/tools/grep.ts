import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { SearchFileMatches, ToolResultView } from '../contract/views.js'
import { groupSearchMatches, type SearchMatch } from '../presentation/search-matches.js'
import { defineTool } from '../schema/define-tool.js'
import type { FsToolContext } from './fs-context.js'
import { loadGitignoreChain } from './gitignore.js'
import { compileGlob } from './glob-match.js'
import { globWalk } from './glob-walk.js'
import { cutText } from './limits.js'
import { bool, callPresenter, int, list, listOf, record, resultPresenter, str } from './present-util.js'
import { ripgrepSearch } from './ripgrep.js'
import { checkAborted, openInWorkspace, resolveInWorkspace } from './workspace.js'

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
          binarySkipped: { type: 'integer', required: true },
        },
      },
      render(_args, value) {
        if (value.total === 0) {
          return [
            {
              type: 'text',
              text: `No matches for /${value.pattern}/ in ${value.filesSearched} file(s)${binaryNote(value.binarySkipped)}${value.truncated ? ' (search was cut short)' : ''}`,
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
      const rootReal = await fs.realRoot()
      const start = await resolveInWorkspace(fs.root, rootReal, args.path ?? '.', 'existing')
      if (rg) {
        const startInfo = await stat(start.abs)
        if (!startInfo.isFile() && !startInfo.isDirectory())
          throw new Error(`path: ${start.rel} is neither a file nor a directory`)
        const isFile = startInfo.isFile()
        const outcome = await ripgrepSearch({
          rg,
          pattern: args.pattern,
          cwd: isFile ? path.dirname(start.abs) : start.abs,
          file: isFile ? path.basename(start.abs) : undefined,
          glob: isFile ? undefined : args.glob,
          prefix: isFile
            ? start.rel.slice(0, start.rel.length - path.basename(start.abs).length)
            : start.rel === '.'
              ? ''
              : `${start.rel}/`,
          maxMatches: limits.grepMaxMatches,
          maxLineChars: limits.grepMaxLineChars,
          maxFileBytes: limits.grepMaxFileBytes,
          signal: exec.signal,
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
      const regex = compilePattern(args.pattern)
      if (args.glob !== undefined) compileGlob(args.glob)
      const kept: SearchMatch[] = []
      let total = 0
      let filesSearched = 0
      let filesSkipped = 0
      let binarySkipped = 0
      let budgetHit = false

      const searchFile = async (abs: string, rel: string): Promise<void> => {
        // Confined and non-blocking: a file swapped for a FIFO or a symlink since the walk is skipped.
        let bytes: Buffer
        try {
          const handle = await openInWorkspace(rootReal, abs, rel, 'read')
          try {
            const info = await handle.stat()
            if (info.size > limits.grepMaxFileBytes) {
              filesSkipped++
              return
            }
            bytes = await handle.readFile()
          } finally {
            await handle.close()
          }
        } catch {
          filesSkipped++
          return
        }
        // A NUL byte anywhere makes the file binary, as ripgrep decides once it meets one.
        if (bytes.includes(0)) {
          filesSkipped++
          binarySkipped++
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
        // The same walk as glob: .gitignore honoured, .git/node_modules/symlinks skipped; dotfiles searched.
        const walk = await globWalk({
          rootAbs: rootReal,
          cwdAbs: start.abs,
          rules: await loadGitignoreChain(rootReal, start.rel),
          dot: true,
          patterns: [args.glob === undefined ? '**' : args.glob.includes('/') ? args.glob : `**/${args.glob}`],
          signal: exec.signal,
          maxEntries: limits.walkMaxEntries,
        })
        if (walk.exhausted) budgetHit = true
        for (const rel of walk.paths) {
          if (filesSearched >= limits.grepMaxFiles) {
            budgetHit = true
            break
          }
          checkAborted(exec.signal)
          await searchFile(path.join(start.abs, rel), prefix + rel)
        }
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
        binarySkipped,
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
