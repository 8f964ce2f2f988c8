// Every reader of a journal opens it here: only a regular file is read, and a line has a length
// limit. A device (`/dev/zero`), a FIFO or a directory never ends or never answers, and a file
// without newlines would otherwise be buffered whole; both would grow memory without bound.
import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
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

function kindOf(stats: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stats.isDirectory()) return 'a directory'
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isSocket()) return 'a socket'
  return 'a device'
}

/**
 * Open a journal for reading, refusing anything but a regular file. The open does not block (a
 * FIFO without a writer would otherwise hang it), and the check is made on the opened descriptor,
 * so the file cannot be swapped between the check and the reads.
 */
export async function openJournalFile(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw new JournalReadError(path, `not a regular file (it is ${kindOf(stats)})`)
    return handle
  } catch (error) {
    await handle.close()
    throw error
  }
}
