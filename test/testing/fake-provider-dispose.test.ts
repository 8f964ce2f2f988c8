// startFakeProvider's server is disposable (issue 25: the coding-agent guide page writes
// `await using fake = await startFakeProvider(…)`, so the fake closes however the block ends).
import { describe, expect, it } from 'vitest'
import { startFakeProvider } from '../../src/testing/index.js'

async function reachable(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(10_000) })
    return true
  } catch {
    return false
  }
}

describe('startFakeProvider', () => {
  it('closes at the end of an `await using` block, also when the block throws', async () => {
    let url = ''
    await expect(
      (async () => {
        await using fake = await startFakeProvider({ format: 'openai-chat', turns: ['hi'] })
        url = fake.url
        expect(await reachable(url)).toBe(true)
        throw new Error('the test body failed')
      })(),
    ).rejects.toThrow('the test body failed')
    expect(await reachable(url)).toBe(false)
  })

  it('close() may be called again, and after disposal', async () => {
    const fake = await startFakeProvider({ format: 'anthropic', turns: ['hi'] })
    await Promise.all([fake.close(), fake.close()])
    await fake[Symbol.asyncDispose]()
    expect(await reachable(fake.url)).toBe(false)
  })
})
