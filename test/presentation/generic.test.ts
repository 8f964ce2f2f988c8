import { describe, expect, it } from 'vitest'
import { isJsonValue } from '../../src/json/index.js'
import { genericCallView, genericResultView } from '../../src/presentation/index.js'

describe('R-VIEW generic fallback cards (issue 7: genericCallView)', () => {
  it('titles the card with the tool name and carries JSON args as rawInput', () => {
    expect(genericCallView('my_tool', { a: [1, 'x', null] })).toEqual({
      card: 'generic',
      title: 'my_tool',
      rawInput: { a: [1, 'x', null] },
    })
    expect(genericCallView('t', {}, 'search')).toEqual({ card: 'generic', title: 't', kind: 'search', rawInput: {} })
  })

  it('drops arguments that are not lossless JSON instead of throwing', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const getter = Object.defineProperty({}, 'x', { get: () => 1, enumerable: true })
    const sparse: unknown[] = [1]
    sparse[2] = 3
    for (const bad of [cyclic, getter, { f: () => 1 }, { n: Number.NaN }, new Date(0), sparse, -0]) {
      expect(genericCallView('t', bad)).toEqual({ card: 'generic', title: 't' })
    }
  })

  it('checks a 100,000-level-deep value without overflowing the stack', () => {
    let deep: unknown = 0
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(isJsonValue(deep)).toBe(true)
    const shared = { x: 1 }
    expect(isJsonValue([shared, shared])).toBe(true)
  })

  it('genericResultView keeps well-formed content blocks and drops the rest', () => {
    const result = {
      isError: true,
      content: [
        { type: 'text', text: 'boom' },
        { type: 'text', text: 5 },
        'junk',
        { type: 'image', mediaType: 'image/png', data: 'AA==' },
      ],
    }
    expect(genericResultView(result, 'x failed')).toEqual({
      card: 'generic',
      title: 'x failed',
      content: [
        { type: 'text', text: 'boom' },
        { type: 'image', mediaType: 'image/png', data: 'AA==' },
      ],
    })
    expect(genericResultView(null)).toEqual({ card: 'generic', content: [] })
  })

  it('genericResultView keeps every well-formed kind with annotations and _meta, and copies it (issue 23)', () => {
    const good = [
      { type: 'audio', mediaType: 'audio/wav', data: 'AA==', annotations: { priority: 1 }, _meta: { k: [1] } },
      { type: 'resource-link', uri: 'u', name: 'n', icons: [{ src: 's' }] },
      { type: 'resource', resource: { uri: 'u', blob: 'AA==' }, annotations: { audience: ['user'] } },
      { type: 'resource', resource: { uri: 'u', text: 't', mediaType: 'text/plain' } },
    ]
    const bad = [
      { type: 'audio', mediaType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'u', text: 't', blob: 'AA==' } },
      { type: 'text', text: 't', annotations: { priority: 9 } },
      { type: 'resource_link', uri: 'u', name: 'n' },
    ]
    const view = genericResultView({ content: [...bad.slice(0, 2), ...good, ...bad.slice(2)] })
    expect(view.content).toEqual(good)
    expect(view.content?.[0]).not.toBe(good[0])
  })
})
