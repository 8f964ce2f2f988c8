// `serve`'s early spawn (issue 35, Performance): every stdio upstream is started before the CLI's
// bundle loads, except a sandboxed one, whose command may only ever run inside its sandbox.
import { afterEach, describe, expect, it } from 'vitest'
import { spawnUpstreamsEarly } from '../../src/gateway/serve-spawn.js'
import { peekEarlySpawns } from '../../src/mcp/gateway.js'

const idle = { command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)'] }
let discard = () => {}

afterEach(() => discard())

describe('spawnUpstreamsEarly', () => {
  it('starts each stdio upstream once, and no sandboxed one', () => {
    if (process.platform === 'win32') return
    const plain = { ...idle, env: { WHICH: 'plain' } }
    const twin = { ...idle, env: { WHICH: 'plain' } }
    const boxed = { ...idle, env: { WHICH: 'boxed' }, sandbox: {} }
    discard = spawnUpstreamsEarly({ servers: { plain, twin, boxed, remote: { url: 'http://127.0.0.1:9/mcp' } } })
    const [first, second, none] = peekEarlySpawns([plain, twin, boxed])
    expect(first).toBeDefined()
    expect(second).toBeDefined()
    expect(second).not.toBe(first)
    expect(none).toBeUndefined()
  })
})
