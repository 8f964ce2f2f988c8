import type { ToolExecution, ToolProgress } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { RegistryCore } from './registry.js'
import type { Scope } from './scope.js'
import { warnContained } from './untrusted.js'
import { admitted } from './waterfall.js'

/**
 * Check and copy one `exec.progress(...)` argument into a frozen `ToolProgress` holding only the
 * fields that were given. A malformed report throws a path-qualified `TypeError` at the tool that
 * made it (a bug in the tool, not in the call).
 */
export function checkProgress(progress: unknown): ToolProgress {
  if (typeof progress !== 'object' || progress === null || Array.isArray(progress)) {
    throw new ConfigError('exec.progress(progress)', 'expected an object { message?, fraction? }')
  }
  const { message, fraction } = progress as { message?: unknown; fraction?: unknown }
  if (message !== undefined && typeof message !== 'string') {
    throw new ConfigError('exec.progress(progress).message', `expected a string, got ${typeof message}`)
  }
  if (fraction !== undefined && !(typeof fraction === 'number' && fraction >= 0 && fraction <= 1)) {
    throw new ConfigError('exec.progress(progress).fraction', `expected a number in [0, 1], got ${String(fraction)}`)
  }
  if (message === undefined) return Object.freeze(fraction === undefined ? {} : { fraction })
  return Object.freeze(fraction === undefined ? { message } : { message, fraction })
}

/**
 * Emit `tools/progress` to the listeners whose scope admits the call (the same filter rule as the
 * waterfalls), synchronously and in registration order. A listener that throws or rejects is
 * logged and never stops another listener or reaches the tool.
 */
export function emitProgress(core: RegistryCore, scope: Scope, exec: ToolExecution, progress: ToolProgress): void {
  const thisArg = scope.dispatchThis
  for (const callback of admitted(core.hooks, thisArg, 'tools/progress')) {
    try {
      const returned: unknown = Reflect.apply(callback, thisArg, [exec, progress])
      if (returned instanceof Promise) {
        returned.catch((error: unknown) => warnContained(core, 'a tools/progress listener failed', error))
      }
    } catch (error) {
      warnContained(core, 'a tools/progress listener failed', error)
    }
  }
}
