import { existsSync, constants as fsConstants } from 'node:fs'
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import { WorkspacePathError } from './workspace-error.js'

export { WorkspacePathError }

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

/** Whether `candidate` (a real path) is `root` or lies below it. */
export function inside(root: string, candidate: string): boolean {
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

/**
 * Whether a symlink at `abs` leads to an existing path inside the root, through however many links.
 * A dangling or looping link answers false: where it would lead cannot be known, and no file tool
 * can use it anyway.
 */
export async function linkStaysInside(rootReal: string, abs: string): Promise<boolean> {
  try {
    return inside(rootReal, await realpath(abs))
  } catch {
    return false
  }
}

/** Throw the signal's reason (an AbortError) when it has fired: cooperative cancellation. */
export function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    const reason: unknown = signal.reason
    throw reason instanceof Error ? reason : new Error('The operation was aborted')
  }
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fsConstants
const procFd = process.platform === 'linux' && existsSync('/proc/self/fd')

/** How {@link openInWorkspace} opens: read, write an existing file (not truncated yet), or create a new one. */
export type ConfinedOpenMode = 'read' | 'write' | 'create'

/**
 * Open a file resolved by {@link resolveInWorkspace} so that nothing swapped in since the check can
 * redirect it, and nothing but a regular file is ever used — without blocking on a FIFO.
 *
 * The parent directory is opened first (`O_DIRECTORY | O_NOFOLLOW`) and its real path, read back
 * from `/proc/self/fd`, must lie in the workspace; the file is then opened relative to that
 * descriptor (`/proc/self/fd/<dir>/<name>`, the `openat` of Node) with `O_NOFOLLOW | O_NONBLOCK`,
 * so neither a swapped parent nor a swapped final symlink can lead outside, and a FIFO opens (or
 * fails with ENXIO) at once instead of waiting for a peer. `fstat` then refuses anything that is not
 * a regular file. Where `/proc/self/fd` is missing (not Linux) the file is opened by path with the
 * same flags: FIFOs still never block, but a swapped parent directory is not detected.
 */
export async function openInWorkspace(
  rootReal: string,
  abs: string,
  rel: string,
  mode: ConfinedOpenMode,
): Promise<FileHandle> {
  const flags =
    (mode === 'read' ? O_RDONLY : mode === 'write' ? O_WRONLY : O_WRONLY | O_CREAT | O_EXCL) | O_NOFOLLOW | O_NONBLOCK
  let handle: FileHandle
  try {
    if (procFd) {
      const dir = await open(path.dirname(abs), O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
      try {
        const dirReal = await readlink(`/proc/self/fd/${dir.fd}`)
        if (!inside(rootReal, dirReal)) {
          throw new WorkspacePathError(`path: ${rel} resolves outside the workspace (its directory was swapped)`)
        }
        handle = await open(`/proc/self/fd/${dir.fd}/${path.basename(abs)}`, flags, 0o666)
      } finally {
        await dir.close()
      }
    } else handle = await open(abs, flags, 0o666)
  } catch (error) {
    if (error instanceof WorkspacePathError) throw error
    const code = (error as { code?: unknown }).code
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw new WorkspacePathError(`path: ${rel} changed into a symlink while it was being opened; refused`)
    }
    if (code === 'ENXIO') throw new Error(`path: ${rel} is not a regular file (a FIFO or socket)`)
    if (code === 'EISDIR') throw new Error(`path: ${rel} is a directory`)
    throw error
  }
  try {
    const info = await handle.stat()
    if (info.isDirectory()) throw new Error(`path: ${rel} is a directory`)
    if (!info.isFile()) {
      const kind = info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : 'a device or special file'
      throw new Error(`path: ${rel} is not a regular file (${kind}); refusing to use it`)
    }
    if (procFd) {
      const real = await readlink(`/proc/self/fd/${handle.fd}`)
      if (!inside(rootReal, real)) throw new WorkspacePathError(`path: ${rel} resolves outside the workspace`)
    }
    return handle
  } catch (error) {
    await handle.close()
    throw error
  }
}
