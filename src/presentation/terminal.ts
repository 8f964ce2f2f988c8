import * as nodeUtil from 'node:util'
import type { FileDiff, FileLocation, ToolCallView, ToolResultView } from '../contract/views.js'
import { base64Bytes, formatBytes } from '../util/byte-size.js'
import { diff } from './diff-card.js'
import { isPlainRecord, readOwn } from './json-guard.js'
import { splitLines } from './read-window.js'

/** Options of the terminal card renderer. */
export interface TerminalRenderOptions {
  /** ANSI colour; default: stdout is a TTY and `NO_COLOR` is unset or empty. */
  color?: boolean
  /** Longest raw-input JSON shown on a generic pending card (characters). */
  maxInputChars?: number
}

/** Whether colour is on by default: a TTY stdout and no (non-empty) `NO_COLOR`. */
export function defaultTerminalColor(): boolean {
  // Tolerate hosts without `process` (a browser bundle of the presentation subpath).
  const proc = (globalThis as { process?: NodeJS.Process }).process
  if (proc === undefined) return false
  const noColor = proc.env?.NO_COLOR
  return proc.stdout?.isTTY === true && (noColor === undefined || noColor === '')
}

type Paint = (text: string) => string

interface Palette {
  bold: Paint
  dim: Paint
  red: Paint
  green: Paint
  yellow: Paint
  cyan: Paint
}

type StyleText = (format: string, text: string, options?: { validateStream?: boolean }) => string
/** `util.styleText` exists from Node 20.12 (engines allow 20.0): older 20.x paint the same SGR pairs by hand. */
const styleText = (nodeUtil as { styleText?: StyleText }).styleText

function sgr(format: string, open: number, close: number): Paint {
  // validateStream: false — the caller decided on colour; newer Node would re-check stdout's TTY.
  if (styleText) return (text) => (text === '' ? text : styleText(format, text, { validateStream: false }))
  return (text) => (text === '' ? text : `\u001b[${open}m${text}\u001b[${close}m`)
}

const PLAIN: Palette = {
  bold: (t) => t,
  dim: (t) => t,
  red: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  cyan: (t) => t,
}
const ANSI: Palette = {
  bold: sgr('bold', 1, 22),
  dim: sgr('dim', 2, 22),
  red: sgr('red', 31, 39),
  green: sgr('green', 32, 39),
  yellow: sgr('yellow', 33, 39),
  cyan: sgr('cyan', 36, 39),
}

// Any C0/C1 control except tab, left after Node's own escape-sequence stripping.
// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing terminal control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * One untrusted text line made safe for a terminal: escape sequences removed (tool output must not
 * drive the user's terminal), a carriage-return overwrite keeps what a terminal would show last,
 * other control characters become U+FFFD.
 */
function clean(line: string): string {
  let text = nodeUtil.stripVTControlCharacters(line)
  const cr = text.lastIndexOf('\r')
  if (cr !== -1) text = cr === text.length - 1 ? text.slice(0, cr) : text.slice(cr + 1)
  return text.replace(CONTROLS, '\ufffd')
}

