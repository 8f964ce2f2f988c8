// The canonical form a sealed state's HMAC covers (issue 22): key order and whitespace never change
// it, every JSON value keeps its meaning, and any depth can be sealed and checked.
import { describe, expect, it } from 'vitest'
import { canonicalJson, sealVerifies, stateSeal } from '../../src/providers/state-seal.js'

const KEY = Buffer.from('0123456789abcdef0123456789abcdef')

describe('canonicalJson and the state seal (issue 22)', () => {
  it('sorts keys at every level and otherwise writes what JSON.stringify writes', () => {
    const value = { b: [1, 'two', null, true, { z: 1, a: [] }], a: { y: 'é\n"', x: -0.5e-7 }, c: {} }
    expect(canonicalJson(value)).toBe('{"a":{"x":-5e-8,"y":"é\\n\\""},"b":[1,"two",null,true,{"a":[],"z":1}],"c":{}}')
    expect(JSON.parse(canonicalJson(value))).toEqual(value)
    expect(canonicalJson(JSON.parse(JSON.stringify(value, null, 2)))).toBe(canonicalJson(value))
    expect(canonicalJson([])).toBe('[]')
    expect(canonicalJson('x')).toBe('"x"')
  })

  it('seals and verifies a state nested 200,000 levels deep', () => {
    let deep: unknown = 'bottom'
    for (let i = 0; i < 200_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep }
    const state: Record<string, unknown> = { v: 1, deep }
    state.seal = stateSeal(state, KEY)
    expect(sealVerifies(state, KEY)).toBe(true)
    expect(sealVerifies({ ...state, v: 2 }, KEY)).toBe(false)
  })
})
