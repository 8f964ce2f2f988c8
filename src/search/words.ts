// Turning names, descriptions and requests into index terms: word splitting, stop words, the
// Porter stemmer and the query-side synonym table.
import { stemmer as porterStem } from 'stemmer'

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

/**
 * The query's terms, each everyday word followed by the words it stands for, with how often each
 * term occurs (a repeated term counts that many times, as a longer query would weigh it).
 */
export function queryTerms(query: string): Map<string, number> {
  const terms = new Map<string, number>()
  const count = (word: string) => {
    const term = termOf(word)
    if (term !== null) terms.set(term, (terms.get(term) ?? 0) + 1)
  }
  for (const word of splitWords(query)) {
    count(word)
    const meaning = SYNONYMS.get(word)
    if (meaning !== undefined) for (const other of meaning) count(other)
  }
  return terms
}
