// First-party reference tools: workspace-rooted file tools and a process-group-aware bash tool.
import path from 'node:path'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { type BashToolOptions, createBashToolDefinition } from './bash.js'
import { createEditFileTool } from './edit-file.js'
import { createFsToolContext } from './fs-context.js'
import { createGlobTool } from './glob.js'
import { createGrepTool } from './grep.js'
import { type FsToolLimits, resolveLimits } from './limits.js'
import { createListDirTool } from './list-dir.js'
import { withGenericFallback } from './present-util.js'
import { createReadFileTool } from './read-file.js'
import { bundledRipgrep } from './ripgrep.js'
import { createWriteFileTool } from './write-file.js'

export type { BashToolOptions } from './bash.js'
export { compileGlob, expandBraces, type GlobMatcher } from './glob-match.js'
export { DEFAULT_FS_TOOL_LIMITS, type FsToolLimits } from './limits.js'
export { WorkspacePathError } from './workspace-error.js'

/** Options of {@link createFsTools}. */
export interface FsToolsOptions {
  /** Workspace directory every path is resolved in and can never escape. */
  root: string
  /** Overrides of the result caps. */
  limits?: Partial<FsToolLimits>
  /**
   * The ripgrep binary `grep` runs: default the one `@vscode/ripgrep` ships for this platform;
   * `false` (or a missing binary) selects the JavaScript search.
   */
  ripgrep?: string | false
}

/**
 * The file tools rooted in one workspace, in this order: `read_file`, `write_file`, `edit_file`,
 * `glob`, `grep`, `list_dir`. The root is realpath'd on first use.
 *
 * Threat model. Confined: every path argument resolves inside the root (`..` refused, absolute
 * paths only under the root, symlinks leading out refused); files are opened relative to a verified
 * directory descriptor with `O_NOFOLLOW`, so a symlink swapped in by a concurrent local process
 * between the check and the use is refused rather than followed (Linux; elsewhere the final
 * component is still never followed); FIFOs, sockets and devices are refused without ever blocking;
 * walks never follow symlinks. Not confined: what the host user may do to the root itself (the
 * tools run with the host's permissions), and directories a concurrent process swaps while
 * `write_file` creates missing parent directories may receive those (empty) directories.
 */
export function createFsTools(options: FsToolsOptions): ToolDefinition[] {
  if (typeof options?.root !== 'string' || options.root === '')
    throw new ConfigError('createFsTools(options).root', 'expected a directory path')
  const ripgrep = options.ripgrep
  if (ripgrep !== undefined && ripgrep !== false && (typeof ripgrep !== 'string' || ripgrep === ''))
    throw new ConfigError('createFsTools(options).ripgrep', 'expected the path of a ripgrep binary, or false')
  const fs = createFsToolContext(
    path.resolve(options.root),
    resolveLimits(options.limits),
    ripgrep === false ? undefined : (ripgrep ?? bundledRipgrep()),
  )
  return [
    createReadFileTool(fs),
    createWriteFileTool(fs),
    createEditFileTool(fs),
    createGlobTool(fs),
    createGrepTool(fs),
    createListDirTool(fs),
  ].map(withGenericFallback)
}

/**
 * The `bash` tool running commands in `options.cwd` (see `BashToolOptions`).
 *
 * Threat model. Every command gets a minimal environment (no host secrets unless passed through
 * `env` or `inheritEnv`). With `sandbox: 'bwrap'` (or `'auto'` where bubblewrap works, the default)
 * a command can write only to `cwd` and a private `/tmp`, has no network unless `network: true`,
 * and runs in its own PID namespace, so everything it starts — background jobs, `setsid` daemons,
 * processes ignoring SIGTERM — ends with the call, and `--die-with-parent` ends it with the host.
 * It can still read whatever the host user can read. Unconfined (`'none'`, or `'auto'` without
 * bubblewrap) a command has the host user's full permissions and network; the tool still ends its
 * process group (SIGTERM, then SIGKILL after the grace), but a process that leaves the group with
 * `setsid` can outlive the call. The model-facing description and every result say which ran.
 */
export function createBashTool(options: BashToolOptions): ToolDefinition {
  return withGenericFallback(createBashToolDefinition(options))
}
