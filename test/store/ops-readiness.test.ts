// Issue 37, item 1 with a real PostgreSQL: `serve --http --store URL` is ready while the store
// answers, turns 503 naming "store" when the database stops (while /healthz stays 200), and ready
// again once it is back; the store's appends are timed in /metrics.

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, tempDir } from '../cli/helpers.js'
import { killStarted, readyz, sample, scrape, startServe, stop, until } from '../cli/ops-helpers.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let url: string
let work: { dir: string; cleanup: () => Promise<void> }

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('readiness')
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  await killStarted()
  server?.destroy()
  await work?.cleanup()
})

describe('readiness with a store (issue 37, item 1)', { timeout: 240_000 }, () => {
  it('is 503 naming the store while PostgreSQL is stopped, and ready again once it is back', async () => {
    expect((await runCli(['store', 'migrate', '--store', url])).code).toBe(0)
    const { child, port } = await startServe(['--root', work.dir, '--store', url])
    try {
      expect(await readyz(port)).toMatchObject({ status: 200, body: { ready: true, notReady: [] } })
      const client = new Client({ name: 'ops-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)))
      const listed = await client.callTool({ name: 'list_dir', arguments: { path: '.' } })
      expect(listed.isError).toBeFalsy()
      await client.close()
      const families = await scrape(port)
      expect(sample(families, 'toolgate_calls_total', { tool: 'list_dir', outcome: 'ok' })).toBe(1)
      // Its call-started and result records, at least.
      expect(sample(families, 'toolgate_store_append_seconds')).toBeGreaterThanOrEqual(2)

      server.stop()
      await until(async () => (await readyz(port)).status === 503, 'readiness to see the store down')
      const down = await readyz(port)
      expect(down.body).toEqual({ ready: false, notReady: ['store'] })
      expect(down.text).not.toContain(url)
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)

      server.start()
      await until(async () => (await readyz(port)).status === 200, 'readiness to see the store back')
    } finally {
      await stop(child)
    }
  })
})
