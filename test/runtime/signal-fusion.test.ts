// The fusions the pipeline, the timeouts and the gateway's drain make per call (R-EXEC-4: a call's
// cancellation reaches its body): a fused signal follows each source, whichever aborts first gives
// the reason, and a released fusion leaves nothing on a source, whether the source can take the
// relay set as a property or is not extensible (then the set is kept beside it).
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { attachedCount, followSignal, fuseSignals } from '../../src/runtime/signal-fusion.js'

const sources = {
  plain: () => new AbortController(),
  // Frozen, a Node AbortSignal could never abort (it keeps its state in own properties).
  sealed: () => {
    const controller = new AbortController()
    Object.preventExtensions(controller.signal)
    return controller
  },
}

describe('signal fusion', () => {
  it.each(Object.keys(sources) as (keyof typeof sources)[])(
    'a %s source: the first to abort gives its reason',
    (kind) => {
      const a = sources[kind]()
      const b = new AbortController()
      const fused = fuseSignals(a.signal, b.signal)
      const other = fuseSignals(a.signal, b.signal)
      expect(attachedCount(a.signal)).toBe(2)
      expect(getEventListeners(a.signal, 'abort')).toHaveLength(1)
      const reason = new Error('first')
      a.abort(reason)
      b.abort(new Error('second'))
      expect(fused.signal.aborted && fused.signal.reason).toBe(reason)
      expect(other.signal.reason).toBe(reason)
      // The relay went with the abort: nothing is left on the source.
      expect(attachedCount(a.signal)).toBe(0)
      expect(getEventListeners(a.signal, 'abort')).toHaveLength(0)
      // A fusion made after the abort is aborted at once, with the same reason.
      expect(fuseSignals(b.signal, a.signal).signal.reason).toBe(b.signal.reason)
    },
  )

  it.each(Object.keys(sources) as (keyof typeof sources)[])(
    'a %s source: a released fusion no longer follows it',
    (kind) => {
      const a = sources[kind]()
      const fused = followSignal(a.signal)
      const kept = followSignal(a.signal)
      fused.release()
      expect(attachedCount(a.signal)).toBe(1)
      a.abort(new Error('late'))
      expect(fused.signal.aborted).toBe(false)
      expect(kept.signal.aborted).toBe(true)
      // Its own abort still ends it, with its owner's reason.
      fused.abort('own')
      expect(fused.signal.reason).toBe('own')
    },
  )

  it('a source sealed after a fusion attached still reaches it, and a later fusion too', () => {
    const a = new AbortController()
    const fused = followSignal(a.signal)
    Object.preventExtensions(a.signal)
    const later = followSignal(a.signal)
    expect(attachedCount(a.signal)).toBe(2)
    a.abort(new Error('after sealing'))
    expect((fused.signal.reason as Error).message).toBe('after sealing')
    expect((later.signal.reason as Error).message).toBe('after sealing')
  })
})
