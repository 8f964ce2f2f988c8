// A store journal's acknowledgement per call (issue 26): a body runs only once its own records are
// acknowledged, fails when one of them was not, and is not held back by another call's failed or
// later records.
import { describe, expect, it } from 'vitest'
import { createToolRuntime, Journal } from '../../src/index.js'
import type { JournalRecord } from '../../src/journal/records.js'
import { createFileStore, type Store } from '../../src/store/index.js'
import { writeTool } from '../fixtures/file-tools.js'
import { signal } from '../runtime/helpers.js'

/** A file store whose appends wait for `gate(record)` (which may throw to refuse the record). */
function gatedStore(gate: (record: JournalRecord) => Promise<void>): Store {
  const inner = createFileStore({ journal: '/nonexistent/never-written.jsonl' })
  return Object.assign(Object.create(inner) as Store, {
    append: async (records: readonly JournalRecord[]) => {
      for (const record of records) await gate(record)
    },
  })
}

async function setup(store: Store) {
  const { ctx, tools } = await createToolRuntime()
  const ran: string[] = []
  tools.register(
    writeTool(async (args) => {
      ran.push(args.path)
      return 'ok'
    }),
  )
  await ctx.plugin(Journal, { store })
  const call = (callId: string) =>
    tools.execute({ callId, name: 'write', arguments: { path: callId, text: 'x' }, signal: signal() })
  return { ran, call }
}

describe('store journal acknowledgement per call (issue 26)', () => {
  it("a call whose start record is refused fails without running; another call's failure does not fail it", async () => {
    let releaseX: () => void = () => {}
    const xHeld = new Promise<void>((resolve) => {
      releaseX = resolve
    })
    const { ran, call } = await setup(
      gatedStore(async (record) => {
        if (record.callId === 'x' && record.type === 'call-started') {
          // Refused only after y's start was acknowledged and y's body could have gone on.
          await xHeld
          throw new Error('database down')
        }
      }),
    )
    const x = call('x')
    const y = call('y')
    const yResult = await y
    releaseX()
    const xResult = await x
    expect(yResult.isError).toBe(false)
    expect(xResult.isError).toBe(true)
    expect(xResult.isError && xResult.error.message).toMatch(/database down/)
    expect(ran).toEqual(['y'])
  })

  it('a body waits for its own start record, not for records of calls that start after it', async () => {
    const held = new Map<string, () => void>()
    const { ran, call } = await setup(
      gatedStore(async (record) => {
        if (record.type !== 'call-started' || record.callId === 'first') return
        await new Promise<void>((resolve) => held.set(record.callId, resolve))
      }),
    )
    const first = call('first')
    const later = call('later')
    // `later`'s start is not acknowledged (held), yet `first` runs and finishes.
    expect((await first).isError).toBe(false)
    expect(ran).toEqual(['first'])
    held.get('later')?.()
    expect((await later).isError).toBe(false)
    expect(ran).toEqual(['first', 'later'])
  })
})
