// The gateway installs the deadline wrapper once: createToolRuntime() already loads TimeoutPolicy,
// so a second copy would time every call twice (issue 21 item 8).
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openGateway } from '../../src/gateway/gateway.js'
import { createLog } from '../../src/gateway/log.js'
import { TimeoutPolicy } from '../../src/scheduling/timeout-policy.js'
import { tempDir } from './helpers.js'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the gateway (issue 21 item 8)', () => {
  it('runs the TimeoutPolicy wrapper exactly once per call', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeFile(path.join(dir, 'a.txt'), 'alpha\n')
      // `wrap` is the policy's tools/execute listener body; the listener looks it up per call.
      const wrap = vi.spyOn(TimeoutPolicy.prototype as unknown as { wrap: (...args: unknown[]) => unknown }, 'wrap')
      const sink = { write: () => true }
      const gateway = await openGateway(
        {
          root: dir,
          bash: false,
          mode: 'native',
          servers: {},
          policy: {},
          verbose: false,
          access: { allowedHosts: [], allowedOrigins: [] },
        },
        createLog(sink as unknown as NodeJS.WritableStream, false),
      )
      try {
        const result = await gateway.agent.ctx.tools.execute({
          callId: 'c1',
          name: 'read_file',
          arguments: { path: 'a.txt' },
          agent: gateway.agent,
          signal: new AbortController().signal,
        })
        expect(result.isError).toBe(false)
        expect(wrap).toHaveBeenCalledTimes(1)
        await gateway.agent.ctx.tools.execute({
          callId: 'c2',
          name: 'list_dir',
          arguments: { path: '.' },
          agent: gateway.agent,
          signal: new AbortController().signal,
        })
        expect(wrap).toHaveBeenCalledTimes(2)
      } finally {
        await gateway.close()
      }
    } finally {
      await cleanup()
    }
  })
})
