import { spawnSync } from 'node:child_process'
import { ConfigError } from '../errors/config-error.js'

/** Which OS sandbox `bash` commands run under: `auto` (bubblewrap when it works), `bwrap`, or `none`. */
export type BashSandboxMode = 'auto' | 'bwrap' | 'none'

/** What actually runs: bubblewrap, or the unconfined shell. */
export type BashSandbox = 'bwrap' | 'none'

const probes = new Map<string, string | undefined>()

/**
 * Whether bubblewrap works here (installed, and the kernel lets it create the namespaces), probed
 * once per binary with the same namespaces a command gets: `undefined` when it works, else why not.
 */
export function probeBubblewrap(binary: string): string | undefined {
  if (probes.has(binary)) return probes.get(binary)
  const probe = spawnSync(
    binary,
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-net', '--', 'true'],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000, encoding: 'utf8' },
  )
  let problem: string | undefined
  if (probe.error !== undefined) {
    const code = (probe.error as NodeJS.ErrnoException).code
    problem =
      code === 'ENOENT' ? `${binary} is not installed (Debian/Ubuntu: apt-get install bubblewrap)` : probe.error.message
  } else if (probe.status !== 0) {
    problem = `${binary} cannot create its namespaces here: ${probe.stderr.trim() || `exit status ${probe.status}`}`
  }
  probes.set(binary, problem)
  return problem
}

/** Resolve the configured mode to what runs; `bwrap` that cannot run throws a clear error. */
export function resolveSandbox(mode: BashSandboxMode, binary: string): BashSandbox {
  if (mode === 'none') return 'none'
  const problem = probeBubblewrap(binary)
  if (problem === undefined) return 'bwrap'
  if (mode === 'bwrap') throw new ConfigError('createBashTool(options).sandbox', `'bwrap' cannot run: ${problem}`)
  return 'none'
}

/**
 * The bubblewrap argument vector around `bash -c command`: the whole file system read-only, the
 * workspace read-write at its own path, a private `/tmp`, fresh `/dev` and `/proc`, its own PID
 * namespace (every process the command started dies with it, `setsid` included), no network
 * unless asked, and `--die-with-parent` so a dying host takes the sandbox along.
 */
export function bubblewrapArgs(
  workspace: string,
  network: boolean,
  shell: string,
  command: string,
  infoFd?: number,
): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']
  args.push('--bind', workspace, workspace, '--unshare-pid', '--unshare-ipc', '--unshare-uts')
  if (!network) args.push('--unshare-net')
  // `--info-fd` reports the sandbox's init (PID 1 of its namespace) as `{"child-pid": N}`.
  if (infoFd !== undefined) args.push('--info-fd', String(infoFd))
  args.push('--die-with-parent', '--chdir', workspace, '--', shell, '-c', command)
  return args
}

/** The host pid of the sandbox's init from bubblewrap's `--info-fd` JSON, if it can be read. */
export function sandboxInitPid(info: string): number | undefined {
  const match = /"child-pid"\s*:\s*(\d+)/.exec(info)
  return match === null ? undefined : Number(match[1])
}
