import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolResultView } from '../contract/views.js'
import { diffFile } from '../presentation/diff-card.js'
import { defineTool } from '../schema/define-tool.js'
import { fileDiffsSpec } from './file-diff-spec.js'
import { loadTextFile, writeConfined } from './file-text.js'
import type { FsToolContext } from './fs-context.js'
import { callPresenter, list, listOf, readFileDiff, resultPresenter, str } from './present-util.js'
import { resolveInWorkspace } from './workspace.js'

/** Every start index of `needle` in `haystack`, overlapping ones included, up to `max`. */
function occurrences(haystack: string, needle: string, max: number): number[] {
  const found: number[] = []
  for (let i = haystack.indexOf(needle); i !== -1 && found.length < max; i = haystack.indexOf(needle, i + 1)) {
    found.push(i)
  }
  return found
}

function lineOf(text: string, index: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++
  return line
}

/** Replace the one occurrence of `oldString`; none or several is an error that says where. */
function replaceOnce(text: string, oldString: string, newString: string, rel: string): { at: number; next: string } {
  const found = occurrences(text, oldString, 20)
  if (found.length === 0) {
    throw new Error(`old_string: not found in ${rel} (it must match exactly, including whitespace)`)
  }
  if (found.length > 1) {
    const lines = found.map((i) => lineOf(text, i)).join(', ')
    throw new Error(
      `old_string: not unique in ${rel} (${found.length === 20 ? 'at least ' : ''}${found.length} ` +
        `occurrences, at lines ${lines}); include more surrounding context`,
    )
  }
  const at = found[0]
  // Slicing, not String#replace: `$&`-style patterns in new_string must stay literal.
  return { at, next: text.slice(0, at) + newString + text.slice(at + oldString.length) }
}

/**
 * `edit_file { path, old_string, new_string }`: replace exactly one occurrence of an exact string.
 * An absent or non-unique `old_string` fails with a message saying which (and, when not unique,
 * the lines it occurs on), so the model can add context and retry. The result is a `diff` card of
 * context hunks.
 */
export function createEditFileTool(fs: FsToolContext): ToolDefinition {
  const { limits } = fs
  return defineTool({
    name: 'edit_file',
    description:
      'Edit a text file in the workspace by replacing one exact occurrence of old_string with new_string. ' +
      'old_string must match the file exactly (including whitespace and indentation) and occur exactly once; ' +
      'include enough surrounding lines to make it unique.',
    parameters: {
      path: { type: 'string', required: true, description: 'File path, relative to the workspace root.' },
      old_string: { type: 'string', required: true, description: 'Exact text to replace; must occur exactly once.' },
      new_string: { type: 'string', required: true, description: 'Replacement text.' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: { type: 'string', required: true },
          line: { type: 'integer', required: true },
          added: { type: 'integer', required: true },
          removed: { type: 'integer', required: true },
          diffs: fileDiffsSpec,
        },
      },
      render(_args, value) {
        return [
          {
            type: 'text',
            text: `Edited ${value.path}: replaced 1 occurrence at line ${value.line} (+${value.added} -${value.removed} lines)`,
          },
        ]
      },
      presentationMeta(_args, value) {
        return { path: value.path, line: value.line, diffs: value.diffs }
      },
    },
    async execute(args, exec) {
      if (args.old_string === '') throw new Error('old_string: must not be empty (use write_file to create a file)')
      if (args.old_string === args.new_string) throw new Error('new_string: identical to old_string, nothing to change')
      const rootReal = await fs.realRoot()
      const resolved = await resolveInWorkspace(fs.root, rootReal, args.path, 'existing')
      const text = await loadTextFile(rootReal, resolved.abs, resolved.rel, limits.editMaxBytes, 'edit')
      const { at, next } = replaceOnce(text, args.old_string, args.new_string, resolved.rel)
      exec.signal.throwIfAborted()
      await writeConfined(rootReal, resolved.abs, resolved.rel, next, 'write')
      const summary = diffFile(resolved.rel, text, next)
      return {
        path: resolved.rel,
        line: lineOf(text, at),
        added: summary.added,
        removed: summary.removed,
        diffs: summary.diffs,
      }
    },
    presentCall: callPresenter('edit_file', (args) => ({
      card: 'diff',
      title: `Edit ${args.path}`,
      diffs: [{ path: args.path, oldText: args.old_string, newText: args.new_string }],
      locations: [{ path: args.path }],
    })),
    presentResult: resultPresenter('edit_file', (_args, meta): ToolResultView | undefined => {
      const filePath = str(meta, 'path')
      const diffs = listOf(list(meta, 'diffs'), readFileDiff)
      if (filePath === undefined || diffs === undefined) return undefined
      return { card: 'diff', title: `Edited ${filePath}`, diffs }
    }),
  })
}
