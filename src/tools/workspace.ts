import { lstat, realpath } from 'node:fs/promises'
import path from 'node:path'

/** A path argument that is malformed or leaves the workspace. */
export class WorkspacePathError extends Error {
  override name = 'WorkspacePathError'
  readonly code = 'PATH_OUTSIDE_WORKSPACE'
}

/** A path resolved inside the workspace. */
export interface ResolvedPath {
  /** Real (symlink-free) absolute path on disk. */
  abs: string
  /** Workspace-relative POSIX display path (`.` for the root), as the caller named it. */
  rel: string
  /** Whether the path exists (always true in `existing` mode). */
  exists: boolean
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code
}

function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)
}

/** Workspace-relative POSIX form of a path below `root`. */
export function toPosixRel(root: string, abs: string): string {
  const rel = path.relative(root, abs)
  return rel === '' ? '.' : rel.split(path.sep).join('/')
}

/** The real path of a workspace root; fails clearly when it does not exist or is not a directory. */
export async function realRoot(root: string): Promise<string> {
  let real: string
  try {
    real = await realpath(path.resolve(root))
  } catch (error) {
    throw new Error(`Workspace root ${root} is not accessible: ${(error as Error).message}`)
  }
  if (!(await lstat(real)).isDirectory()) throw new Error(`Workspace root ${root} is not a directory`)
  return real
}

/**
 * Resolve a tool's path argument inside the workspace, never outside it: `..` segments are refused
 * outright, absolute paths must lie under the root, and the result is realpath-checked so a symlink
 * leading outside is refused too. In `create` mode the path may be missing: the nearest existing
 * ancestor is realpath-checked instead (and a dangling symlink anywhere on the way is refused, since
 * writing through it would land wherever it points). Checks happen at call time; a concurrent
 * process swapping a directory for a symlink between check and use is outside this threat model.
 */
export async function resolveInWorkspace(
  root: string,
  rootReal: string,
  input: unknown,
  mode: 'existing' | 'create',
  argName = 'path',
): Promise<ResolvedPath> {
  if (typeof input !== 'string' || input === '') throw new WorkspacePathError(`${argName}: expected a non-empty path`)
  if (input.includes('\0')) throw new WorkspacePathError(`${argName}: path contains a NUL byte`)
  if (input.split(/[\\/]/).includes('..')) {
    throw new WorkspacePathError(`${argName}: '..' segments are not allowed (${JSON.stringify(input)})`)
  }
  let rel: string
  if (path.isAbsolute(input)) {
    const normalized = path.normalize(input)
    const bases = [rootReal, path.resolve(root)]
    const base = bases.find((b) => inside(b, normalized))
    if (base === undefined) throw new WorkspacePathError(`${argName}: ${input} is outside the workspace`)
    rel = path.relative(base, normalized)
  } else {
    rel = path.relative(rootReal, path.resolve(rootReal, input))
  }
  const target = path.join(rootReal, rel)
  const display = toPosixRel(rootReal, target)
  const checkInside = (real: string): void => {
    if (!inside(rootReal, real)) {
      throw new WorkspacePathError(`${argName}: ${display} resolves outside the workspace (through a symlink)`)
    }
  }
  try {
    const real = await realpath(target)
    checkInside(real)
    return { abs: real, rel: display, exists: true }
  } catch (error) {
    if (!isErrno(error, 'ENOENT') && !isErrno(error, 'ENOTDIR')) throw error
  }
  if (mode === 'existing') throw new Error(`${argName}: ${display} does not exist`)
  // Walk up to the nearest existing ancestor; every missing component must be truly absent.
  const missing: string[] = []
  let current = target
  for (;;) {
    try {
      await lstat(current)
      // It exists as a link but realpath failed: a dangling (or looping) symlink.
      throw new WorkspacePathError(`${argName}: ${toPosixRel(rootReal, current)} is a broken symlink`)
    } catch (error) {
      if (error instanceof WorkspacePathError) throw error
      if (isErrno(error, 'ENOTDIR')) throw new Error(`${argName}: ${display}: a parent path is not a directory`)
      if (!isErrno(error, 'ENOENT')) throw error
    }
    missing.unshift(path.basename(current))
    current = path.dirname(current)
    try {
      const real = await realpath(current)
      checkInside(real)
      if (!(await lstat(real)).isDirectory()) {
        throw new Error(`${argName}: ${toPosixRel(rootReal, current)} is not a directory`)
      }
      return { abs: path.join(real, ...missing), rel: display, exists: false }
    } catch (error) {
      if (isErrno(error, 'ENOTDIR')) throw new Error(`${argName}: ${display}: a parent path is not a directory`)
      if (!isErrno(error, 'ENOENT')) throw error
    }
  }
}

/** Throw the signal's reason (an AbortError) when it has fired: cooperative cancellation. */
export function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    const reason: unknown = signal.reason
    throw reason instanceof Error ? reason : new Error('The operation was aborted')
  }
}
