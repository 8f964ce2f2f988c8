// A stdio upstream under bubblewrap: a server entry's `sandbox` turns its command
// into `bwrap <mounts> -- command args`, so the upstream runs without the gateway's rights. What it
// sees by default: the system's programs and libraries, Node, and its own package, read-only; a
// private /tmp; nothing else, no network. `read` and `write` add paths; `network: true` keeps the
// host's network. The same bubblewrap probe as the bash tool's decides whether it can run here.
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from '../errors/config-error.js'
import { probeBubblewrap } from '../tools/sandbox.js'
import { isRecord } from '../util/is-record.js'

/** A server entry's `sandbox`: extra paths it may read, write, and whether it keeps the network. */
export interface UpstreamSandbox {
  read?: string[]
  write?: string[]
  network?: boolean
}

/** The system's programs and libraries, read-only in every sandbox (symbolic ones stay symbolic). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc/alternatives']
/** What the dynamic linker, TLS and name lookups read; /etc itself (users, secrets) stays out. */
const SYSTEM_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/ssl', '/etc/ca-certificates']
const NETWORK_FILES = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/gai.conf']

/** Check the shape of `servers.NAME.sandbox`; paths are checked against the disk at startup. */
export function checkSandboxShape(value: unknown, at: string, issues: string[]): UpstreamSandbox | undefined {
  if (value === undefined) return undefined
  if (!isRecord(value)) {
    issues.push(`${at}: expected an object { read?, write?, network? }`)
    return undefined
  }
  const sandbox: UpstreamSandbox = {}
  for (const key of Object.keys(value))
    if (key !== 'read' && key !== 'write' && key !== 'network')
      issues.push(`${at}.${key}: unknown key (expected "read", "write", "network")`)
  for (const key of ['read', 'write'] as const) {
    const list = value[key]
    if (list === undefined) continue
    if (!Array.isArray(list)) {
      issues.push(`${at}.${key}: expected an array of paths`)
      continue
    }
    const paths: string[] = []
    list.forEach((entry, i) => {
      if (typeof entry !== 'string' || entry === '' || entry.includes('\0'))
        issues.push(`${at}.${key}[${i}]: expected a path, got ${JSON.stringify(entry)}`)
      else paths.push(entry)
    })
    sandbox[key] = paths
  }
  if (value.network !== undefined) {
    if (typeof value.network === 'boolean') sandbox.network = value.network
    else issues.push(`${at}.network: expected true or false, got ${JSON.stringify(value.network)}`)
  }
  return sandbox
}

/** Relative `read`/`write` paths are the config file's, like `root` and `journal`. */
export function resolveSandboxPaths(sandbox: UpstreamSandbox, base: string): UpstreamSandbox {
  const resolve = (list: string[] | undefined) => list?.map((entry) => path.resolve(base, entry))
  return {
    ...sandbox,
    ...(sandbox.read ? { read: resolve(sandbox.read) } : {}),
    ...(sandbox.write ? { write: resolve(sandbox.write) } : {}),
  }
}

/** A stdio server spec as the transport spawns it. */
export interface StdioCommand {
  command: string
  args?: string[]
  env?: Record<string, string>
}

/**
 * The spec that runs `spec` inside its sandbox. Throws a ConfigError at `at` when bubblewrap cannot
 * run here or a configured path does not exist: a sandbox that is asked for is never skipped.
 */
