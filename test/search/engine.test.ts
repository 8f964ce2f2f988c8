// Issue 27 (quality and performance): the built-in index behind tools.search. Its own inverted
// lists replace minisearch; these tests pin what that must keep: the same words out of the fast
// tokenizer as out of the Unicode one, the same ranking after any sequence of adds and removes as
// after a fresh build, accept consulted before a tool takes a slot, prefix matching of long terms,
// and a synonym table that only knows its own words.
import { describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../src/index.js'
import { TextSearchEngine } from '../../src/search/index.js'
import { splitWords, splitWordsUnicode } from '../../src/search/words.js'
import { definition, queries, real } from './recorded-tools.js'

/** The real tools' definitions, copied under a prefix so one index can hold several sets. */
const copies = (prefix: string) =>
  real.map((tool) => definition(`${prefix}${tool.name}`, tool.description, tool.inputSchema))

const all = () => true
const ranked = (engine: TextSearchEngine, query: string, limit = 50) =>
  engine.search(query, all, limit).map(({ definition, score }) => ({ name: definition.name, score }))

describe('splitWords', () => {
  it('gives the same words as the Unicode regular expressions for every fixture text and random ASCII', () => {
    const texts: string[] = []
    for (const tool of real) {
      texts.push(tool.name, tool.description, JSON.stringify(tool.inputSchema))
    }
    // Random strings over the characters that decide word boundaries: both cases, digits, separators.
    let seed = 27
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const alphabet = 'aBcDxYzHTMLhtml09_-. /:Q'
    for (let i = 0; i < 5000; i++) {
      let text = ''
      const length = Math.floor(random() * 16)
      for (let j = 0; j < length; j++) text += alphabet[Math.floor(random() * alphabet.length)]
      texts.push(text)
    }
    texts.push('HTMLParser', 'getHTTPResponseCode', 'v2Beta', 'ABCdEFg', 'aBCd', 'x1Y2z', '', '___', 'A')
    for (const text of texts) expect(splitWords(text), JSON.stringify(text)).toEqual(splitWordsUnicode(text))
  })

  it('splits text with non-ASCII letters by Unicode classes', () => {
    expect(splitWords('ÉtatInitial_größe')).toEqual(['état', 'initial', 'größe'])
  })
})

describe('TextSearchEngine', () => {
  it('ranks the same, scores included, after adds and removes as a fresh index of the same tools', () => {
    const engine = new TextSearchEngine()
    const first = copies('a_')
    const second = copies('b_')
    const third = copies('c_')
    for (const tool of [...first, ...second]) engine.add(tool)
    expect(ranked(engine, 'list files in a directory').length).toBeGreaterThan(0) // builds the index
    // Remove every other tool of the first set and all of the second (enough for the lists of common
    // terms to be compacted), then add a third set and re-add a removed tool.
    const removed = [...first.filter((_, i) => i % 2 === 0), ...second]
    for (const tool of removed) engine.remove(tool)
    for (const tool of third) engine.add(tool)
    engine.add(second[3])
    const kept = [...first.filter((_, i) => i % 2 === 1), ...third, second[3]]
    expect(engine.size).toBe(kept.length)

    const gone = new Set(removed.filter((tool) => tool !== second[3]).map((tool) => tool.name))
    const fresh = new TextSearchEngine()
    for (const tool of kept) fresh.add(tool)
    for (const query of queries) {
      const got = ranked(engine, query)
      const want = ranked(fresh, query)
      expect(
        got.map((match) => match.name),
        query,
      ).toEqual(want.map((match) => match.name))
      for (const [i, match] of got.entries()) expect(match.score, query).toBeCloseTo(want[i].score, 9)
      for (const match of got) expect(gone.has(match.name), match.name).toBe(false)
    }
  })

  it('asks accept before a tool takes a slot: a rejected best match leaves room for the next', () => {
    const engine = new TextSearchEngine()
    const best = definition('zebra_zebra', 'Zebra zebra zebra.')
    const next = definition('zebra_info', 'Something about one zebra.')
    const other = definition('giraffe', 'Giraffes only.')
    for (const tool of [best, next, other]) engine.add(tool)
    expect(engine.search('zebra', all, 1).map((m) => m.definition)).toEqual([best])
    const asked: string[] = []
    const accept = (tool: ToolDefinition) => {
      asked.push(tool.name)
      return tool !== best
    }
    expect(engine.search('zebra', accept, 1).map((m) => m.definition)).toEqual([next])
    expect(asked).not.toContain('giraffe')
    expect(engine.search('zebra', () => false, 5)).toEqual([])
  })

  it('the best `limit` accepted tools are the head of the whole accepted ranking, for any limit', () => {
    // Two copies of every tool: each has a twin of exactly its score, so ties fall on the cut.
    const engine = new TextSearchEngine()
    for (const tool of [...copies('a_'), ...copies('b_')]) engine.add(tool)
    const rejected = (name: string) => name.length % 3 === 0
    const accept = (tool: ToolDefinition) => !rejected(tool.name)
    for (const query of queries.slice(0, 40)) {
      // With a limit above the number of tools nothing is ever evicted from the kept list.
      const whole = ranked(engine, query, 1000).filter((match) => !rejected(match.name))
      for (const limit of [1, 2, 5, 13]) {
        const head = engine
          .search(query, accept, limit)
          .map(({ definition, score }) => ({ name: definition.name, score }))
        expect(head, `${query} (limit ${limit})`).toEqual(whole.slice(0, limit))
      }
    }
  })

  it('matches terms of five or more letters as prefixes of longer terms, shorter ones only whole', () => {
    const engine = new TextSearchEngine()
    engine.add(definition('list_directory', 'List a directory.'))
    expect(ranked(engine, 'direc').map((m) => m.name)).toEqual(['list_directory'])
    expect(ranked(engine, 'dire')).toEqual([])
    // The whole word outranks its prefix.
    expect(ranked(engine, 'directory')[0].score).toBeGreaterThan(ranked(engine, 'direc')[0].score)
  })

  it('expands only the words of its synonym table, never an inherited property name', () => {
    const engine = new TextSearchEngine()
    engine.add(definition('inspect', 'Return the native code of a function object.'))
    engine.add(definition('make_folder', 'Create a new directory.'))
    expect(ranked(engine, 'constructor')).toEqual([])
    expect(ranked(engine, 'new folder').map((m) => m.name)).toEqual(['make_folder'])
  })

  it('a throwing serverOf leaves the index as it was, built or not', () => {
    let failing = true
    const engine = new TextSearchEngine({
      serverOf: (tool) => {
        if (failing && tool.name === 'bad') throw new Error('no server')
        return tool.name === 'bad' ? 'broken' : 'fs'
      },
    })
    engine.add(definition('read_file', 'Read a file.'))
    const bad = definition('bad', 'Read files badly.')
    engine.add(bad)
    expect(() => engine.search('read', all, 5)).toThrow('no server')
    failing = false
    expect(ranked(engine, 'read').map((m) => m.name)).toEqual(['read_file', 'bad'])
    engine.remove(bad)
    failing = true
    expect(() => engine.add(bad)).toThrow('no server')
    expect(engine.size).toBe(1)
    expect(ranked(engine, 'read').map((m) => m.name)).toEqual(['read_file'])
    failing = false
    engine.add(bad)
    expect(ranked(engine, 'broken').map((m) => m.name)).toEqual(['bad'])
  })

  it('an empty query, a query of stop words only or an empty index rank nothing', () => {
    const engine = new TextSearchEngine()
    expect(ranked(engine, 'files')).toEqual([])
    engine.add(definition('read_file', 'Read a file.'))
    expect(ranked(engine, '')).toEqual([])
    expect(ranked(engine, 'the of and')).toEqual([])
    expect(ranked(engine, 'files').map((m) => m.name)).toEqual(['read_file'])
  })
})
