// `toolgate serve` in front of an upstream that sends a 5,000-deep input schema and a 12 MB result
// (issue 22): the gateway starts, skips that one tool with a warning that names it, serves the
// rest, and reports the oversized result as over the size limit.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const HOSTILE = path.resolve(import.meta.dirname, '../fixtures/hostile-upstream-server.mjs')

let dir: string
let cleanup: () => Promise<void>
let s: Connected
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  const config = await writeConfig(dir, {
    root: '.',
    servers: { up: { command: process.execPath, args: [HOSTILE, '--deep', '5000', '--catalog'] } },
  })
  s = await serveStdio(['--config', config])
})
afterAll(async () => {
  await s.close()
  await cleanup()
})

describe('serve with a hostile upstream', () => {
  it('skips the 5,000-deep tool with a named warning and serves the others', async () => {
    const { tools } = await s.client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['read_file', 'up__ok', 'up__huge']))
    expect(names).not.toContain('up__deep')
    expect(s.stderr()).toMatch(/servers\.up: its tool "deep" is not served: Cannot register tool "up__deep"/)
    expect(s.stderr()).toMatch(/nests deeper than 256 levels/)
    expect(textOf(await s.client.callTool({ name: 'up__ok', arguments: { text: 'hi' } }))).toBe('ok: hi')
  })

  it('a 12 MB upstream result fails as over the 10 MiB limit, and the server answers again after', async () => {
    const huge = await s.client.callTool({ name: 'up__huge', arguments: { mb: 12 } })
    expect(huge.isError).toBe(true)
    expect(textOf(huge)).toMatch(/sent a message larger than the 10485760-byte limit/)
    expect(textOf(huge)).not.toMatch(/closed the connection/)
    expect(textOf(await s.client.callTool({ name: 'up__ok', arguments: { text: 'again' } }))).toBe('ok: again')
  })

  it('a 12 MB resource, prompt or completion names the 10 MiB limit and how to raise it (issue 36, item 12)', async () => {
    const limit = expect.stringMatching(
      /sent a message larger than the 10485760-byte limit .*--max-message-bytes .*"maxMessageBytes" config key/,
    )
    // Each oversized answer drops the upstream session: wait until it answers again before the next.
    const answering = async () => {
      const ok = () =>
        s.client.readResource({ uri: 'huge://1' }).then(
          () => true,
          () => false,
        )
      await expect.poll(ok, { timeout: 20_000, interval: 100 }).toBe(true)
    }
    await answering()
    await expect(s.client.readResource({ uri: 'huge://12' })).rejects.toMatchObject({ message: limit })
    await answering()
    await expect(s.client.getPrompt({ name: 'up__huge', arguments: { mb: '12' } })).rejects.toMatchObject({
      message: limit,
    })
    await answering()
    await expect(
      s.client.complete({ ref: { type: 'ref/prompt', name: 'up__huge' }, argument: { name: 'mb', value: '12' } }),
    ).rejects.toMatchObject({ message: limit })
    await answering()
    const huge = await s.client.callTool({ name: 'up__huge', arguments: { mb: 12 } })
    expect(textOf(huge)).toMatch(/--max-message-bytes .*"maxMessageBytes" config key/)
    await answering()
  }, 60_000)
})
