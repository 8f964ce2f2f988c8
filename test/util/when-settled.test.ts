// whenSettled: the cleanup the gateway's per-call wrappers run once a call settles (the drain's
// fusion release, the reload's in-flight count, the upstream cap's slot) runs exactly once on every
// path, before the value or error passes on, and never turns a result into two or none.
import { describe, expect, it } from 'vitest'
import { whenSettled } from '../../src/util/when-settled.js'

describe('whenSettled', () => {
  it('a value: done once, before the value passes on, then map', async () => {
    const order: string[] = []
    const value = await whenSettled(
      () => Promise.resolve(1),
      () => order.push('done'),
      (n) => {
        order.push(`map ${n}`)
        return n + 1
      },
    )
    expect(value).toBe(2)
    expect(order).toEqual(['done', 'map 1'])
  })

  it('a rejection: done once, the same error passes on, map not called', async () => {
    let done = 0
    const error = new Error('upstream')
    const settled = whenSettled(
      () => Promise.reject(error),
      () => done++,
      () => {
        throw new Error('map must not run')
      },
    )
    await expect(settled).rejects.toBe(error)
    expect(done).toBe(1)
  })

  it('a step that throws at once: done once, the error is thrown synchronously', () => {
    let done = 0
    const error = new Error('next() called multiple times')
    expect(() =>
      whenSettled(
        () => {
          throw error
        },
        () => done++,
      ),
    ).toThrow(error)
    expect(done).toBe(1)
  })

  it('a plain value from the step is waited on like a promise', async () => {
    let done = 0
    expect(
      await whenSettled(
        () => 'sync',
        () => done++,
      ),
    ).toBe('sync')
    expect(done).toBe(1)
  })
})
