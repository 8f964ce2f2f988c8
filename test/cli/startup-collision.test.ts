// A tool name two upstreams reach by different prefixes (`up` + `x__tool`, `up__x` + `tool`) stops
// the gateway at startup whichever of them lists first (issue 36, item 13). Each order is forced:
// the first server writes a file once it has listed, and the second lists only once it exists.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, tempDir, writeConfig } from './helpers.js'

const SLOW = path.resolve(import.meta.dirname, '../fixtures/slow-list-server.mjs')

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => {
  await cleanup()
})

describe('a tool name collision across prefixes, in both listing orders', () => {
  for (const first of ['up', 'up__x'] as const) {
    it(`refuses to start when ${first} lists first`, async () => {
      const gate = path.join(dir, `listed-${first}`)
      const order = (server: string) => (server === first ? ['--listed', gate] : ['--list-after', gate])
      const config = await writeConfig(
        dir,
        {
          root: '.',
          servers: {
            up: { command: process.execPath, args: [SLOW, '--tool', 'x__tool', '--tag', 'up', ...order('up')] },
            up__x: { command: process.execPath, args: [SLOW, '--tool', 'tool', '--tag', 'up__x', ...order('up__x')] },
          },
        },
        `collision-${first}.json`,
      )
      const run = await runCli(['serve', '--config', config])
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(
        /servers\.up(__x)?: its tool "(x__)?tool" is not served: the name "up__x__tool" is already served by servers\.up(__x)?/,
      )
    }, 60_000)
  }
})
