import { ConfigError } from '../errors/config-error.js'

/** Caps that keep every file tool's result bounded. All sizes are per call. */
export interface FsToolLimits {
  /** `read_file` lines when `limit` is omitted. */
  readDefaultLines: number
  /** Largest `read_file` window; a larger `limit` is clamped (and the result marked truncated). */
  readMaxLines: number
  /** Longest line `read_file` returns, in characters; longer lines are cut (and marked). */
  readMaxLineChars: number
  /** Text bytes one `read_file` window may hold; a window stops early when it is reached. */
  readWindowBytes: number
  /** Bytes scanned past the window to count `totalLines`; beyond it the count is a lower bound. */
  readCountScanBytes: number
  /** Largest file `write_file`/`edit_file` will load to diff or edit. */
  editMaxBytes: number
  /** Paths one `glob` returns. */
  globMaxResults: number
  /** Directory entries one recursive walk (`glob`, `grep`) may visit. */
  walkMaxEntries: number
  /** Matches one `grep` returns. */
  grepMaxMatches: number
  /** Longest matched line `grep` shows, in characters. */
  grepMaxLineChars: number
  /** Larger files are skipped by `grep`. */
  grepMaxFileBytes: number
  /** Files one `grep` searches. */
  grepMaxFiles: number
  /** Entries one `list_dir` returns. */
  listMaxEntries: number
}

export const DEFAULT_FS_TOOL_LIMITS: Readonly<FsToolLimits> = Object.freeze({
  readDefaultLines: 2000,
  readMaxLines: 2000,
  readMaxLineChars: 2000,
  readWindowBytes: 256 * 1024,
  readCountScanBytes: 8 * 1024 * 1024,
  editMaxBytes: 10 * 1024 * 1024,
  globMaxResults: 1000,
  walkMaxEntries: 200_000,
  grepMaxMatches: 200,
  grepMaxLineChars: 500,
  grepMaxFileBytes: 8 * 1024 * 1024,
  grepMaxFiles: 20_000,
  listMaxEntries: 1000,
})

/** Merge caller overrides over the defaults; every cap must be a positive integer. */
export function resolveLimits(overrides: Partial<FsToolLimits> | undefined): Readonly<FsToolLimits> {
  const limits: FsToolLimits = { ...DEFAULT_FS_TOOL_LIMITS }
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (!Object.hasOwn(DEFAULT_FS_TOOL_LIMITS, key))
      throw new ConfigError(`createFsTools(options).limits.${key}`, 'unknown limit')
    if (!Number.isSafeInteger(value) || (value as number) <= 0) {
      throw new ConfigError(`createFsTools(options).limits.${key}`, `expected a positive integer, got ${String(value)}`)
    }
    limits[key as keyof FsToolLimits] = value as number
  }
  return Object.freeze(limits)
}

/** Cut a display string to `max` characters, marking the cut. */
export function cutText(text: string, max: number): { text: string; cut: boolean } {
  return text.length > max ? { text: `${text.slice(0, max)}…`, cut: true } : { text, cut: false }
}
