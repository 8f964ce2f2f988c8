import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { ToolgateError } from '../errors/toolgate-error.js'
import type { SearchMatch } from '../presentation/search-matches.js'
import { cutText } from './limits.js'

let located: string | null | undefined

/**
 * The ripgrep binary `@vscode/ripgrep` ships for this platform (an optional dependency of it, so
 * it installs from the npm registry with no download step), or `undefined` when it is missing.
 * Resolved synchronously, the way `@vscode/ripgrep` itself does, so a tool's description can say
 * which regex syntax applies; cached after the first look.
 */
export function bundledRipgrep(): string | undefined {
  if (located === undefined) {
    try {
      const require = createRequire(import.meta.url)
      const fromPackage = createRequire(require.resolve('@vscode/ripgrep'))
      const arch = process.env.npm_config_arch || process.arch
      const binary = process.platform === 'win32' ? 'rg.exe' : 'rg'
      located = fromPackage.resolve(`@vscode/ripgrep-${process.platform}-${arch}/bin/${binary}`)
    } catch {
      located = null
    }
  }
  return located ?? undefined
}

/** One ripgrep search. */
export interface RipgrepSearch {
  rg: string
  pattern: string
  /** Directory ripgrep runs in and searches (`.`), or the parent of `file`. */
  cwd: string
  /** Search this one file (a name inside `cwd`) instead of the whole directory. */
  file?: string
  /** A glob filter, ripgrep's `--glob` (gitignore-style: without `/` it matches a name at any depth). */
  glob?: string
  /** Prefix for displayed paths (the searched directory's workspace-relative path plus `/`). */
  prefix: string
  maxMatches: number
  maxLineChars: number
  maxFileBytes: number
  signal: AbortSignal
}

export interface RipgrepOutcome {
  kept: SearchMatch[]
  /** Matching lines found, shown or not. */
  total: number
  /** Files searched as text (binary ones not counted). */
  filesSearched: number
  /** Files skipped as binary: ripgrep met a NUL byte after a match was seen, or in a file named explicitly. */
  filesSkipped: number
}

/** A pattern ripgrep's (Rust) regex syntax refuses. */
export class RipgrepPatternError extends ToolgateError {
  override name = 'RipgrepPatternError'
  readonly code = 'INVALID_PATTERN' as const
}

type RgText = { text?: string; bytes?: string }

/** What a line of `rg --json` output is used for: a kept match, a file's end, the summary, or nothing. */
type LineKind = 'match' | 'end' | 'other' | 'skip'
const MATCH_PREFIX = Buffer.from('{"type":"match"')
const END_PREFIX = Buffer.from('{"type":"end"')
/** The summary message starts with its data (`{"data":{"elapsed_total"…},"type":"summary"}`). */
const DATA_PREFIX = Buffer.from('{"data":')
const CLASSIFY_BYTES = MATCH_PREFIX.length

function rgText(value: RgText | undefined): string {
  if (value === undefined) return ''
  if (typeof value.text === 'string') return value.text
  // Not valid UTF-8: ripgrep sends base64; show it with replacement characters.
  return typeof value.bytes === 'string' ? Buffer.from(value.bytes, 'base64').toString('utf8') : ''
}

function ripgrepArgs(search: RipgrepSearch): string[] {
  const args = [
    '--json',
    '--no-config',
    '--no-require-git',
    '--hidden',
    '--sort=path',
    `--max-filesize=${search.maxFileBytes}`,
    '--glob=!.git',
    '--glob=!node_modules',
  ]
  if (search.glob !== undefined) args.push(`--glob=${search.glob}`)
  args.push('--regexp', search.pattern, '--', search.file ?? '.')
  return args
}

/** Folds the messages of `rg --json` into kept matches and counts. */
class RipgrepFold {
  readonly kept: SearchMatch[] = []
  total = 0
  filesSkipped = 0
  filesSearched: number | undefined
  // The current file's matches: a file that turns out binary takes its matches back.
  private fileMatches = 0
  private keptBeforeFile = 0

