import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  cloneJsonValue,
  deepFreezeJsonValue,
  findJsonIssue,
  isFrozenSnapshot,
  isJsonValue,
  JsonValueError,
  snapshotJsonValue,
} from '../../src/json/index.js'

function errorOf(fn: () => unknown): JsonValueError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(JsonValueError)
    return error as JsonValueError
  }
  throw new Error('expected a JsonValueError')
}

function deepArray(depth: number, leaf: unknown = 0): unknown {
  let value: unknown = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe('R-JSON-1 lossless JSON values: what is and is not JSON', () => {
  it('accepts every JSON shape, including null-prototype objects', () => {
    const bare = Object.create(null) as Record<string, unknown>
    bare.k = [1, 'two', true, null, { nested: [] }]
    for (const value of [
      null,
      true,
      false,
      0,
      1.5,
      -3,
      '',
      'x',
      [],
      {},
      [[[]]],
      { a: { b: [1, { c: null }] } },
      bare,
    ]) {
      expect(isJsonValue(value)).toBe(true)
      expect(findJsonIssue(value)).toBeUndefined()
    }
  })

  const rejected: [string, () => unknown, string, RegExp][] = [
    [
      'undefined member',
      () => ({ items: [0, 1, 2, { when: undefined }] }),
      'value.items[3].when',
      /is undefined, which is not JSON/,
    ],
    ['NaN', () => ({ n: Number.NaN }), 'value.n', /is NaN/],
    ['Infinity', () => [Number.POSITIVE_INFINITY], 'value[0]', /is Infinity/],
    ['-Infinity', () => ({ x: Number.NEGATIVE_INFINITY }), 'value.x', /is -Infinity/],
    ['-0', () => ({ zero: -0 }), 'value.zero', /-0/],
    ['function', () => ({ 'odd key': () => 1 }), 'value["odd key"]', /function/],
    ['symbol value', () => ({ s: Symbol('s') }), 'value.s', /symbol/],
    ['bigint', () => ({ b: 1n }), 'value.b', /bigint/],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    ['sparse array', () => ({ a: [1, , 3] }), 'value.a[1]', /hole/],
    [
      'array with extra key',
      () => ({ a: Object.assign([1, 2], { extra: true }) }),
      'value.a',
      /extra property "extra"/,
    ],
    ['array with a symbol key', () => Object.assign([1], { [Symbol('t')]: 1 }), 'value', /extra property Symbol\(t\)/],
    ['symbol key', () => ({ o: { [Symbol('k')]: 1 } }), 'value.o', /symbol key Symbol\(k\)/],
    [
      'non-enumerable property',
      () => Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }),
      'value.hidden',
      /non-enumerable/,
    ],
    ['Date', () => ({ d: new Date(0) }), 'value.d', /a Date/],
    ['Map', () => ({ m: new Map() }), 'value.m', /a Map/],
    ['class instance', () => ({ c: new (class Point {})() }), 'value.c', /a Point/],
    ['boxed primitive', () => [new String('s')], 'value[0]', /a String/],
    ['typed array', () => ({ t: new Uint8Array(2) }), 'value.t', /a Uint8Array/],
    ['array subclass', () => ({ a: new (class Sub extends Array {})() }), 'value.a', /foreign prototype/],
    ['proxy', () => ({ p: new Proxy({}, {}) }), 'value.p', /Proxy/],
  ]
  for (const [label, make, path, reason] of rejected) {
    it(`rejects ${label} at ${path}`, () => {
      const value = make()
      expect(isJsonValue(value)).toBe(false)
      expect(findJsonIssue(value)).toMatchObject({ path })
      const error = errorOf(() => snapshotJsonValue(value))
      expect(error.name).toBe('JsonValueError')
      expect(error.code).toBe('INVALID_JSON_VALUE')
      expect(error.path).toBe(path)
      expect(error.message).toContain(path)
      expect(error.message).toMatch(reason)
    })
  }

  it('rejects top-level non-JSON primitives with the root path', () => {
    expect(errorOf(() => snapshotJsonValue(undefined)).message).toBe('value is undefined, which is not JSON')
    expect(errorOf(() => snapshotJsonValue(Number.NaN, 'args')).path).toBe('args')
    expect(isJsonValue(-0)).toBe(false)
  })

  it('rejects cycles, naming the ancestor', () => {
    const cyclic: Record<string, unknown> = { a: { b: {} } }
    ;(cyclic.a as { b: Record<string, unknown> }).b.back = cyclic.a
    const error = errorOf(() => snapshotJsonValue(cyclic))
    expect(error.path).toBe('value.a.b.back')
    expect(error.message).toContain('cycle back to value.a')
    const self: unknown[] = []
    self.push(self)
    expect(findJsonIssue(self)).toMatchObject({ path: 'value[0]' })
  })

  it('detects a cycle deeper than the ancestor-scan limit', () => {
    const root: Record<string, unknown> = {}
    let node = root
    for (let i = 0; i < 200; i++) {
      const next: Record<string, unknown> = {}
      node.n = next
      node = next
    }
    node.n = root
    expect(findJsonIssue(root)?.reason).toContain('cycle back to value,')
  })

  it('accepts shared non-cyclic references and copies them', () => {
    const shared = { x: [1, 2] }
    const value = { a: shared, b: shared, list: [shared, shared] }
    expect(isJsonValue(value)).toBe(true)
    const snap = snapshotJsonValue(value) as { a: { x: number[] }; b: { x: number[] } }
    expect(snap).toEqual(value)
    expect(snap.a).not.toBe(shared)
  })

  it('stays linear on a wide shared-reference DAG (2^40 paths)', () => {
    let node: unknown = { leaf: true }
    for (let i = 0; i < 40; i++) node = { l: node, r: node }
    // Without memoising finished containers this would visit 2^41 objects.
    const value = { dag: node }
    expect(isJsonValue(value)).toBe(true)
    expect(snapshotJsonValue(value)).toBeTypeOf('object')
  })
})

