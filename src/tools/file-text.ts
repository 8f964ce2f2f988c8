import { looksBinary } from './binary.js'
import { openInWorkspace } from './workspace.js'

/**
 * Load a whole text file for editing or diffing: refuses non-regular files, files above `maxBytes`
 * and binary files with a clear message naming `rel`.
 */
export async function loadTextFile(
  rootReal: string,
  abs: string,
  rel: string,
  maxBytes: number,
  verb: string,
): Promise<string> {
  // Confined and non-blocking: a swapped symlink or a FIFO is refused, never followed or waited on.
  const handle = await openInWorkspace(rootReal, abs, rel, 'read')
  try {
    const info = await handle.stat()
    if (info.size > maxBytes) {
      throw new Error(`path: ${rel} is ${info.size} bytes, larger than the ${maxBytes}-byte limit to ${verb}`)
    }
    const bytes = await handle.readFile()
    if (looksBinary(bytes)) throw new Error(`path: ${rel} is a binary file; refusing to ${verb} it`)
    return bytes.toString('utf8')
  } finally {
    await handle.close()
  }
}

/** Replace a file's content through a confined, non-blocking descriptor (see `openInWorkspace`). */
export async function writeConfined(
  rootReal: string,
  abs: string,
  rel: string,
  text: string,
  mode: 'write' | 'create',
): Promise<void> {
  const handle = await openInWorkspace(rootReal, abs, rel, mode)
  try {
    // Truncate only once the descriptor is known to be a regular file inside the workspace.
    await handle.truncate(0)
    await handle.writeFile(text, 'utf8')
  } finally {
    await handle.close()
  }
}
