// Turning names, descriptions and requests into index terms: word splitting, stop words, the
// Porter stemmer and the query-side synonym table.
import { stemmer as porterStem } from 'stemmer'
import { synonymsOf } from './thesaurus.js'

// Character classes of ASCII codes: 0 separator, 1 lower-case letter, 2 upper-case letter, 3 digit.
const ASCII_CLASS = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  if (c >= 97 && c <= 122) ASCII_CLASS[c] = 1
  else if (c >= 65 && c <= 90) ASCII_CLASS[c] = 2
  else if (c >= 48 && c <= 57) ASCII_CLASS[c] = 3
}
const LOWER = 1
const UPPER = 2
const DIGIT = 3
const NON_ASCII = /[\u0080-\uffff]/

/** Words of a name or text: snake, kebab, dotted and camelCase names split, lower-cased. */
export function splitWords(text: string): string[] {
  const words: string[] = []
  scanWords(text, (source, start, end, upper) => {
    const word = source.slice(start, end)
    words.push(upper ? word.toLowerCase() : word)
  })
  return words
}

/**
 * The words of `text` as `splitWords` finds them, without making strings: `visit` gets each as a
 * range of `source` (the text itself, or for non-ASCII text an already lower-cased word) and whether
 * it holds an ASCII capital still to be lower-cased.
 */
export function scanWords(
  text: string,
  visit: (source: string, start: number, end: number, upper: boolean) => void,
): void {
  // One pass over the characters for ASCII text (nearly every name and description); the regular
  // expressions of `splitWordsUnicode` give the same words for the rest of Unicode, at several
  // times the cost.
  if (NON_ASCII.test(text)) {
    for (const word of splitWordsUnicode(text)) visit(word, 0, word.length, false)
    return
  }
  const length = text.length
  let start = -1
  let upper = false
  for (let i = 0; i < length; i++) {
    const kind = ASCII_CLASS[text.charCodeAt(i)]
    if (kind === 0) {
      if (start >= 0) {
        visit(text, start, i, upper)
        start = -1
      }
    } else if (start < 0) {
      start = i
      upper = kind === UPPER
    } else if (kind === UPPER) {
      // A word starts at an upper-case letter after a lower-case letter or digit ("listFiles",
      // "v2Beta"), and at the last capital of a run followed by a lower-case letter ("HTMLParser").
      const previous = ASCII_CLASS[text.charCodeAt(i - 1)]
      if (
        previous === LOWER ||
        previous === DIGIT ||
        (previous === UPPER && i + 1 < length && ASCII_CLASS[text.charCodeAt(i + 1)] === LOWER)
      ) {
        visit(text, start, i, upper)
        start = i
      }
      upper = true
    }
  }
  if (start >= 0) visit(text, start, length, upper)
}

/** `splitWords` for any text, by Unicode letter and number classes. */
export function splitWordsUnicode(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)
}

// Words that carry no meaning in a request for a tool; dropping them keeps long requests from
// matching every description through "the" and "a".
const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from how i in into is it its me my of on or please some that the their them then this to us use using want we what when which with without you your'.split(
    ' ',
  ),
)

/**
 * The Porter stem of a lower-cased word ("files", "listing" and "created" meet "file", "list" and
 * "create"); words with digits are kept as they are, since they are names and versions.
 */
export function stem(word: string): string {
  if (word.length <= 2 || /\d/.test(word)) return word
  return porterStem(word)
}

// Words repeat across tools far more than they vary, so each word's term is worked out once. The
// cache is dropped whole when it grows past a bound, which only costs the work again.
const TERM_CACHE_LIMIT = 50_000
const termCache = new Map<string, string | null>()

/** The index term of a lower-cased word, or null for a stop word. */
export function termOf(word: string): string | null {
  let term = termCache.get(word)
  if (term === undefined) {
    term = STOP_WORDS.has(word) ? null : stem(word)
    if (termCache.size >= TERM_CACHE_LIMIT) termCache.clear()
    termCache.set(word, term)
  }
  return term
}

// Words people use for what tool descriptions name otherwise. Applied to the query only, each
// adding the words it stands for, so a request in everyday words meets the tools' vocabulary.
const SYNONYMS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    folder: 'directory',
    folders: 'directories',
    dir: 'directory',
    mkdir: 'create directory',
    ls: 'list directory',
    mv: 'move rename',
    rm: 'delete remove',
    cp: 'copy',
    cat: 'read file contents',
    pr: 'pull request',
    prs: 'pull requests',
    ci: 'status checks',
    approve: 'review',
    approved: 'reviews',
    bug: 'issue',
    ticket: 'issue',
    sql: 'query database',
    table: 'sql query',
    rows: 'sql query',
    database: 'sql query',
    db: 'sql query database',
    png: 'image media',
    jpg: 'image media',
    picture: 'image',
    photo: 'image media',
    audio: 'media',
    remember: 'entity observation memory',
    forget: 'delete',
    memory: 'knowledge graph',
    fact: 'observation',
    facts: 'observations',
    repo: 'repository',
    repos: 'repositories',
    biggest: 'sizes',
    size: 'sizes',
    contents: 'read',
    show: 'get read list',
    open: 'read',
  }).map(([word, meaning]) => [word, meaning.split(' ')]),
)

// How much a word that shares a meaning with a request's word counts, against the word itself.
const THESAURUS_WEIGHT = 0.3
const THESAURUS_COVER = 0.3

/** One term of a query: how much it counts, and the request word it stands for (its group). */
export interface QueryTerm {
  readonly term: string
  weight: number
  /** Terms of one group count as one matched word of the request. */
  readonly group: number
  /** Whether longer index terms it begins also match it. */
  readonly prefix: boolean
  /** How much matching it counts towards the request words a tool matched (the word itself 1). */
  readonly cover: number
  /** The request's word it came from, and how. */
  readonly word: string
  readonly how: 'word' | 'synonym' | 'thesaurus'
}

/**
 * The query's terms: each word (a repeated one counts that many times, as a longer query would
 * weigh it), the words the everyday-word table says it stands for, and, weighed down, the words a
 * general thesaurus gives for it (in the same group as the word).
 */
export function queryTerms(query: string): QueryTerm[] {
  const terms = new Map<string, QueryTerm>()
  let groups = 0
  const count = (word: string, weight: number, group: number | undefined, from: string, how: QueryTerm['how']) => {
    const term = termOf(word)
    if (term === null) return
    const known = terms.get(term)
    if (known !== undefined) {
      // A word met again counts again; a thesaurus word that is also a request word adds nothing.
      if (group === undefined) known.weight += weight
      return
    }
    const thesaurus = how === 'thesaurus'
    terms.set(term, {
      term,
      weight,
      group: group ?? groups++,
      prefix: !thesaurus,
      cover: thesaurus ? THESAURUS_COVER : 1,
      word: from,
      how,
    })
  }
  const words = splitWords(query)
  for (const word of words) {
    count(word, 1, undefined, word, 'word')
    const meaning = SYNONYMS.get(word)
    if (meaning !== undefined) for (const other of meaning) count(other, 1, undefined, word, 'synonym')
  }
  for (const word of words) {
    const own = termOf(word)
    if (own === null) continue
    const group = terms.get(own)?.group
    for (const other of synonymsOf(word)) count(other, THESAURUS_WEIGHT, group, word, 'thesaurus')
  }
  return [...terms.values()]
}
