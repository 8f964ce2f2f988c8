// Every reader of a journal opens it here: only a regular file is read, and a line has a length
// limit. A device (`/dev/zero`), a FIFO or a directory never ends or never answers, and a file
// without newlines would otherwise be buffered whole; both would grow memory without bound.
import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { JournalReadError } from './journal-limits.js'

export { DEFAULT_MAX_LINE_BYTES, JournalReadError, lineLimitOf } from './journal-limits.js'

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
