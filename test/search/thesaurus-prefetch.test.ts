// Issue 41 (Targets: the default ranker's speed) and issue 35 (cold start): the idle build reads the
// thesaurus' index files (6 MB) off the main thread, so opening them in idle slices does not hold
// the event loop for a read; a search that cannot wait still reads them itself.
import type * as fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

const readFileSync = vi.hoisted(() => ({ calls: [] as string[] }))
vi.mock('node:fs', async (original) => {
  const actual = await original<typeof fs>()
  return {
    ...actual,
    readFileSync: (...args: Parameters<typeof fs.readFileSync>) => {
      readFileSync.calls.push(String(args[0]))
      return actual.readFileSync(...args)
    },
  }
})

type Thesaurus = typeof import('../../src/search/thesaurus.js')
let thesaurus: Thesaurus
beforeEach(async () => {
  vi.resetModules()
  readFileSync.calls = []
  thesaurus = await import('../../src/search/thesaurus.js')
})
afterEach(() => thesaurus.closeThesaurus())

const indexReads = () => readFileSync.calls.filter((file) => /index\.(verb|noun|adj|adv)$/.test(file))

describe('the thesaurus read ahead', () => {
  it('opens from the files read ahead: no index file is read on the main thread, and synonyms are found', async () => {
    await thesaurus.prefetchThesaurus()
    while (!thesaurus.openThesaurusStep());
    expect(indexReads()).toEqual([])
    expect(thesaurus.synonymsOf('delete')).toContain('erase')
  })

  it('without the read ahead, each index file is read on the main thread as the steps open it', () => {
    while (!thesaurus.openThesaurusStep());
    expect(indexReads()).toHaveLength(4)
    expect(thesaurus.synonymsOf('delete')).toContain('erase')
  })

  it('a search that opens it while the read ahead is under way reads it itself, once, and loses nothing', async () => {
    const ahead = thesaurus.prefetchThesaurus()
    expect(thesaurus.synonymsOf('delete')).toContain('erase')
    expect(indexReads()).toHaveLength(4)
    await ahead
    // Opened already: what the read ahead brought is not kept, and nothing is read again.
    while (!thesaurus.openThesaurusStep());
    expect(indexReads()).toHaveLength(4)
    expect(thesaurus.synonymsOf('remove')).not.toEqual([])
  })
})
