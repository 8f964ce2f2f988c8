import { scanWords } from './words.js'

/** A word the table has seen, with what its owner keeps for it and a scratch mark. */
export interface WordEntry<T> {
  readonly word: string
  readonly value: T
  mark: number
}

// Lower-case of an ASCII code (other codes unchanged).
const lower = (code: number) => (code >= 65 && code <= 90 ? code + 32 : code)

/**
 * The distinct lower-cased words met in texts, each with a value made once (`create`). Indexing
 * looks up every word of every tool; finding it by a hash of the characters in place, instead of
 * slicing and lower-casing a string for a `Map` key, makes a string only for a word not seen before.
 */
export class WordTable<T> {
  private slots: Array<WordEntry<T> | undefined> = new Array(1024)
  private hashes = new Int32Array(1024)
  private count = 0

  constructor(private readonly create: (word: string) => T) {}

  /** How many distinct words the table holds. */
  get size(): number {
    return this.count
  }

  /** Forget every word. */
  clear(): void {
    this.slots = new Array(1024)
    this.hashes = new Int32Array(1024)
    this.count = 0
  }

  /** Call `visit` with the entry of each word of `text`, in order, as `splitWords` splits it. */
  scan(text: string, visit: (entry: WordEntry<T>) => void): void {
    scanWords(text, (source, start, end, upper) => visit(this.entry(source, start, end, upper)))
  }

  private entry(source: string, start: number, end: number, upper: boolean): WordEntry<T> {
    let hash = 0x811c9dc5
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ lower(source.charCodeAt(i)), 0x01000193)
    const mask = this.slots.length - 1
    const length = end - start
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const found = this.slots[slot]
      if (found === undefined) break
      if (this.hashes[slot] !== hash || found.word.length !== length) continue
      let same = true
      for (let i = 0; i < length && same; i++) same = found.word.charCodeAt(i) === lower(source.charCodeAt(start + i))
      if (same) return found
    }
    const slice = source.slice(start, end)
    const word = upper ? slice.toLowerCase() : slice
    const entry: WordEntry<T> = { word, value: this.create(word), mark: 0 }
    if ((this.count + 1) * 2 > this.slots.length) this.grow()
    this.place(entry, hash)
    this.count++
    return entry
  }

  private place(entry: WordEntry<T>, hash: number): void {
    const mask = this.slots.length - 1
    let slot = hash & mask
    while (this.slots[slot] !== undefined) slot = (slot + 1) & mask
    this.slots[slot] = entry
    this.hashes[slot] = hash
  }

  private grow(): void {
    const slots = this.slots
    const hashes = this.hashes
    this.slots = new Array(slots.length * 2)
    this.hashes = new Int32Array(slots.length * 2)
    for (let slot = 0; slot < slots.length; slot++) {
      const entry = slots[slot]
      if (entry !== undefined) this.place(entry, hashes[slot])
    }
  }
}
