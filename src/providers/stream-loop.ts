// streamModelLoop: runModelLoop's own loop, with the model streamed and its events handed out
// as an async iterable instead of a callback.
import {
  checkOptions,
  driveModelLoop,
  type ModelLoopEvent,
  type ModelLoopResult,
  type RunModelLoopOptions,
  withExecute,
} from './model-loop.js'
import type { ProviderFormat } from './types.js'

/** The last event of a stream: what `runModelLoop` would have returned. */
export type ModelLoopDoneEvent<F extends ProviderFormat = ProviderFormat> = {
  readonly type: 'done'
} & ModelLoopResult<F>

/** What `streamModelLoop` yields: every `onEvent` event, in order, then `done`. */
export type StreamModelLoopEvent<F extends ProviderFormat = ProviderFormat> = ModelLoopEvent<F> | ModelLoopDoneEvent<F>

/**
 * `runModelLoop` with the model's reply streamed: iterate it for text, reasoning and tool-call
 * argument deltas as they arrive, each call's start, progress and result, a `step-end` with the
 * step's token usage, and finally `done` with the messages, stop reason, steps and usage
 * `runModelLoop` returns. Models with a `stream` method (every SDK adapter) stream; others answer
 * through `generate`. The loop starts on the first `next()`. Leaving the iteration early (`break`)
 * aborts the loop the way `signal` does and waits for its calls to settle. A failed model request
 * throws `ModelLoopError` from the iteration, as `runModelLoop` rejects with it.
 */
export function streamModelLoop<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
): AsyncIterable<StreamModelLoopEvent<F>> {
  checkOptions(options)
  return { [Symbol.asyncIterator]: () => run(options) }
}

async function* run<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
): AsyncGenerator<StreamModelLoopEvent<F>, void, undefined> {
  // The loop's signal: the caller's, or leaving the iteration early.
  const stop = new AbortController()
  const signal = stop.signal
  const outer = options.signal
  const forward = () => stop.abort(outer?.reason)
  if (outer?.aborted) forward()
  else outer?.addEventListener('abort', forward, { once: true })
  const queue: ModelLoopEvent<F>[] = []
  let wake: (() => void) | undefined
  const rouse = () => {
    wake?.()
    wake = undefined
  }
  const observer = options.onEvent
  // A call runs once the consumer has taken every event before it (its tool-start included), so
  // what the consumer shows of a call comes before what the call itself shows, such as an approval
  // question on the same terminal.
  let pushed = 0
  let taken = 0
  let released = false
  const waiting: { upTo: number; resolve: () => void }[] = []
  const caughtUp = (): Promise<void> | undefined => {
    if (released || taken >= pushed) return undefined
    const upTo = pushed
    return new Promise((resolve) => waiting.push({ upTo, resolve }))
  }
  const release = (all: boolean) => {
    for (let i = waiting.length - 1; i >= 0; i--) if (all || waiting[i].upTo <= taken) waiting.splice(i, 1)[0].resolve()
  }
  const tools = withExecute(options.tools, async (input, opts) => {
    await caughtUp()
    return options.tools.execute(input, opts)
  })
  let outcome: { result: ModelLoopResult<F> } | { error: unknown } | undefined
  const loop = driveModelLoop(
    {
      ...options,
      tools,
      signal,
      onEvent: (event) => {
        pushed++
        queue.push(event)
        rouse()
        observer?.(event)
      },
    },
    { messages: [...options.messages], steps: [] },
    undefined,
    true,
  ).then(
    (result) => {
      outcome = { result }
      rouse()
    },
    (error: unknown) => {
      outcome = { error }
      rouse()
    },
  )
  try {
    for (;;) {
      const event = queue.shift()
      if (event !== undefined) {
        yield event
        taken++
        release(false)
        continue
      }
      if (outcome !== undefined) break
      await new Promise<void>((resolve) => {
        wake = resolve
      })
    }
    if ('error' in outcome) throw outcome.error
    yield { type: 'done', ...outcome.result }
  } finally {
    // An iteration left early stops the loop; every call it started still ends with one result.
    released = true
    release(true)
    if (outcome === undefined) {
      stop.abort(new DOMException('The stream was closed', 'AbortError'))
      await loop
    }
    outer?.removeEventListener('abort', forward)
  }
}