export function sandboxedCommand(
  spec: StdioCommand,
  sandbox: UpstreamSandbox,
  at: string,
  bwrap = 'bwrap',
  searchPath = process.env.PATH ?? '',
): StdioCommand {
  const problem = probeBubblewrap(bwrap)
  if (problem !== undefined) throw new ConfigError(`${at}.sandbox`, `the upstream cannot be sandboxed: ${problem}`)
  const missing: string[] = []
  for (const key of ['read', 'write'] as const)
    sandbox[key]?.forEach((entry, i) => {
      if (!existsSync(entry)) missing.push(`${at}.sandbox.${key}[${i}]: no such file or directory: ${entry}`)
    })
  if (missing.length > 0) throw new ConfigError(at, missing)

  const args: string[] = ['--die-with-parent', '--new-session', '--unshare-all']
  if (sandbox.network === true) args.push('--share-net')
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp')
  const mounted = new Set<string>()
  const mount = (flag: '--ro-bind' | '--bind', source: string) => {
    if (mounted.has(`${flag} ${source}`)) return
    mounted.add(`${flag} ${source}`)
    const link = lstatOrUndefined(source)
    if (link === undefined) return
    // A top-level symbolic link (/lib -> usr/lib on merged-/usr systems) stays one inside.
    if (link.isSymbolicLink() && path.dirname(source) === '/') args.push('--symlink', readlinkSync(source), source)
    else args.push(flag, source, source)
  }
  for (const entry of SYSTEM_PATHS) mount('--ro-bind', entry)
  for (const entry of SYSTEM_FILES) mount('--ro-bind', entry)
  if (sandbox.network === true) for (const entry of NETWORK_FILES) mount('--ro-bind', entry)
  for (const entry of runtimePaths(spec, searchPath)) mount('--ro-bind', entry)
  for (const entry of sandbox.read ?? []) mount('--ro-bind', entry)
  // Written paths last: a writable directory inside a readable one stays writable.
  for (const entry of sandbox.write ?? []) mount('--bind', entry)
  // The upstream starts in its first writable path, else its first readable one, else /tmp.
  args.push('--chdir', sandbox.write?.[0] ?? sandbox.read?.[0] ?? '/tmp', '--setenv', 'HOME', '/tmp')
  // The upstream starts elsewhere than the gateway, so a relative command is resolved here first.
  const command = spec.command.includes('/') ? path.resolve(spec.command) : spec.command
  args.push('--', command, ...(spec.args ?? []))
  return { command: bwrap, args, ...(spec.env ? { env: spec.env } : {}) }
}

function lstatOrUndefined(file: string) {
  try {
    return lstatSync(file)
  } catch {
    return undefined
  }
}

/**
 * What the server's own program needs to read: the command (found on PATH) and the installation it
 * belongs to, Node (this one and the one on PATH), and the package of every argument that is a
 * file, with the node_modules it resolves its dependencies from.
 */
function runtimePaths(spec: StdioCommand, searchPath: string): string[] {
  const paths = new Set<string>()
  const add = (file: string | undefined) => {
    if (file === undefined) return
    for (const entry of installationOf(file)) paths.add(entry)
  }
  add(onPath(spec.command, searchPath))
  add(process.execPath)
  add(onPath('node', searchPath))
  for (const arg of spec.args ?? []) if (path.isAbsolute(arg) && isFile(arg)) add(arg)
  return [...paths]
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile()
  } catch {
    return false
  }
}

function onPath(command: string, searchPath: string): string | undefined {
  if (command.includes('/')) return isFile(command) ? path.resolve(command) : undefined
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue
    const candidate = path.join(dir, command)
    if (isFile(candidate)) return candidate
  }
  return undefined
}

/**
 * The directories a program file needs: for a file inside `node_modules`, the outermost
 * `node_modules` that holds it (its package and the dependencies hoisted beside it); for a `bin/`
 * program, its installation prefix (`/opt/node` for `/opt/node/bin/node`); else its directory.
 * Both the path as given and its real path, so symbolic links resolve inside.
 */
function installationOf(file: string): string[] {
  const found: string[] = []
  for (const candidate of new Set([file, realpathOrSelf(file)])) {
    const parts = candidate.split(path.sep)
    const modules = parts.indexOf('node_modules')
    if (modules > 0) found.push(parts.slice(0, modules + 1).join(path.sep))
    else if (path.basename(path.dirname(candidate)) === 'bin') found.push(path.dirname(path.dirname(candidate)))
    else found.push(path.dirname(candidate))
    // A script outside node_modules (a server of one's own) still needs its package's dependencies.
    if (modules <= 0) {
      const pkg = packageRootOf(path.dirname(candidate))
      if (pkg !== undefined) {
        found.push(pkg)
        // A linked node_modules (a worktree sharing another checkout's) is read where it points.
        const modulesDir = path.join(pkg, 'node_modules')
        if (lstatOrUndefined(modulesDir)?.isSymbolicLink()) found.push(realpathOrSelf(modulesDir))
      }
    }
  }
  // The root itself would expose everything.
  return found.filter((entry) => entry !== '/' && entry !== '')
}

function realpathOrSelf(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

/** The nearest directory at or above `dir` holding a package.json. */
function packageRootOf(dir: string): string | undefined {
  for (let at = dir; at !== path.dirname(at); at = path.dirname(at))
    if (existsSync(path.join(at, 'package.json'))) return at
  return undefined
}