/** Untrusted multi-line text → safe display lines. */
function textLines(text: string): string[] {
  return splitLines(text).map(clean)
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function contentLines(content: unknown, p: Palette): string[] {
  const out: string[] = []
  if (!Array.isArray(content)) return out
  for (const block of content as unknown[]) {
    if (!isPlainRecord(block)) continue
    const type = readOwn(block, 'type')
    if (type === 'text') out.push(...textLines(str(readOwn(block, 'text')) ?? ''))
    else if (type === 'image') out.push(p.dim(`[image ${clean(str(readOwn(block, 'mediaType')) ?? '?')}]`))
    else if (type === 'audio') {
      const data = str(readOwn(block, 'data'))
      const size = data === undefined ? '?' : formatBytes(base64Bytes(data))
      out.push(p.dim(`[audio ${clean(str(readOwn(block, 'mediaType')) ?? '?')} ${size}]`))
    } else if (type === 'resource-link') {
      const name = str(readOwn(block, 'title')) ?? str(readOwn(block, 'name')) ?? '?'
      out.push(`${p.dim('[link]')} ${clean(name)} ${p.cyan(clean(str(readOwn(block, 'uri')) ?? '?'))}`)
    } else if (type === 'resource') out.push(...resourceLines(readOwn(block, 'resource'), p))
  }
  return out
}

/** An embedded resource: its URI over its text, or its type and size when it is binary. */
function resourceLines(resource: unknown, p: Palette): string[] {
  if (!isPlainRecord(resource)) return [p.dim('[resource ?]')]
  const uri = p.cyan(clean(str(readOwn(resource, 'uri')) ?? '?'))
  const mediaType = str(readOwn(resource, 'mediaType'))
  const text = str(readOwn(resource, 'text'))
  if (text !== undefined)
    return [
      `${p.dim('[resource]')} ${uri}${mediaType === undefined ? '' : p.dim(` ${clean(mediaType)}`)}`,
      ...textLines(text),
    ]
  const blob = str(readOwn(resource, 'blob'))
  const size = blob === undefined ? '?' : formatBytes(base64Bytes(blob))
  return [`${p.dim('[resource]')} ${uri} ${p.dim(`${clean(mediaType ?? 'binary')} ${size}`)}`]
}

function locationText(location: FileLocation): string {
  return typeof location.line === 'number' ? `${location.path}:${location.line}` : location.path
}

function locationLines(locations: unknown, p: Palette): string[] {
  if (!Array.isArray(locations)) return []
  const out: string[] = []
  for (const loc of locations as unknown[]) {
    if (isPlainRecord(loc) && typeof readOwn(loc, 'path') === 'string') {
      out.push(`  ${p.dim('→')} ${p.cyan(clean(locationText(loc as unknown as FileLocation)))}`)
    }
  }
  return out
}

/**
 * Compact JSON preview of at most `max` characters, produced with an explicit work stack and
 * stopping as soon as the budget is spent: a huge or 100,000-level-deep input costs only the preview.
 */
function compactJson(value: unknown, max: number): string {
  const work: Array<{ token: string } | { value: unknown }> = [{ value }]
  let out = ''
  while (work.length > 0 && out.length <= max) {
    const item = work.pop()!
    if ('token' in item) {
      out += item.token
      continue
    }
    const v = item.value
    if (typeof v === 'string') out += JSON.stringify(v.length > max ? v.slice(0, max + 1) : v)
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null) out += String(v)
    else if (Array.isArray(v)) {
      work.push({ token: ']' })
      for (let i = v.length - 1; i >= 0; i--) {
        work.push({ value: v[i] })
        if (i > 0) work.push({ token: ',' })
      }
      out += '['
    } else if (isPlainRecord(v)) {
      const keys = Object.keys(v)
      work.push({ token: '}' })
      for (let i = keys.length - 1; i >= 0; i--) {
        work.push({ value: readOwn(v, keys[i]) })
        work.push({ token: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` })
      }
      out += '{'
    } else out += `<${typeof v}>`
  }
  return out.length > max ? `${out.slice(0, Math.max(0, max - 1))}…` : out
}

function diffLinesOf(diffs: unknown, p: Palette): string[] {
  if (!Array.isArray(diffs)) return []
  const out: string[] = []
  let lastPath: string | undefined
  for (const raw of diffs as unknown[]) {
    if (!isPlainRecord(raw)) continue
    const path = str(readOwn(raw, 'path')) ?? '?'
    const oldRaw = readOwn(raw, 'oldText')
    const newText = str(readOwn(raw, 'newText')) ?? ''
    const oldText = typeof oldRaw === 'string' ? oldRaw : null
    const d: FileDiff = { path, oldText, newText }
    if (d.path !== lastPath) {
      out.push(p.bold(clean(d.path)) + (d.oldText === null ? p.dim(' (new file)') : ''))
      lastPath = d.path
    } else {
      out.push(p.dim('  ⋯'))
    }
    if (d.oldText === null) {
      for (const line of textLines(d.newText)) out.push(p.green(`+ ${line}`))
      continue
    }
    for (const change of diff().diffLines(d.oldText, d.newText)) {
      const lines = textLines(change.value)
      if (change.added) for (const line of lines) out.push(p.green(`+ ${line}`))
      else if (change.removed) for (const line of lines) out.push(p.red(`- ${line}`))
      else for (const line of lines) out.push(p.dim(`  ${line}`))
    }
  }
  return out
}

function exitBadge(exitCode: unknown, signal: unknown, p: Palette): string | undefined {
  if (typeof signal === 'string' && signal !== '') return p.red(`✗ killed by ${clean(signal)}`)
  if (typeof exitCode !== 'number') return undefined
  return exitCode === 0 ? p.green('✓ exit 0') : p.red(`✗ exit ${exitCode}`)
}

function truncationNote(
  shown: number,
  total: unknown,
  truncated: unknown,
  nouns: [string, string],
  p: Palette,
): string {
  const all = typeof total === 'number' ? total : shown
  const base = `${all} ${all === 1 ? nouns[0] : nouns[1]}`
  return truncated === true ? p.yellow(`${base} (truncated: showing ${shown})`) : p.dim(base)
}

function palette(opts: TerminalRenderOptions | undefined): Palette {
  return (opts?.color ?? defaultTerminalColor()) ? ANSI : PLAIN
}

/** Fallback for a value that is not one of the known cards: never throw on a replayed view. */
function unknownCard(view: unknown, p: Palette): string[] {
  return [p.dim(`[unknown card] ${clean(compactJson(view, 200))}`)]
}

/**
 * Render a pending card as terminal lines (no trailing newlines). Every `ToolCallView` variant is
 * handled; a malformed view renders a one-line fallback instead of throwing.
 */
export function renderToolCallLines(view: ToolCallView, opts?: TerminalRenderOptions): string[] {
  const p = palette(opts)
  const v: unknown = view
  if (!isPlainRecord(v)) return unknownCard(v, p)
  const title = clean(str(readOwn(v, 'title')) ?? '')
  switch (readOwn(v, 'card')) {
    case 'generic': {
      const kind = str(readOwn(v, 'kind'))
      const out = [`${p.bold('●')} ${p.bold(title)}${kind !== undefined ? ` ${p.dim(`[${clean(kind)}]`)}` : ''}`]
      out.push(...locationLines(readOwn(v, 'locations'), p))
      const rawInput = readOwn(v, 'rawInput')
      if (rawInput !== undefined) out.push(`  ${p.dim(clean(compactJson(rawInput, opts?.maxInputChars ?? 200)))}`)
      for (const line of contentLines(readOwn(v, 'content'), p)) out.push(`  ${line}`)
      return out
    }
    case 'terminal': {
      const out = [`${p.cyan('$')} ${p.bold(title)}`]
      const description = str(readOwn(v, 'description'))
      if (description !== undefined) out.push(`  ${p.dim(clean(description))}`)
      const cwd = str(readOwn(v, 'cwd'))
      if (cwd !== undefined) out.push(`  ${p.dim(`in ${clean(cwd)}`)}`)
      return out
    }
    case 'diff': {
      const out = [`${p.bold('✎')} ${p.bold(title)}`]
      out.push(...locationLines(readOwn(v, 'locations'), p))
      out.push(...diffLinesOf(readOwn(v, 'diffs'), p))
      return out
    }
    default:
      return unknownCard(v, p)
  }
}

/**
 * Render a completed card as terminal lines (no trailing newlines): coloured diff hunks, numbered
 * read windows, grouped matches, exit badges. Every `ToolResultView` variant is handled; a
 * malformed view renders a one-line fallback instead of throwing.
 */
export function renderToolResultLines(view: ToolResultView, opts?: TerminalRenderOptions): string[] {
  const p = palette(opts)
  const v: unknown = view
  if (!isPlainRecord(v)) return unknownCard(v, p)
  const titleRaw = str(readOwn(v, 'title'))
  const out: string[] = titleRaw !== undefined ? [p.bold(clean(titleRaw))] : []
  switch (readOwn(v, 'card')) {
    case 'generic':
      out.push(...contentLines(readOwn(v, 'content'), p))
      return out
    case 'terminal': {
      const output = str(readOwn(v, 'output'))
      if (output !== undefined) out.push(...textLines(output))
      const badge = exitBadge(readOwn(v, 'exitCode'), readOwn(v, 'signal'), p)
      if (badge !== undefined) out.push(badge)
      return out
    }
    case 'diff':
      out.push(...diffLinesOf(readOwn(v, 'diffs'), p))
      return out
    case 'search': {
      const truncated = readOwn(v, 'truncated')
      const total = readOwn(v, 'total')
      if (readOwn(v, 'shape') === 'paths') {
        const paths = readOwn(v, 'paths')
        const list = Array.isArray(paths) ? (paths as unknown[]).filter((x) => typeof x === 'string') : []
        for (const path of list) out.push(p.cyan(clean(path)))
        out.push(truncationNote(list.length, total, truncated, ['path', 'paths'], p))
        return out
      }
      const files = readOwn(v, 'files')
      let shown = 0
      for (const file of Array.isArray(files) ? (files as unknown[]) : []) {
        if (!isPlainRecord(file)) continue
        out.push(p.cyan(p.bold(clean(str(readOwn(file, 'path')) ?? '?'))))
        const matches = readOwn(file, 'matches')
        for (const m of Array.isArray(matches) ? (matches as unknown[]) : []) {
          if (!isPlainRecord(m)) continue
          const line = readOwn(m, 'line')
          out.push(`  ${p.dim(`${typeof line === 'number' ? line : '?'}:`)} ${clean(str(readOwn(m, 'text')) ?? '')}`)
          shown++
        }
      }
      out.push(truncationNote(shown, total, truncated, ['match', 'matches'], p))
      return out
    }
    case 'read': {
      const path = clean(str(readOwn(v, 'path')) ?? '?')
      const offset = readOwn(v, 'offset')
      const totalLines = readOwn(v, 'totalLines')
      const linesRaw = readOwn(v, 'lines')
      const lines = (Array.isArray(linesRaw) ? (linesRaw as unknown[]) : []).filter(isPlainRecord)
      const first = lines.length > 0 ? readOwn(lines[0], 'number') : undefined
      const last = lines.length > 0 ? readOwn(lines[lines.length - 1], 'number') : undefined
      const of = typeof totalLines === 'number' ? ` of ${totalLines}` : ''
      if (lines.length === 0) {
        out.push(p.dim(`${path}: no lines at offset ${typeof offset === 'number' ? offset : '?'}${of}`))
        return out
      }
      out.push(p.dim(`${path}: lines ${first}-${last}${of}`))
      let width = 1
      for (const line of lines) width = Math.max(width, String(readOwn(line, 'number')).length)
      for (const line of lines) {
        const n = String(readOwn(line, 'number')).padStart(width)
        out.push(`${p.dim(`${n} │`)} ${clean(str(readOwn(line, 'text')) ?? '')}`)
      }
      return out
    }
    case 'web': {
      const truncated = readOwn(v, 'truncated') === true
      if (readOwn(v, 'kind') === 'fetch') {
        const status = readOwn(v, 'statusCode')
        const ok = typeof status === 'number' && status >= 200 && status < 400
        const badge = typeof status === 'number' ? (ok ? p.green(String(status)) : p.red(String(status))) : '?'
        out.push(`${p.cyan(clean(str(readOwn(v, 'url')) ?? '?'))} ${p.dim('→')} ${badge}`)
        if (truncated) out.push(p.yellow('(body truncated)'))
        return out
      }
      const answer = str(readOwn(v, 'answer'))
      if (answer !== undefined) out.push(...textLines(answer))
      const sources = readOwn(v, 'sources')
      for (const s of Array.isArray(sources) ? (sources as unknown[]) : []) {
        if (!isPlainRecord(s)) continue
        const sTitle = str(readOwn(s, 'title'))
        const url = clean(str(readOwn(s, 'url')) ?? '?')
        out.push(`• ${sTitle !== undefined ? `${clean(sTitle)} ${p.dim('—')} ` : ''}${p.cyan(url)}`)
        const snippet = str(readOwn(s, 'snippet'))
        if (snippet !== undefined) for (const line of textLines(snippet)) out.push(`  ${p.dim(line)}`)
      }
      if (truncated) out.push(p.yellow('(results truncated)'))
      return out
    }
    default:
      return unknownCard(v, p)
  }
}
