// Issue 22: the helpers the scheduling suites wait with hold under load. The "uncooperative body"
// tests once gave up on a 20 ms deadline because `until` was bounded by 10,000 loop turns, which a
// fast event loop spins through in about as long as the deadline takes.
import { describe, expect, it } from 'vitest'
import { deferred, settles, until } from './fakes.js'

describe('test helpers: waits are bounded by time, not by loop turns', () => {
  it('until() waits for a condition a timer sets after far more than 10,000 loop turns', async () => {
    let done = false
    const timer = setTimeout(() => {
      done = true
    }, 500)
    try {
      await until(() => done, 'the timer')
    } finally {
      clearTimeout(timer)
    }
    expect(done).toBe(true)
  })

  it('settles() passes the value through, and the rejection of a failed promise', async () => {
    const value = deferred<string>()
    setTimeout(() => value.resolve('late'), 50)
    await expect(settles(value.promise, 'the value')).resolves.toBe('late')
    await expect(settles(Promise.reject(new Error('broke')), 'the value')).rejects.toThrow('broke')
  })
})
