// Issue 41 (item 1): the tool-search test set is frozen. Its digest is the one the bench checks, so a
// changed request fails CI rather than flatter the figure, and every request names tools that exist
// in the recorded catalogs.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { catalog, TEST_SET_SHA256, testSet } from '../../bench/tool-search-eval.bench.js'

describe('the frozen tool-search test set', () => {
  it('has the digest the bench checks', () => {
    const bytes = readFileSync(new URL('../../bench/fixtures/tool-search-test.json', import.meta.url))
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(TEST_SET_SHA256)
  })

  it('has easy, hard and competing requests, each naming recorded tools', () => {
    const requests = testSet()
    const names = new Set(catalog.map((definition) => definition.name))
    expect(new Set(requests.map((request) => request.kind))).toEqual(new Set(['easy', 'hard', 'competing']))
    for (const request of requests) for (const tool of request.tools) expect(names.has(tool), tool).toBe(true)
    expect(requests.length).toBe(164)
  })
})
