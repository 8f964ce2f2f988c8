import { open } from 'node:fs/promises'
import { looksBinary } from './binary.js'

/**
 * Load a whole text file for editing or diffing: refuses non-regular files, files above `maxBytes`
 * and binary files with a clear message naming `rel`.
 */
export async function loadTextFile(abs: string, rel: string, maxBytes: number, verb: string): Promise<string> {
  const handle = await open(abs, 'r')
  try {
    const info = await handle.stat()
    if (info.isDirectory()) throw new Error(`path: ${rel} is a directory`)
    if (!info.isFile()) throw new Error(`path: ${rel} is not a regular file`)
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
