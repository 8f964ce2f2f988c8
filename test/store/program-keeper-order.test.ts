// Issue 40, item 5: a kept program's turn is saved (and so listed as pending, for the viewer to
// decide) only once the journal's records before it are committed. The viewer refuses a decision
// for a call the journal does not show asking; a SIGKILL between the turn's save and the journal's
// group commit left the program undecidable (the restart test failed about once in five).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent, ApprovalRequest, ToolExecutionResult } from '../../src/contract/execution.js'
import { createProgramKeeper } from '../../src/gateway/program-keeper.js'
import { createFileStore } from '../../src/journal/file-store.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('a kept program is saved after its journal records are committed (issue 40, item 5)', () => {
  it('flush settles before the turn is saved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-keeper-'))
    dirs.push(dir)
    const store = createFileStore({ journal: join(dir, 'journal.jsonl') })
    const order: string[] = []
    const saveTurn = store.saveTurn.bind(store)
    store.saveTurn = async (...args) => {
      order.push('save turn')
      return saveTurn(...args)
    }
    // An unnamed program's first pause creates its turn, leased (so that its resume holds the lease).
    const createTurn = store.createTurn.bind(store)
    store.createTurn = async (...args) => {
      order.push('save turn')
      return createTurn(...args)
    }
    const keeper = createProgramKeeper({
      store,
      key: new TextEncoder().encode('program-keeper-order-key-0123456789'),
      execute: async () => ({ isError: false, value: null }) as unknown as ToolExecutionResult,
      agent: {} as Agent,
      log: { info: () => {}, debug: () => {} },
      flush: async () => {
        order.push('flush')
        await new Promise((resolve) => setImmediate(resolve))
        order.push('flushed')
      },
    })
    try {
      const waiting: ApprovalRequest = {
        callId: 'p1:code:2',
        parentCallId: 'p1',
        toolName: 'guarded',
        arguments: { n: 2 },
      } as unknown as ApprovalRequest
      const controller = new AbortController()
      const result = keeper.run(
        { callId: 'p1', name: 'run_code', arguments: { code: '', description: 'x' }, signal: controller.signal },
        {},
        async (options) => {
          options.onSuspended?.(waiting, { waiting: [waiting], log: { v: 1 } })
          return { isError: true, error: { message: 'suspended' } } as unknown as ToolExecutionResult
        },
      )
      // The client's call stays open while the program waits; it ends when the client goes.
      for (const deadline = Date.now() + 60_000; !order.includes('save turn') && Date.now() < deadline; )
        await new Promise((resolve) => setTimeout(resolve, 10))
      expect(order).toEqual(['flush', 'flushed', 'save turn'])
      controller.abort()
      expect(await result).toMatchObject({ isError: true })
    } finally {
      keeper.close()
      await store.close()
    }
  })
})
