// connectMcpServer's onOpened (issue 23, cold start): what a server declared is heard as soon as
// its session has initialized, before its lists are read, and the tools come after.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer, type McpServerFeatures } from '../../src/mcp/index.js'

const HELD = path.resolve(import.meta.dirname, '../fixtures/held-upstream.mjs')

describe('onOpened', () => {
  it("reports the server's features once it has initialized, while its tools/list is still unanswered", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-opened-'))
    try {
      await using runtime = await createToolRuntime()
      const release = path.join(dir, 'release')
      let heard: (value: [McpServerFeatures, string]) => void = () => {}
      const opened = new Promise<[McpServerFeatures, string]>((resolve) => {
        heard = resolve
      })
      const connecting = connectMcpServer(
        runtime.ctx,
        { command: process.execPath, args: [HELD, release, '--all'] },
        { name: 'held', prefix: 'held__', onOpened: (features, server) => heard([features, server]) },
      )
      // The fixture answers nothing but initialize until the file exists.
      expect(await opened).toEqual([
        { resources: true, subscribe: true, prompts: true, completions: true, protocolVersion: '2025-11-25' },
        'held',
      ])
      expect(runtime.tools.get('held__echo')).toBeUndefined()
      await writeFile(release, '')
      const connection = await connecting
      expect(connection.tools).toEqual(['held__echo'])
      await connection.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
