// connectMcpServer against an upstream that sends what toolgate cannot import (issue 22): a tool
// whose schema is too deep at any depth is skipped with a warning naming it, the server's other
// tools work, and a result over the size limit fails with that cause, not "closed the connection".
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { connectMcpServer } from '../../src/mcp/index.js'

const HOSTILE = path.resolve(import.meta.dirname, '../fixtures/hostile-upstream-server.mjs')

const call = (name: string, args: unknown) => ({
  callId: `c-${name}-${Math.random()}`,
  name,
  arguments: args,
  signal: new AbortController().signal,
})

const warnings: string[] = []
const onWarning = (warning: Error) => {
  if (warning.name === 'McpConnectionWarning') warnings.push(warning.message)
}
process.on('warning', onWarning)
afterEach(() => {
  warnings.length = 0
})

describe('an upstream tool whose input schema is too deep', () => {
  for (const depth of [300, 1000, 5000]) {
    it(`is skipped with a named warning at ${depth} levels, and the other tools work`, async () => {
      await using runtime = await createToolRuntime()
      const connection = await connectMcpServer(
        runtime.ctx,
        { command: process.execPath, args: [HOSTILE, '--deep', String(depth)] },
        { prefix: 'up__' },
      )
      try {
        expect(connection.tools).toEqual(['up__ok', 'up__huge'])
        await new Promise((resolve) => setImmediate(resolve))
        expect(warnings).toEqual([
          expect.stringMatching(
            /skipped tool "deep": Cannot register tool "up__deep":[\s\S]*nests deeper than 256 levels/,
          ),
        ])
        const ok = await runtime.tools.execute(call('up__ok', { text: 'hi' }))
        expect(ok).toMatchObject({ isError: false, content: [{ type: 'text', text: 'ok: hi' }] })
        // Re-listing the same server does not repeat the warning.
        await connection.refresh()
        await new Promise((resolve) => setImmediate(resolve))
        expect(warnings).toHaveLength(1)
      } finally {
        await connection.close()
      }
    })
  }
})

describe('an upstream result over the size limit', () => {
  it('fails naming the limit, and the next call reconnects', async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(
      runtime.ctx,
      { command: process.execPath, args: [HOSTILE] },
      { prefix: 'up__', maxMessageBytes: 1024 * 1024 },
    )
    try {
      const huge = await runtime.tools.execute(call('up__huge', { mb: 2 }))
      expect(huge.isError).toBe(true)
      expect(huge.error?.message).toMatch(
        /sent a message larger than the 1048576-byte limit \(the maxMessageBytes option\)/,
      )
      expect(huge.error?.message).not.toMatch(/closed the connection/)
      const ok = await runtime.tools.execute(call('up__ok', { text: 'again' }))
      expect(ok).toMatchObject({ isError: false, content: [{ type: 'text', text: 'ok: again' }] })
      const small = await runtime.tools.execute(call('up__huge', { mb: 0.5 }))
      expect(small.isError).toBe(false)
    } finally {
      await connection.close()
    }
  })

  it('rejects an unusable limit', async () => {
    await using runtime = await createToolRuntime()
    await expect(
      connectMcpServer(runtime.ctx, { command: process.execPath, args: [HOSTILE] }, { maxMessageBytes: 0 }),
    ).rejects.toThrow(/options\)\.maxMessageBytes: expected a positive whole number/)
  })
})

describe('an upstream result that is not lossless JSON', () => {
  it('issue 23: a -0 in a content block fails the call as the pipeline refuses such a value, INVALID_TOOL_OUTPUT', async () => {
    await using runtime = await createToolRuntime()
    const connection = await connectMcpServer(
      runtime.ctx,
      { command: process.execPath, args: [HOSTILE, '--negzero'] },
      { prefix: 'up__' },
    )
    try {
      const result = await runtime.tools.execute(call('up__negzero', {}))
      expect(result).toMatchObject({
        isError: true,
        error: {
          message: expect.stringMatching(/returned a value that is not lossless JSON.*-0/),
          info: { code: 'INVALID_TOOL_OUTPUT' },
        },
      })
      // The server's other tools are unaffected.
      const ok = await runtime.tools.execute(call('up__ok', { text: 'hi' }))
      expect(ok).toMatchObject({ isError: false, content: [{ type: 'text', text: 'ok: hi' }] })
    } finally {
      await connection.close()
    }
  })
})
