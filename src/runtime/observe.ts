import { Context } from 'cordis'
import { callableOf } from './direct-listener.js'
import type { RegistryCore } from './registry.js'
import type { Scope } from './scope.js'

type Filter = (this: unknown, ctx: Context) => boolean
type Listener = (...args: never[]) => unknown

/**
 * A scope-filtered, synchronous observer emit over Cordis's hook table (the same filter rule as
 * `waterfall`): every listener runs in registration order, and one that throws is logged and never
 * stops another or reaches the call. Callers check `core.hasHooks(name)` first so an event nobody
 * listens to costs one property read.
 */
export function observe(core: RegistryCore, scope: Scope, name: string, args: readonly unknown[]): void {
  const registered = core.hooks[name]
  if (registered === undefined) return
  const thisArg = scope.dispatchThis
  const filter = (thisArg as Record<symbol, Filter | undefined>)[Context.filter]
  for (const hook of [...registered]) {
    if (!hook.global && filter && !filter.call(thisArg, hook.ctx)) continue
    try {
      const returned: unknown = Reflect.apply(callableOf(hook.callback as Listener), thisArg, args)
      if (returned instanceof Promise) {
        returned.catch((error: unknown) => core.logger.warn('a %s listener failed: %s', name, error))
      }
    } catch (error) {
      core.logger.warn('a %s listener failed: %s', name, error)
    }
  }
}
