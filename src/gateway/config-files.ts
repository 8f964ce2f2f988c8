// The gateway config's `files` key: whether `serve` and `tools` offer toolgate's own file tools
// beside the upstreams' (default true), and what that leaves the workspace root to mean.
import { ConfigError } from '../errors/config-error.js'

/** Check the top-level `files`: true or false. */
export function checkFiles(value: unknown, issues: string[]): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value
  issues.push(`files: expected true or false, got ${JSON.stringify(value)}`)
  return undefined
}

/**
 * Refuse a root that was given but that nothing would use: without the file tools and without
 * bash it confines nothing, and silently ignoring it would hide a config that meant to serve files.
 * `given` says where the root came from: the `--root` flag, or the config file (named by its path).
 */
export function checkRootUsed(
  settings: { readonly files: boolean; readonly bash: boolean },
  given: { readonly flag: boolean } | { readonly file: string } | undefined,
): void {
  if (settings.files || settings.bash || given === undefined) return
  const problem = 'nothing uses the root: "files" is false and bash is off (drop the root, or serve bash there)'
  throw 'flag' in given ? new ConfigError('--root', problem) : new ConfigError(given.file, `root: ${problem}`)
}