describe('R-JSON-2 one snapshot step: detached, never runs user code', () => {
  it('never invokes a getter (counted) and rejects the accessor', () => {
    let calls = 0
    const value = {
      ok: 1,
      get secret() {
        calls++
        return 2
      },
    }
    expect(errorOf(() => snapshotJsonValue(value)).message).toMatch(/value\.secret is an accessor property/)
    expect(isJsonValue(value)).toBe(false)
    expect(calls).toBe(0)
  })

  it('never invokes a getter on an array index, nor a setter-only accessor', () => {
    let calls = 0
    const arr = [1, 2]
    Object.defineProperty(arr, 1, {
      get() {
        calls++
        return 3
      },
      enumerable: true,
    })
    expect(findJsonIssue(arr)).toMatchObject({ path: 'value[1]', reason: expect.stringMatching(/accessor/) })
    const setterOnly = [0]
    Object.defineProperty(setterOnly, 0, {
      set() {
        calls++
      },
      enumerable: true,
    })
    expect(findJsonIssue(setterOnly)).toMatchObject({ path: 'value[0]', reason: expect.stringMatching(/accessor/) })
    expect(calls).toBe(0)
  })

  it('never runs a proxy trap', () => {
    let traps = 0
    const handler = new Proxy(
      {},
      {
        get() {
          traps++
          return undefined
        },
      },
    )
    const proxy = new Proxy({ a: 1 }, handler)
    expect(errorOf(() => snapshotJsonValue({ list: [proxy] })).path).toBe('value.list[0]')
    expect(isJsonValue(new Proxy([], handler))).toBe(false)
    expect(traps).toBe(0)
  })

  it('never calls toJSON', () => {
    let calls = 0
    const value = {
      toJSON() {
        calls++
        return 'replaced'
      },
    }
    expect(() => snapshotJsonValue(value)).toThrow(JsonValueError)
    expect(calls).toBe(0)
    // A toJSON that is plain data is just a key.
    expect(snapshotJsonValue({ toJSON: 'x' })).toEqual({ toJSON: 'x' })
  })

  it('makes a detached copy: later mutation of the input does not show', () => {
    const input = { list: [{ n: 1 }], s: 'x' }
    const snap = snapshotJsonValue(input) as typeof input
    input.list[0].n = 2
    input.list.push({ n: 3 })
    expect(snap).toEqual({ list: [{ n: 1 }], s: 'x' })
  })

  it('uses the given root path', () => {
    expect(errorOf(() => snapshotJsonValue({ a: undefined }, 'args')).path).toBe('args.a')
  })

  it('agrees with JSON.parse(JSON.stringify(v)) on JSON values (-0 filtered: JSON turns it into 0)', () => {
    const noNegativeZero = fc
      .jsonValue()
      .filter((v) => !JSON.stringify(v, (_k, x) => (Object.is(x, -0) ? '\u0000' : x)).includes('\\u0000'))
    fc.assert(
      fc.property(noNegativeZero, (value) => {
        expect(snapshotJsonValue(value)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(isJsonValue(value)).toBe(true)
      }),
    )
  })

  it('cloneJsonValue returns a mutable detached copy, even of a snapshot', () => {
    const snap = snapshotJsonValue({ a: [1] }) as { a: number[] }
    const clone = cloneJsonValue(snap) as { a: number[] }
    expect(clone).toEqual(snap)
    expect(clone).not.toBe(snap)
    expect(Object.isFrozen(clone)).toBe(false)
    clone.a.push(2)
    expect(snap.a).toEqual([1])
  })
})

describe('R-JSON-3 __proto__, constructor, prototype are ordinary data keys', () => {
  it('preserves them as own keys without polluting any prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}, "prototype": 2}')
    const snap = snapshotJsonValue(parsed) as Record<string, unknown>
    expect(Object.keys(snap)).toEqual(['__proto__', 'constructor', 'prototype'])
    expect(Object.getPrototypeOf(snap)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(snap, '__proto__')?.value).toEqual({ polluted: true })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(snap.constructor).toEqual({ prototype: 1 })
    expect(JSON.stringify(snap)).toBe(JSON.stringify(parsed))
  })

  it('keeps a null prototype null and Object.prototype otherwise', () => {
    const bare = Object.create(null) as Record<string, unknown>
    Object.defineProperty(bare, '__proto__', { value: 1, enumerable: true, writable: true, configurable: true })
    const snap = snapshotJsonValue({ bare }) as { bare: object }
    expect(Object.getPrototypeOf(snap.bare)).toBeNull()
    expect(Object.getOwnPropertyDescriptor(snap.bare, '__proto__')?.value).toBe(1)
    expect(Object.getPrototypeOf(snap)).toBe(Object.prototype)
  })
})

