import { ConfigError } from '../errors/config-error.js'
import type { CodeRuntime } from './code-runtime.js'
import { createQuickJsRuntime, type QuickJsRuntimeOptions, resolveQuickJsLimits } from './quickjs-runtime.js'
import { createWorkerRuntime } from './worker-runtime.js'

/** Which sandbox runs Code Mode programs: a named built-in one, or your own {@link CodeRuntime}. */
export type CodeRuntimeChoice = 'worker' | 'inline' | CodeRuntime

/** The runtime-related keys of Code Mode's options. */
export interface CodeRuntimeSelection {
  /**
   * `'worker'` (default): a pool of worker threads, so a busy program never blocks the host's event
   * loop and one that cannot be interrupted is terminated. `'inline'`: QuickJS on the host thread,
   * for environments without worker threads. Or a {@link CodeRuntime} instance, which its creator
   * owns (Code Mode never disposes it).
   */
  readonly runtime?: CodeRuntimeChoice
  /** Worker threads of the `'worker'` runtime. Default `min(4, os.availableParallelism())`. */
  readonly poolSize?: number
  /** Per-run limits of a named runtime (CPU time, memory, stack, calls, logs, return value size). */
  readonly limits?: QuickJsRuntimeOptions
}

/** The runtime a selection names, and whether the caller created it (and so disposes it). */
export function selectCodeRuntime(
  selection: CodeRuntimeSelection | undefined,
  where: string,
): { readonly runtime: CodeRuntime; readonly owned: boolean } {
  const choice = selection?.runtime ?? 'worker'
  if (typeof choice === 'object' && choice !== null && typeof choice.run === 'function') {
    if (selection?.poolSize !== undefined || selection?.limits !== undefined)
      throw new ConfigError(
        `${where}.runtime`,
        'poolSize and limits apply to the named runtimes, not to a CodeRuntime instance',
      )
    return { runtime: choice, owned: false }
  }
  if (choice !== 'worker' && choice !== 'inline')
    throw new ConfigError(
      `${where}.runtime`,
      `expected 'worker', 'inline' or a CodeRuntime with run(), got ${String(choice)}`,
    )
  resolveQuickJsLimits(selection?.limits, `${where}.limits`)
  const poolSize = selection?.poolSize
  if (poolSize !== undefined) {
    if (choice !== 'worker') throw new ConfigError(`${where}.poolSize`, "only the 'worker' runtime has a pool")
    if (!Number.isInteger(poolSize) || poolSize < 1)
      throw new ConfigError(`${where}.poolSize`, `expected a positive integer, got ${String(poolSize)}`)
  }
  if (choice === 'inline') return { runtime: createQuickJsRuntime(selection?.limits), owned: true }
  return {
    runtime: createWorkerRuntime({ ...selection?.limits, ...(poolSize === undefined ? {} : { poolSize }) }),
    owned: true,
  }
}
