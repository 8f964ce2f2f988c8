import { Context, type EventsService } from 'cordis'
import { callableOf } from './direct-listener.js'

export type Listener = (...args: unknown[]) => unknown
type Filter = (this: unknown, ctx: Context) => boolean

/**
 * A waterfall over Cordis's own hook table with Cordis's own `Context.filter` semantics (a hook
 * runs when it is `global` or the dispatch `this`'s filter admits its context), in registration
 * order, and the same "next() called multiple times" guard. It exists because Cordis rc.10's
 * `waterfall` names two fresh closures per listener per call (`Object.defineProperty` on each),
 * which made every pass-through listener cost several µs on the per-call path.
 */
export function waterfall<R>(
  hooks: EventsService['_hooks'],
  thisArg: object,
  name: string,
  args: readonly unknown[],
  inner: () => Promise<R>,
): Promise<R> {
  const callbacks = admitted(hooks, thisArg, name)
  if (callbacks.length === 0) return inner()
  const step = (index: number): Promise<R> => {
    if (index === callbacks.length) return inner()
    let called = false
    const next = () => {
      if (called) throw new Error('next() called multiple times')
      called = true
      return step(index + 1)
    }
    return Reflect.apply(callbacks[index], thisArg, [...args, next]) as Promise<R>
  }
  return step(0)
}

/**
 * The callbacks of `name` that a dispatch `this` admits (Cordis's `Context.filter` rule: a hook runs
 * when it is `global` or the filter admits its context), in registration order. A fresh array, so
 * a listener that disposes itself (or another) never shifts the caller's loop.
 */
export function admitted(hooks: EventsService['_hooks'], thisArg: object, name: string): Listener[] {
  const registered = hooks[name]
  if (registered === undefined || registered.length === 0) return []
  const filter = (thisArg as Record<symbol, Filter | undefined>)[Context.filter]
  const callbacks: Listener[] = []
  for (const hook of registered) {
    if (hook.global || !filter || filter.call(thisArg, hook.ctx)) callbacks.push(callableOf(hook.callback as Listener))
  }
  return callbacks
}
