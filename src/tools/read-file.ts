import { stat } from 'node:fs/promises'
import type { ContentBlock } from '../contract/content.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ReadFileLine, ToolResultView } from '../contract/views.js'
import { languageFromPath } from '../presentation/language.js'
import { defineTool, type ValueOfSchema } from '../schema/define-tool.js'
import type { FsToolContext } from './fs-context.js'
import { BinaryFileError, readLineWindow } from './line-reader.js'
import { callPresenter, int, list, listOf, record, resultPresenter, str } from './present-util.js'
import { openInWorkspace, resolveInWorkspace } from './workspace.js'

function readLine(item: unknown): ReadFileLine | undefined {
  const r = record(item)
  if (r === undefined) return undefined
  const number = int(r, 'number')
  const text = str(r, 'text')
  return number === undefined || text === undefined ? undefined : { number, text }
}

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name}: expected an integer ≥ 1, got ${value}`)
  return value
}

const READ_FILE_OUTPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', required: true },
    offset: { type: 'integer', required: true },
    lines: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { number: { type: 'integer', required: true }, text: { type: 'string', required: true } },
      },
    },
    totalLines: { type: 'integer', required: true },
    totalLinesExact: { type: 'boolean', required: true },
    truncated: { type: 'boolean', required: true },
    cutLines: { type: 'integer', required: true },
  },
} as const

type ReadFileValue = ValueOfSchema<typeof READ_FILE_OUTPUT_SCHEMA>

/** The model's view: numbered lines, then what the window left out (and how to page on). */
function renderReadFile(value: ReadFileValue, maxLineChars: number): ContentBlock[] {
  const body = value.lines.map((line) => `${String(line.number).padStart(6)}\t${line.text}`)
  const notes: string[] = []
  const total = `${value.totalLines}${value.totalLinesExact ? '' : '+'}`
  if (value.totalLines === 0 && value.totalLinesExact) notes.push('(empty file)')
  else if (value.lines.length === 0) {
    notes.push(`(offset ${value.offset} is past the end of the file, which has ${total} lines)`)
  } else if (value.truncated) {
    const last = value.lines[value.lines.length - 1].number
    const more = value.totalLines > last || !value.totalLinesExact
    notes.push(
      `(showing lines ${value.lines[0].number}-${last} of ${total}${more ? `; continue with offset=${last + 1}` : ''})`,
    )
  }
  if (value.cutLines > 0) notes.push(`(${value.cutLines} long line(s) cut at ${maxLineChars} characters)`)
  const text = [...body, ...notes].join('\n')
  return [{ type: 'text', text: text === '' ? '(empty file)' : text }]
}

/** Read the window `offset`/`limit` of a workspace file, through a confined descriptor. */
async function readFileWindow(
  fs: FsToolContext,
  args: { path: string; offset?: number; limit?: number },
  signal: AbortSignal,
): Promise<ReadFileValue> {
  const { limits } = fs
  const offset = positive(args.offset, 'offset', 1)
  const limit = Math.min(positive(args.limit, 'limit', limits.readDefaultLines), limits.readMaxLines)
  const rootReal = await fs.realRoot()
  const resolved = await resolveInWorkspace(fs.root, rootReal, args.path, 'existing')
  const info = await stat(resolved.abs)
  if (info.isDirectory()) throw new Error(`path: ${resolved.rel} is a directory (use list_dir)`)
  if (!info.isFile()) throw new Error(`path: ${resolved.rel} is not a regular file`)
  let window: Awaited<ReturnType<typeof readLineWindow>>
  // Read through a confined descriptor: a symlink swapped in since the check is refused.
  const handle = await openInWorkspace(rootReal, resolved.abs, resolved.rel, 'read')
  try {
    window = await readLineWindow(handle, {
      offset,
      limit,
      maxLineChars: limits.readMaxLineChars,
      windowBytes: limits.readWindowBytes,
      countScanBytes: limits.readCountScanBytes,
      signal,
    })
  } catch (error) {
    if (error instanceof BinaryFileError) throw new Error(`path: ${resolved.rel} is a binary file; refusing to read it`)
    throw error
  } finally {
    await handle.close()
  }
  const last = window.lines.length > 0 ? window.lines[window.lines.length - 1].number : offset - 1
  const more = window.lines.length > 0 && (window.totalLines > last || !window.totalLinesExact)
  return {
    path: resolved.rel,
    offset,
    lines: window.lines,
    totalLines: window.totalLines,
    totalLinesExact: window.totalLinesExact,
    truncated: more || window.cutLines > 0,
    cutLines: window.cutLines,
  }
}

function readFileResultView(_args: unknown, meta: Record<string, unknown>): ToolResultView | undefined {
  const path = str(meta, 'path')
  const offset = int(meta, 'offset')
  const totalLines = int(meta, 'totalLines')
  const lines = listOf(list(meta, 'lines'), readLine)
  if (path === undefined || offset === undefined || totalLines === undefined || lines === undefined) return undefined
  const view: ToolResultView = { card: 'read', title: `Read ${path}`, path, offset, lines, totalLines }
  const lang = languageFromPath(path)
  if (lang !== undefined) view.lang = lang
  view.content = lines.map((line) => line.text).join('\n')
  return view
}

/**
 * `read_file { path, offset?, limit? }`: a bounded, 1-based window of a text file.
 *
 * `truncated` is true when the file goes on after the window (more lines, or the line count was
 * cut short by the scan budget) or when a line in the window was cut at `readMaxLineChars`; a window
 * past the end of the file is empty and not truncated. `totalLinesExact: false` marks `totalLines`
 * as a lower bound (the file was not scanned to its end).
 */
export function createReadFileTool(fs: FsToolContext): ToolDefinition {
  const { limits } = fs
  return defineTool({
    name: 'read_file',
    description:
      `Read a UTF-8 text file in the workspace as numbered lines. Reads at most ${limits.readMaxLines} lines per call ` +
      '(offset is the 1-based first line, limit the number of lines); use offset to page through long files. ' +
      'Binary files are refused.',
    parameters: {
      path: { type: 'string', required: true, description: 'File path, relative to the workspace root.' },
      offset: { type: 'integer', description: '1-based line to start from (default 1).' },
      limit: { type: 'integer', description: `Lines to read (default ${limits.readDefaultLines}).` },
    },
    output: {
      schema: READ_FILE_OUTPUT_SCHEMA,
      render: (_args, value) => renderReadFile(value, limits.readMaxLineChars),
      presentationMeta(_args, value) {
        return {
          path: value.path,
          offset: value.offset,
          lines: value.lines,
          totalLines: value.totalLines,
          truncated: value.truncated,
        }
      },
    },
    execute: (args, exec) => readFileWindow(fs, args, exec.signal),
    timeoutMs: 30_000,
    isConcurrencySafe: () => true,
    presentCall: callPresenter('read_file', (args) => ({
      card: 'generic',
      title: `Read ${args.path}`,
      kind: 'read',
      locations: [args.offset !== undefined ? { path: args.path, line: args.offset } : { path: args.path }],
    })),
    presentResult: resultPresenter('read_file', readFileResultView),
  })
}
