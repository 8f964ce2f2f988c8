import * as nodeFs from 'node:fs'
import path from 'node:path'
import type * as Tinyglobby from 'tinyglobby'
import { lazyRequire } from '../util/lazy-require.js'
import { GitignoreRules } from './gitignore.js'
import { SKIPPED_DIRECTORIES } from './walk.js'
import { inside } from './workspace.js'

const tinyglobby = lazyRequire<typeof Tinyglobby>('tinyglobby')

export interface GlobWalkOptions {
  /** Real path of the workspace root: `.gitignore` rules are relative to it. */
  rootAbs: string
  /** Real path of the directory searched (default `rootAbs`): patterns and results are relative to it. */
  cwdAbs?: string
  /** The rules of `.gitignore` files above `cwdAbs` (see `loadGitignoreChain`); the walk adds the rest. */
  rules?: GitignoreRules
  /** Whether wildcards match dotfiles (default false, as in a shell). */
  dot?: boolean
  patterns: readonly string[]
  signal: AbortSignal
  /** Directory entries the walk may read before it stops (the caller reports truncation). */
  maxEntries: number
}

export interface GlobWalk {
  /** Matching files, POSIX paths relative to `cwdAbs`, sorted. */
  paths: string[]
  /** Whether the entry budget cut the walk short. */
  exhausted: boolean
}

type ReaddirCallback = (error: NodeJS.ErrnoException | null, entries: nodeFs.Dirent[]) => void

/**
 * `tinyglobby` (picomatch: `**`, `*`, `?`, character classes, braces, extglobs; wildcards do not
 * match a leading dot, as before) over the workspace, with the walk shaped through tinyglobby's
 * `fs` adapter: every directory listing drops `.git`, `node_modules` and symlinks (never followed
 * or returned), learns the directory's `.gitignore` and drops what it ignores (so ignored trees
 * are pruned, not walked), and counts entries against `maxEntries`. A directory whose real path
 * lies outside the root reads as empty: a pattern's fixed leading part (`link/*`) makes
 * tinyglobby start its walk there, through a symlink the listings would otherwise have dropped.
 */
export async function globWalk(options: GlobWalkOptions): Promise<GlobWalk> {
  const { rootAbs } = options
  const rules = options.rules ?? new GitignoreRules()
  let entries = 0
  let exhausted = false
  // Directories listed by a directory already known to be inside, and not links themselves, are
  // inside too: only the walk's starting points (a pattern's leading part) need their real path.
  const vouched = new Set<string>()
  const readdir = (dir: nodeFs.PathLike, _options: unknown, callback: ReaddirCallback): void => {
    if (vouched.delete(path.resolve(String(dir)))) {
      listDirectory(dir, callback)
      return
    }
    nodeFs.realpath.native(String(dir), (realError, real) => {
      if (realError) return callback(realError, [])
      if (!inside(rootAbs, real)) return callback(null, [])
      listDirectory(dir, callback)
    })
  }
  const listDirectory = (dir: nodeFs.PathLike, callback: ReaddirCallback): void => {
    nodeFs.readdir(dir, { withFileTypes: true }, (error, listed) => {
      let dirents = listed
      if (error) return callback(error, [])
      if (exhausted || options.signal.aborted) return callback(null, [])
      entries += dirents.length
      if (entries > options.maxEntries) {
        // Keep what fits in the budget (by name, so the cut is deterministic) and stop the walk.
        exhausted = true
        const room = dirents.length - (entries - options.maxEntries)
        dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        dirents = dirents.slice(0, Math.max(0, room))
      }
      const rel = path.relative(rootAbs, String(dir)).split(path.sep).join('/')
      const prefix = rel === '' ? '' : `${rel}/`
      if (dirents.some((d) => d.name === '.gitignore' && d.isFile())) {
        try {
          rules.add(rel, nodeFs.readFileSync(path.join(String(dir), '.gitignore'), 'utf8'))
        } catch {
          // Unreadable: it adds no rules.
        }
      }
      const kept = dirents.filter((d) => {
        if (d.isSymbolicLink()) return false
        const isDirectory = d.isDirectory()
        if (isDirectory && SKIPPED_DIRECTORIES.has(d.name)) return false
        if (rules.ignores(prefix + d.name, isDirectory)) return false
        if (isDirectory) vouched.add(path.resolve(String(dir), d.name))
        return true
      })
      callback(null, kept)
    })
  }
  const found = await tinyglobby().glob(options.patterns as string[], {
    cwd: options.cwdAbs ?? rootAbs,
    dot: options.dot === true,
    followSymbolicLinks: false,
    expandDirectories: false,
    onlyFiles: true,
    signal: options.signal,
    fs: { readdir: readdir as unknown as typeof nodeFs.readdir },
  })
  options.signal.throwIfAborted()
  found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return { paths: found, exhausted }
}
