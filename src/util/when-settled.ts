// Run a step with cleanup once it settles, without an async frame of its own: per-call wrappers
// (the drain, the reload's in-flight count, the upstream cap) add one reaction to the next
// listener's promise instead of a function frame and its extra turns of the microtask queue.

/**
 * `run()`'s outcome, with `done` called once when it settles, or when `run` throws at once, before
 * the value or error passes on; `map`, when given, may replace the value (after `done`).
 */
export function whenSettled<T>(run: () => Promise<T> | T, done: () => void, map?: (value: T) => T): Promise<T> {
  let running: Promise<T>
  try {
    running = Promise.resolve(run())
  } catch (error) {
    done()
    throw error
  }
  return running.then(
    (value) => {
      done()
      return map === undefined ? value : map(value)
    },
    (error: unknown) => {
      done()
      throw error
    },
  )
}
