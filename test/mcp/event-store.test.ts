// Issue 23 item 6: the resumability event store keeps each session's events within its bounds,
// oldest dropped first, and refuses (never mis-replays) a resume from an event it no longer has.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { BoundedEventStore, DEFAULT_EVENT_STORE_LIMITS } from '../../src/mcp/server/event-store.js'

const note = (n: number, pad = ''): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 1, progress: n, message: pad },
})

async function replay(store: BoundedEventStore, after: string): Promise<{ stream: string; sent: [string, number][] }> {
  const sent: [string, number][] = []
  const stream = await store.replayEventsAfter(after, {
    send: async (id, message) => {
      sent.push([id, (message as unknown as { params: { progress: number } }).params.progress])
    },
  })
  return { stream, sent }
}

describe('BoundedEventStore', () => {
  it('replays the events after an id, of that id’s stream only, in order', async () => {
    const store = new BoundedEventStore()
    const a1 = await store.storeEvent('a', note(1))
    const b1 = await store.storeEvent('b', note(10))
    const a2 = await store.storeEvent('a', note(2))
    await store.storeEvent('b', note(11))
    const a3 = await store.storeEvent('a', note(3))
    expect(new Set([a1, b1, a2, a3]).size).toBe(4)
    expect(await replay(store, a1)).toEqual({
      stream: 'a',
      sent: [
        [a2, 2],
        [a3, 3],
      ],
    })
    expect((await replay(store, b1)).sent.map(([, n]) => n)).toEqual([11])
    expect((await replay(store, a3)).sent).toEqual([])
  })

  it('replays what is stored while it replays', async () => {
    const store = new BoundedEventStore()
    const a1 = await store.storeEvent('a', note(1))
    await store.storeEvent('a', note(2))
    const sent: number[] = []
    await store.replayEventsAfter(a1, {
      send: async (_id, message) => {
        const n = (message as unknown as { params: { progress: number } }).params.progress
        sent.push(n)
        if (n < 4) await store.storeEvent('a', note(n + 1))
      },
    })
    expect(sent).toEqual([2, 3, 4])
  })

  it('keeps at most maxEvents, dropping the oldest, and refuses a resume from a dropped id', async () => {
    const store = new BoundedEventStore({ maxEvents: 3 })
    const ids: string[] = []
    for (let n = 1; n <= 10; n++) ids.push(await store.storeEvent('s', note(n)))
    expect(store.size.events).toBe(3)
    expect(store.state(ids[6] as string)).toBe('evicted')
    expect(store.state(ids[7] as string)).toBe('stored')
    await expect(replay(store, ids[6] as string)).rejects.toThrow(/no longer stored .*last 3 events/)
    expect((await replay(store, ids[7] as string)).sent.map(([, n]) => n)).toEqual([9, 10])
  })

  it('keeps at most maxBytes, and a single message over the bound is not kept either', async () => {
    const store = new BoundedEventStore({ maxBytes: 4096 })
    for (let n = 1; n <= 100; n++) await store.storeEvent('s', note(n, 'x'.repeat(200)))
    expect(store.size.bytes).toBeLessThanOrEqual(4096)
    expect(store.size.events).toBeGreaterThan(5)
    expect(store.size.events).toBeLessThan(20)
    const big = await store.storeEvent('s', note(101, 'y'.repeat(5000)))
    expect(store.size).toEqual({ events: 0, bytes: 0 })
    expect(store.state(big)).toBe('evicted')
  })

  it('drops events older than ttlMs', async () => {
    let now = 1_000_000
    const store = new BoundedEventStore({ ttlMs: 1000 }, () => now)
    const old = await store.storeEvent('s', note(1))
    now += 600
    const newer = await store.storeEvent('s', note(2))
    now += 600
    expect(store.state(old)).toBe('evicted')
    expect(store.state(newer)).toBe('stored')
    expect(store.size.events).toBe(1)
  })

  it('tells an evicted id from one it never issued, and keeps nothing once cleared', async () => {
    const store = new BoundedEventStore()
    const other = new BoundedEventStore()
    const id = await store.storeEvent('s', note(1))
    expect(store.state(await other.storeEvent('s', note(1)))).toBe('unknown')
    expect(store.state('s.1')).toBe('unknown')
    expect(store.state(`${id}0`)).toBe('unknown')
    expect(store.refusal('nope')).toMatch(/not an event of this session/)
    store.clear()
    expect(store.state(id)).toBe('evicted')
    await store.storeEvent('s', note(2))
    expect(store.size).toEqual({ events: 0, bytes: 0 })
  })

  it('has documented defaults and refuses unusable limits', () => {
    expect(new BoundedEventStore().limits).toEqual({ maxEvents: 1000, maxBytes: 8 * 1024 * 1024, ttlMs: 300_000 })
    expect(DEFAULT_EVENT_STORE_LIMITS.maxEvents).toBe(1000)
    expect(() => new BoundedEventStore({ maxEvents: 0 })).toThrow(ConfigError)
    expect(() => new BoundedEventStore({ maxBytes: 1.5 })).toThrow(/limits\.maxBytes/)
  })
})