  constructor(private readonly search: RipgrepSearch) {}

  /** What a line is used for, from its first bytes (a match is counted here, kept or not). */
  classify(head: Buffer): LineKind {
    if (head.equals(MATCH_PREFIX)) {
      this.total++
      this.fileMatches++
      return this.kept.length < this.search.maxMatches ? 'match' : 'skip'
    }
    if (head.subarray(0, END_PREFIX.length).equals(END_PREFIX)) return 'end'
    if (head.subarray(0, DATA_PREFIX.length).equals(DATA_PREFIX)) return 'other'
    return 'skip'
  }

  onLine(line: string, kind: LineKind): void {
    if (kind === 'match') this.keepMatch(line)
    else if (kind === 'end') this.endFile(line)
    else if (line.includes('"type":"summary"')) {
      const data = (JSON.parse(line) as { data: { stats: { searches: number } } }).data
      this.filesSearched = data.stats.searches
    }
  }

  outcome(): RipgrepOutcome {
    const searched = Math.max(0, (this.filesSearched ?? 0) - this.filesSkipped)
    return { kept: this.kept, total: this.total, filesSearched: searched, filesSkipped: this.filesSkipped }
  }

  private keepMatch(line: string): void {
    // Only the fields shown are parsed: the submatch list (one entry per hit, megabytes on a
    // minified line) is cut off first. A raw `,"submatches":` cannot occur inside a JSON string.
    const cut = line.indexOf(',"submatches":')
    const json = cut === -1 ? line : `${line.slice(0, cut)}}}`
    const data = (JSON.parse(json) as { data: { path: RgText; lines: RgText; line_number?: number } }).data
    const text = rgText(data.lines).replace(/\r?\n$/, '')
    this.kept.push({
      path: this.displayPath(rgText(data.path)),
      line: data.line_number ?? 0,
      text: cutText(text, this.search.maxLineChars).text,
    })
  }

  private endFile(line: string): void {
    const data = (JSON.parse(line) as { data: { binary_offset: number | null } }).data
    if (data.binary_offset !== null) {
      // ripgrep reports the lines it matched before it met the NUL byte (all of them, NULs
      // included, for a file named explicitly): none of a binary file is shown, it is skipped.
      this.filesSkipped++
      this.total -= this.fileMatches
      this.kept.length = this.keptBeforeFile
    }
    this.fileMatches = 0
    this.keptBeforeFile = this.kept.length
  }

  private displayPath(raw: string): string {
    const rel = this.search.file !== undefined ? raw : raw.startsWith('./') ? raw.slice(2) : raw
    return this.search.prefix + rel.split(path.sep).join('/')
  }
}

/**
 * Splits output into lines as bytes: a line is classified by its first bytes, and only the lines
 * used are kept and decoded (matches up to the cap, file ends, the summary). Matches past the cap
 * are counted without being read, so a huge output costs a newline scan.
 */
class JsonLineSplitter {
  private pieces: Buffer[] = []
  private size = 0
  private kind: LineKind | undefined

  constructor(private readonly fold: RipgrepFold) {}

  push(chunk: Buffer): void {
    let from = 0
    while (from <= chunk.length) {
      const newline = chunk.indexOf(0x0a, from)
      const end = newline === -1 ? chunk.length : newline
      if (this.kind !== 'skip' && end > from) {
        this.pieces.push(chunk.subarray(from, end))
        this.size += end - from
      }
      if (this.kind === undefined && (this.size >= CLASSIFY_BYTES || newline !== -1) && this.size > 0) {
        this.kind = this.classify()
      }
      if (this.kind === 'skip') this.reset()
      if (newline === -1) break
      if (this.kind !== undefined && this.kind !== 'skip') this.fold.onLine(this.line(), this.kind)
      this.reset()
      this.kind = undefined
      from = newline + 1
    }
  }

