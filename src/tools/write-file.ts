import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolResultView } from '../contract/views.js'
import { diffCard, diffFile } from '../presentation/diff-card.js'
import { defineTool } from '../schema/define-tool.js'
import { fileDiffsSpec } from './file-diff-spec.js'
import { loadTextFile, writeConfined } from './file-text.js'
import type { FsToolContext } from './fs-context.js'
import { bool, callPresenter, list, listOf, readFileDiff, resultPresenter, str } from './present-util.js'
import { resolveInWorkspace } from './workspace.js'

/**
 * `write_file { path, content }`: create or overwrite a text file (parents are created). The result
 * is a `diff` card: the full file with `oldText: null` for a new file, context hunks for an
 * overwrite. A new file's text is not copied into `meta` — the card is rebuilt from the logged
 * `args.content` — so the durable log holds it once.
 */
export function createWriteFileTool(fs: FsToolContext): ToolDefinition {
  const { limits } = fs
  return defineTool({
    name: 'write_file',
    description:
      'Create a text file in the workspace, or replace the whole content of an existing one. ' +
      'Missing parent directories are created. Prefer edit_file for changes to part of a file.',
    parameters: {
      path: { type: 'string', required: true, description: 'File path, relative to the workspace root.' },
      content: { type: 'string', required: true, description: 'The complete new file content.' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: { type: 'string', required: true },
          created: { type: 'boolean', required: true },
          bytes: { type: 'integer', required: true },
          added: { type: 'integer', required: true },
          removed: { type: 'integer', required: true },
          diffs: fileDiffsSpec,
        },
      },
      render(_args, value) {
        const text = value.created
          ? `Created ${value.path} (${value.bytes} bytes, ${value.added} lines)`
          : value.added === 0 && value.removed === 0
            ? `Wrote ${value.path} (${value.bytes} bytes, content unchanged)`
            : `Wrote ${value.path} (${value.bytes} bytes, +${value.added} -${value.removed} lines)`
        return [{ type: 'text', text }]
      },
      presentationMeta(_args, value) {
        return { path: value.path, created: value.created, diffs: value.diffs }
      },
    },
    async execute(args, exec) {
      const rootReal = await fs.realRoot()
      const resolved = await resolveInWorkspace(fs.root, rootReal, args.path, 'create')
      const oldText = resolved.exists
        ? await loadTextFile(rootReal, resolved.abs, resolved.rel, limits.editMaxBytes, 'overwrite')
        : null
      exec.signal.throwIfAborted()
      if (!resolved.exists) await mkdir(path.dirname(resolved.abs), { recursive: true })
      // Exclusive create for a new file: never write through something that appeared since the check.
      await writeConfined(rootReal, resolved.abs, resolved.rel, args.content, resolved.exists ? 'write' : 'create')
      const summary = diffFile(resolved.rel, oldText, args.content)
      return {
        path: resolved.rel,
        created: oldText === null,
        bytes: Buffer.byteLength(args.content, 'utf8'),
        added: summary.added,
        removed: summary.removed,
        diffs: oldText === null ? [] : summary.diffs,
      }
    },
    presentCall: callPresenter('write_file', (args) => ({
      card: 'generic',
      title: `Write ${args.path}`,
      kind: 'edit',
      locations: [{ path: args.path }],
    })),
    presentResult: resultPresenter('write_file', (args, meta): ToolResultView | undefined => {
      const filePath = str(meta, 'path')
      const created = bool(meta, 'created')
      if (filePath === undefined || created === undefined) return undefined
      if (created)
        return typeof args.content === 'string'
          ? diffCard(filePath, null, args.content, `Created ${filePath}`)
          : undefined
      const diffs = listOf(list(meta, 'diffs'), readFileDiff)
      return diffs === undefined ? undefined : { card: 'diff', title: `Updated ${filePath}`, diffs }
    }),
  })
}
