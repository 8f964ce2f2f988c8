import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolResultView } from '../contract/views.js'
import { defineTool } from '../schema/define-tool.js'
import type { FsToolContext } from './fs-context.js'
import { compileGlob } from './glob-match.js'
import { globWalk } from './glob-walk.js'
import { bool, callPresenter, int, list, listOf, resultPresenter, str } from './present-util.js'

/**
 * `glob { pattern }`: workspace files matching a glob (picomatch through tinyglobby: `**`, `*`, `?`,
 * character classes, `{a,b}`, extglobs), sorted by path. At most `globMaxResults` paths are
 * returned; `total` counts every match found and `truncated` is also set when the walk hit its
 * entry budget (then `total` is a lower bound). Symlinks, `.git`, `node_modules` and what
 * `.gitignore` files ignore are not traversed or returned; a pattern that names a symlink leading
 * out of the workspace (`link/*`) matches nothing there.
 */
export function createGlobTool(fs: FsToolContext): ToolDefinition {
  const { limits } = fs
  return defineTool({
    name: 'glob',
    description:
      'Find files in the workspace whose relative path matches a glob pattern: ** matches any number of ' +
      'directories, * and ? match within one path segment, [a-z] matches a character class, {a,b} matches ' +
      'alternatives, +(a|b) and !(x) are extglobs (e.g. "src/**/*.{ts,tsx}"). Wildcards skip dotfiles unless the ' +
      `pattern names the dot; files ignored by .gitignore are skipped. Returns at most ${limits.globMaxResults} paths.`,
    parameters: {
      pattern: { type: 'string', required: true, description: 'Glob relative to the workspace root.' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          pattern: { type: 'string', required: true },
          paths: { type: 'array', required: true, items: { type: 'string' } },
          total: { type: 'integer', required: true },
          truncated: { type: 'boolean', required: true },
        },
      },
      render(_args, value) {
        if (value.total === 0) {
          return [
            {
              type: 'text',
              text: `No files match ${value.pattern}${value.truncated ? ' (search was cut short)' : ''}`,
            },
          ]
        }
        const lines = [...value.paths]
        if (value.truncated)
          lines.push(`(showing ${value.paths.length} of ${value.total}+ matching paths; narrow the pattern)`)
        return [{ type: 'text', text: lines.join('\n') }]
      },
      presentationMeta(_args, value) {
        return { pattern: value.pattern, paths: value.paths, total: value.total, truncated: value.truncated }
      },
    },
    async execute(args, exec) {
      // Same refusals as before (absolute, '..', exploding braces), with the pattern in the message.
      compileGlob(args.pattern)
      const walk = await globWalk({
        rootAbs: await fs.realRoot(),
        patterns: [args.pattern],
        signal: exec.signal,
        maxEntries: limits.walkMaxEntries,
      })
      const total = walk.paths.length
      const paths = total > limits.globMaxResults ? walk.paths.slice(0, limits.globMaxResults) : walk.paths
      return { pattern: args.pattern, paths, total, truncated: walk.exhausted || total > paths.length }
    },
    timeoutMs: 30_000,
    isConcurrencySafe: () => true,
    presentCall: callPresenter('glob', (args) => ({ card: 'generic', title: `Glob ${args.pattern}`, kind: 'search' })),
    presentResult: resultPresenter('glob', (_args, meta): ToolResultView | undefined => {
      const pattern = str(meta, 'pattern')
      const total = int(meta, 'total')
      const truncated = bool(meta, 'truncated')
      const paths = listOf(list(meta, 'paths'), (p) => (typeof p === 'string' ? p : undefined))
      if (pattern === undefined || total === undefined || truncated === undefined || paths === undefined)
        return undefined
      return { card: 'search', shape: 'paths', title: `Glob ${pattern}`, truncated, total, paths }
    }),
  })
}