  /** The last line, when the output did not end with a newline. */
  end(): void {
    if (this.size === 0) return
    this.kind ??= this.classify()
    if (this.kind !== 'skip') this.fold.onLine(this.line(), this.kind)
  }

  private classify(): LineKind {
    const pieces = this.pieces
    return this.fold.classify((pieces.length === 1 ? pieces[0] : Buffer.concat(pieces)).subarray(0, CLASSIFY_BYTES))
  }

  private line(): string {
    return Buffer.concat(this.pieces, this.size).toString('utf8')
  }

  private reset(): void {
    this.pieces = []
    this.size = 0
  }
}

/** Why a finished ripgrep run failed, or `undefined` when it searched (exit 0 or 1, or 2 with a summary). */
function ripgrepFailure(search: RipgrepSearch, code: number | null, stderr: string, summarized: boolean) {
  if (code === 2 && !summarized) {
    const message = stderr.replace(/^rg: /, '').trim()
    if (/regex parse error|look-around|backreferences|error parsing regex/i.test(message)) {
      return new RipgrepPatternError(
        `pattern: invalid regular expression ${JSON.stringify(search.pattern)}: ${message.replace(/\s+/g, ' ')} (ripgrep's Rust regex syntax has no look-around or backreferences)`,
      )
    }
    return new Error(`grep: ripgrep failed: ${message || `exit status ${code}`}`)
  }
  if (code !== 0 && code !== 1 && code !== 2)
    return new Error(`grep: ripgrep failed: ${stderr.trim() || `exit status ${code}`}`)
  return undefined
}

/**
 * Run `rg --json` and fold its messages into kept matches and counts. Linear-time regex (Rust's
 * engine; no PCRE2), `.gitignore`/`.ignore` honoured even outside a git repository, dotfiles
 * searched but `.git` and `node_modules` skipped (as the JavaScript walk does), symlinks not
 * followed, binary files skipped (matches ripgrep saw before the NUL byte are dropped with the
 * file), files above `maxFileBytes` skipped, paths sorted so results are deterministic. Once
 * `maxMatches` are kept, later match messages are only counted, not parsed. Cancellation kills
 * the process. Exit status 2 without a summary is a failed search: its message (a regex parse
 * error, typically) becomes the error.
 */
export function ripgrepSearch(search: RipgrepSearch): Promise<RipgrepOutcome> {
  return new Promise((resolve, reject) => {
    search.signal.throwIfAborted()
    const child = spawn(search.rg, ripgrepArgs(search), { cwd: search.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    const fold = new RipgrepFold(search)
    const lines = new JsonLineSplitter(fold)
    let stderr = ''
    let failure: Error | undefined
    child.stdout.on('data', (chunk: Buffer) => {
      if (failure) return
      try {
        lines.push(chunk)
      } catch (error) {
        failure = new Error(`grep: unreadable ripgrep output: ${(error as Error).message}`)
        child.kill('SIGKILL')
      }
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 8192) stderr += chunk
    })
    const onAbort = (): void => {
      child.kill('SIGKILL')
    }
    search.signal.addEventListener('abort', onAbort, { once: true })
    child.on('error', (error) => {
      failure ??= new Error(`grep: could not run ripgrep (${search.rg}): ${error.message}`)
    })
    child.on('close', (code) => {
      search.signal.removeEventListener('abort', onAbort)
      if (search.signal.aborted) {
        const reason: unknown = search.signal.reason
        reject(reason instanceof Error ? reason : new Error('The operation was aborted'))
        return
      }
      if (failure) return reject(failure)
      try {
        lines.end()
      } catch (error) {
        return reject(new Error(`grep: unreadable ripgrep output: ${(error as Error).message}`))
      }
      const failed = ripgrepFailure(search, code, stderr, fold.filesSearched !== undefined)
      if (failed) reject(failed)
      else resolve(fold.outcome())
    })
  })
}
