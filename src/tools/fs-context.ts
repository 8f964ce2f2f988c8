import type { FsToolLimits } from './limits.js'
import { realRoot } from './workspace.js'

/** What every file tool of one `createFsTools` call shares. */
export interface FsToolContext {
  /** The root as configured (resolved to absolute, not realpath'd). */
  readonly root: string
  /** The root's real path, resolved on first use. */
  realRoot(): Promise<string>
  readonly limits: Readonly<FsToolLimits>
  /** The ripgrep binary `grep` runs, or `undefined` for the JavaScript search. */
  readonly ripgrep: string | undefined
}

export function createFsToolContext(
  root: string,
  limits: Readonly<FsToolLimits>,
  ripgrep: string | undefined,
): FsToolContext {
  let cached: Promise<string> | undefined
  return {
    root,
    limits,
    ripgrep,
    realRoot() {
      // Re-resolve after a failure (the root may be created later), cache after success.
      if (cached === undefined) {
        cached = realRoot(root)
        cached.catch(() => {
          cached = undefined
        })
      }
      return cached
    },
  }
}
