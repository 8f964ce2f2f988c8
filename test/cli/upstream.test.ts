// An upstream MCP server aggregated by `toolgate serve`: prefixed, list_changed followed, and a
// crash mid-call reported as an error result, with a reconnect on the next call.
import path from 'node:path'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { everyContentResult } from '../fixtures/every-content.mjs'
import { type Connected, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')

let dir: string
let cleanup: () => Promise<void>
let s: Connected
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  const config = await writeConfig(dir, {
    root: '.',
    servers: { up: { command: process.execPath, args: [UPSTREAM] } },
    policy: { deny: ['up__fail'] },
  })
  s = await serveStdio(['--config', config])
})
afterAll(async () => {
  await s.close()
  await cleanup()
})

describe('an aggregated upstream server', () => {
  it('lists its tools with the server name as prefix, schemas and annotations kept, denied ones hidden', async () => {
    const { tools } = await s.client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['read_file', 'up__echo', 'up__pid', 'up__slow', 'up__media']))
    expect(names).not.toContain('up__fail')
    const echo = tools.find((t) => t.name === 'up__echo')!
    expect(echo.inputSchema.properties).toHaveProperty('text')
    expect(echo.outputSchema?.properties).toHaveProperty('echoed')
    expect(echo.annotations).toMatchObject({ readOnlyHint: true, title: 'Echo' })
  })

  it('calls through toolgate, keeping structured content and mapping images and resources', async () => {
    const echo = await s.client.callTool({ name: 'up__echo', arguments: { text: 'hi' } })
    expect(echo.isError).toBeFalsy()
    expect(textOf(echo)).toBe('echo: hi')
    expect(echo.structuredContent).toEqual({ echoed: 'hi', length: 2 })
    const media = await s.client.callTool({ name: 'up__media', arguments: {} })
    // Embedded resources pass as resources, a blob with its bytes (issue 23: content stays lossless).
    expect(media.content).toEqual([
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'the notes' } },
      { type: 'resource', resource: { uri: 'file:///x.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
    ])
    const kinds = await s.client.callTool({ name: 'up__kinds', arguments: {} })
    expect(kinds).toEqual(everyContentResult)
    const denied = await s.client.callTool({ name: 'up__fail', arguments: {} })
    expect(denied.isError).toBe(true)
  })

  it('follows list_changed: a tool added upstream appears downstream', async () => {
    const changed = new Promise<void>((resolve) =>
      s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    )
    await s.client.callTool({ name: 'up__grow', arguments: {} })
    await changed
    const { tools } = await s.client.listTools()
    expect(tools.map((t) => t.name)).toContain('up__extra')
    const extra = await s.client.callTool({ name: 'up__extra', arguments: {} })
    expect(textOf(extra)).toBe('extra here')
  })

  it('a server killed mid-call gives an error result, and the next call reconnects', async () => {
    const pid = Number(textOf(await s.client.callTool({ name: 'up__pid', arguments: {} })))
    expect(pid).toBeGreaterThan(0)
    let progressed!: () => void
    const running = new Promise<void>((resolve) => {
      progressed = resolve
    })
    const call = s.client.callTool({ name: 'up__slow', arguments: { ms: 60_000 } }, undefined, {
      onprogress: () => progressed(),
    })
    await running
    process.kill(pid, 'SIGKILL')
    const result = await call
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/closed the connection/)
    const again = Number(textOf(await s.client.callTool({ name: 'up__pid', arguments: {} })))
    expect(again).toBeGreaterThan(0)
    expect(again).not.toBe(pid)
  })
})
