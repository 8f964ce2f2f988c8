// The journal readers' limits and their error, apart from the file opening so that the public
// declarations name no Node module (a consumer type-checks without @types/node).
import { ConfigError } from '../errors/config-error.js'
import { ToolgateError } from '../errors/toolgate-error.js'

/** Default longest journal line a reader accepts, in bytes (64 MiB). */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

/** A journal that cannot be read: not a regular file, or a line longer than the reader's limit. */
export class JournalReadError extends ToolgateError {
  readonly code = 'INVALID_JOURNAL'
  override readonly name = 'JournalReadError'

  constructor(
    /** The journal's path, as the reader was given it. */
    readonly path: string,
    message: string,
  ) {
    super(`journal ${path}: ${message}`)
  }
}

/** `maxLineBytes` as given, checked; the default when absent. */
export function lineLimitOf(value: unknown, where: string): number {
  if (value === undefined) return DEFAULT_MAX_LINE_BYTES
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(`${where}.maxLineBytes`, 'expected a positive integer')
  }
  return value
}