describe('R-JSON-4 deep freezing', () => {
  it('snapshots are deep-frozen', () => {
    const snap = snapshotJsonValue({ a: [{ b: 1 }], c: {} }) as { a: { b: number }[]; c: object }
    expect(Object.isFrozen(snap)).toBe(true)
    expect(Object.isFrozen(snap.a)).toBe(true)
    expect(Object.isFrozen(snap.a[0])).toBe(true)
    expect(Object.isFrozen(snap.c)).toBe(true)
    expect(() => {
      snap.a[0].b = 2
    }).toThrow(TypeError)
  })

  it('a snapshot is returned as-is and embedded snapshots are reused', () => {
    const snap = snapshotJsonValue({ big: [1, 2, 3] })
    expect(isFrozenSnapshot(snap)).toBe(true)
    expect(snapshotJsonValue(snap)).toBe(snap)
    const outer = snapshotJsonValue({ inner: snap }) as { inner: unknown }
    expect(outer.inner).toBe(snap)
    expect(isFrozenSnapshot({ big: [1, 2, 3] })).toBe(false)
  })

  it('a merely frozen object is not trusted as a snapshot', () => {
    const frozen = Object.freeze({ a: undefined })
    expect(() => snapshotJsonValue(frozen)).toThrow(JsonValueError)
  })

  it('deepFreezeJsonValue freezes in place', () => {
    const value = { a: [{ b: [1] }] }
    expect(deepFreezeJsonValue(value)).toBe(value)
    expect(Object.isFrozen(value.a[0].b)).toBe(true)
  })
})

describe('R-JSON-5 explicit work stack: 100,000 levels deep', () => {
  it('snapshots, checks and clones a 100,000-deep array', () => {
    const value = deepArray(100_000, 'leaf')
    expect(isJsonValue(value)).toBe(true)
    const snap = snapshotJsonValue(value)
    let node: unknown = snap
    let depth = 0
    let unfrozen = 0
    while (Array.isArray(node)) {
      if (!Object.isFrozen(node)) unfrozen++
      node = node[0]
      depth++
    }
    expect(depth).toBe(100_000)
    expect(unfrozen).toBe(0)
    expect(node).toBe('leaf')
    expect(cloneJsonValue(value)).toBeTypeOf('object')
    expect(deepFreezeJsonValue(cloneJsonValue(value))).toBeTypeOf('object')
  })

  it('reports the full path of a problem 100,000 levels deep', () => {
    let value: unknown = { bad: undefined }
    for (let i = 0; i < 100_000; i++) value = { n: value }
    const error = errorOf(() => snapshotJsonValue(value))
    expect(error.path.endsWith('.n.n.bad')).toBe(true)
    expect(error.path.length).toBe('value'.length + 2 * 100_000 + '.bad'.length)
  })
})
