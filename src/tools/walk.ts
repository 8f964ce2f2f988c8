import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { checkAborted } from './workspace.js'

/** Directory names a recursive search never descends into. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules'])

export interface WalkOptions {
  signal: AbortSignal
  /** Stop after visiting this many directory entries (the caller reports truncation). */
  maxEntries: number
  /** Whether to descend into a directory (relative POSIX path); default: always. */
  descend?(relDir: string, name: string): boolean
}

export interface WalkFile {
  /** POSIX path relative to the walk's start directory. */
  rel: string
  abs: string
}

/**
 * Depth-first walk in sorted order with an explicit stack (no recursion). Symlinks are never
 * followed — neither to directories nor files — so a walk cannot leave the workspace or loop.
 * `visit` returns `false` to stop early. Resolves to whether the entry budget cut the walk short.
 */
export async function walkFiles(
  startAbs: string,
  options: WalkOptions,
  visit: (file: WalkFile) => boolean | Promise<boolean>,
): Promise<{ exhausted: boolean; stopped: boolean }> {
  const stack: Array<{ abs: string; rel: string }> = [{ abs: startAbs, rel: '' }]
  let entries = 0
  while (stack.length > 0) {
    checkAborted(options.signal)
    const dir = stack.pop()!
    let dirents: import('node:fs').Dirent[]
    try {
      dirents = await readdir(dir.abs, { withFileTypes: true })
    } catch {
      continue // unreadable directory: skip it rather than fail the whole search
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const subdirs: Array<{ abs: string; rel: string }> = []
    for (const dirent of dirents) {
      if (++entries > options.maxEntries) return { exhausted: true, stopped: false }
      const rel = dir.rel === '' ? dirent.name : `${dir.rel}/${dirent.name}`
      const abs = path.join(dir.abs, dirent.name)
      if (dirent.isDirectory()) {
        if (SKIPPED_DIRECTORIES.has(dirent.name)) continue
        if (options.descend === undefined || options.descend(rel, dirent.name)) subdirs.push({ abs, rel })
      } else if (dirent.isFile()) {
        if (!(await visit({ rel, abs }))) return { exhausted: false, stopped: true }
      }
    }
    // Push in reverse so the sorted order is visited first-to-last.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i])
  }
  return { exhausted: false, stopped: false }
}
