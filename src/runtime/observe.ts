import type { RegistryCore } from './registry.js'
import type { Scope } from './scope.js'
import { admitted } from './waterfall.js'

/**
 * A scope-filtered, synchronous observer emit over Cordis's hook table (the same filter rule as
 * `waterfall`): every listener runs in registration order, and one that throws is logged and never
 * stops another or reaches the call. Callers check `core.hasHooks(name)` first so an event nobody
 * listens to costs one property read.
 */
export function observe(core: RegistryCore, scope: Scope, name: string, args: readonly unknown[]): void {
  const thisArg = scope.dispatchThis
  for (const listener of admitted(core.hooks, thisArg, name)) {
    try {
      const returned: unknown = Reflect.apply(listener, thisArg, args)
      if (returned instanceof Promise) {
        returned.catch((error: unknown) => core.logger.warn('a %s listener failed: %s', name, error))
      }
    } catch (error) {
      core.logger.warn('a %s listener failed: %s', name, error)
    }
  }
}
