import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { isRecord } from '../util/is-record.js'
import type { PrepareOptions } from './engine.js'
import type { ToolSearchDocument } from './ranker-engine.js'
import { splitWords } from './words.js'

interface MissingVector {
  readonly digest: string
  readonly text: string
}

/** A sentence encoder: one unit-length vector per text, computed off the calling turn. */
export interface SentenceEncoder {
  /** Names the model and its version: vectors of another model are never reused. */
  readonly id: string
  embed(texts: readonly string[]): Promise<ArrayLike<number>[]>
  /** Release what the encoder holds (worker threads): called when the ranker is closed. */
  close?(): Promise<void>
}

/**
 * An encoder not loaded yet, whose id is known without loading it: the ranker then reads its cache
 * file first and loads the model only for a text the cache lacks (a new tool or a request).
 */
export interface EncoderSource {
  /** The id the loaded encoder will have (`SentenceEncoder.id`). */
  readonly id: string
  load(): Promise<SentenceEncoder>
}

/**
 * A request as it is embedded and cached: Unicode NFKC (the encoder's tokenizer applies it anyway)
 * with whitespace trimmed and runs of it made one space, so a request differing only in spacing is
 * embedded once. Case is kept: the encoder's vocabulary tells cases apart.
 */
export function normalizeQuery(query: string): string {
  return query.normalize('NFKC').trim().replace(/\s+/g, ' ')
}

// Requests embedded once and reused (an agent repeats its requests); past this many, the least
// recently used is dropped (512 floats each: 2 MB in all).
const QUERY_CACHE_LIMIT = 1_000

// The description's first line says what a tool does; the rest (error lists, long parameter
// notes) dilutes one sentence vector and costs encoder time. 120 characters ranked as well as 300
// on both tuning sets (better MRR) for about a third less encoder time.
const DESCRIPTION_CHARS = 120

/** The text a tool is embedded from: its name split into words, then its description's first line. */
export function embeddingText(doc: ToolSearchDocument): string {
  const name = splitWords(doc.name.replace(/^.*?(__|\.|\/)/, '')).join(' ')
  const description = typeof doc.description === 'string' ? doc.description.split('\n')[0] : ''
  return `${name}: ${description.slice(0, DESCRIPTION_CHARS)}`
}

/**
 * Embedding side of the hybrid ranker. Tools are embedded in the background as they are added,
 * keyed by a digest of the model and the embedded text, and the vectors are kept in a cache file
 * so a restart with the same tools embeds nothing. Given an `EncoderSource` (its id known up front),
 * the cache file is read before any model is loaded, and the model is loaded only on the first text
 * the cache lacks: a restart whose tools are all cached loads no model until a new request arrives.
 * A query is embedded by `prepare` (asynchronous,
 * like the encoder); `rank` is synchronous and scores by cosine similarity, so a tool or query not
 * embedded yet simply has no semantic score and ranks on its text alone.
 */
export class EmbeddingRanker {
  private loading: Promise<SentenceEncoder> | undefined
  /** The encoder once loaded, so a request is handed to it in the calling turn. */
  private loaded: SentenceEncoder | undefined
  private readonly load: () => Promise<SentenceEncoder>
  /** The model's id: known from the source, or once a bare loader's encoder has loaded. */
  private modelId: string | undefined
  private cacheRead = false
  private readonly vectors = new Map<string, Float32Array>()
  private readonly queries = new Map<string, Float32Array>()
  private readonly digests = new Map<ToolSearchDocument, string>()
  private readonly waiting = new Map<ToolSearchDocument, string>()
  /** The pass that digests the waiting tools and takes their vectors from the cache: no encoder work. */
  private digesting: Promise<void> | undefined
  /** The encoder calls for tools the cache lacked, one after another. */
  private embedding: Promise<void> = Promise.resolve()
  /** Tools digested whose vectors the encoder has not given yet. */
  private unembedded = 0
  private dirty = false
  private failed = false
  private closed = false
  /** Bumped whenever a document's digest or a digest's vector changes. */
  private version = 0
  /** The vectors of the documents last ranked, in one matrix, while they and their vectors stay. */
  private rows: Rows | undefined

  /**
   * `report` is told, once, when the encoder cannot be loaded or fails: from then on the ranker
   * scores nothing and the fused search ranks on the full text alone (default: a process warning).
   */
  constructor(
    source: EncoderSource | (() => Promise<SentenceEncoder>),
    private readonly cacheFile?: string,
    private readonly report: (error: unknown) => void = warnEncoderFailed,
  ) {
    if (typeof source === 'function') this.load = source
    else {
      this.load = () => source.load()
      this.modelId = source.id
    }
  }

  /** Whether the encoder failed (to load or to embed): the ranker then scores nothing. */
  get unavailable(): boolean {
    return this.failed
  }

  /** Whether the model has been asked to load (it is loaded lazily, on the first uncached text). */
  get modelRequested(): boolean {
    return this.loading !== undefined
  }

  /**
   * Whether every tool added so far has its vector (from the cache file or the encoder). Until then
   * `rank` scores nothing, so a search is never fused over part of the tools.
   */
  get complete(): boolean {
    return this.waiting.size === 0 && this.unembedded === 0
  }

  /**
   * Whether `rank` gives this request its semantic scores now: every tool has its vector and the
   * request its own (a blank request needs none). False while the tools are being embedded, or for
   * a request not prepared; an encoder that failed or a closed ranker ranks on the full text for
   * good, so a search then is as complete as it will get (true).
   */
  ready(query: string): boolean {
    if (this.failed || this.closed) return true
    const key = normalizeQuery(query)
    return this.complete && (key === '' || this.queries.has(key))
  }

  /** Resolves once the tools added so far have their vectors (from the cache file or the encoder). */
  async indexed(): Promise<void> {
    for (;;) {
      await this.digesting
      const embedding = this.embedding
      await embedding
      if (this.digesting === undefined && this.embedding === embedding) return
    }
  }

  /** Schedule a tool's embedding (a cached vector is reused). */
  add(doc: ToolSearchDocument): void {
    this.waiting.set(doc, embeddingText(doc))
    // One pass after the tools added in the same turn (a start registers hundreds at once).
    this.digesting ??= Promise.resolve().then(() => this.digest())
  }

  remove(doc: ToolSearchDocument): void {
    this.waiting.delete(doc)
    this.digests.delete(doc)
    this.version++
  }

  /**
   * Embed the query, and wait for the tools added so far (all a blank query does). With
   * `allowPartial`, wait only for what costs no encoder work (the tools' digests and cached
   * vectors): while tools are still being embedded (a cold start) it returns at once without
   * embedding the query, and the search ranks on the full text alone (`ready` says so). Never
   * fails: an encoder that cannot be loaded or fails is reported once, and the search then ranks
   * on the full text alone.
   */
  prepare(query: string, options: PrepareOptions = {}): Promise<void> {
    // Every tool has its vector and the model is loaded (a warm process): the request goes to the
    // encoder now, before this returns, so the caller can do other work while it is embedded.
    const encoder = this.loaded
    if (encoder !== undefined && this.digesting === undefined && this.complete) {
      const key = normalizeQuery(query)
      if (key === '' || this.failed || this.closed || this.recall(key) !== undefined) return Promise.resolve()
      return this.embedQuery(key, embedNow(encoder, key))
    }
    return this.prepareLater(query, options)
  }

  private async prepareLater(query: string, options: PrepareOptions): Promise<void> {
    if (options.allowPartial === true) await this.digesting
    else await this.indexed()
    const key = normalizeQuery(query)
    // A blank request is never ranked (the search answers it with nothing): no model for it.
    if (key === '' || this.failed || this.closed || this.recall(key) !== undefined) return
    // Cold: the request waits for no tool; the search ranks on the full text for now.
    if (options.allowPartial === true && !this.complete) return
    await this.embedQuery(
      key,
      this.model().then((encoder) => encoder.embed([key])),
    )
  }

  /** Keep the request's vector once the encoder gives it (a failure is reported, never thrown). */
  private async embedQuery(key: string, embedded: Promise<ArrayLike<number>[]>): Promise<void> {
    try {
      const [vector] = await embedded
      if (vector === undefined) throw new Error('the sentence encoder returned no vector')
      if (this.queries.size >= QUERY_CACHE_LIMIT) this.queries.delete(this.queries.keys().next().value as string)
      this.queries.set(key, unit(vector))
    } catch (error) {
      this.fail(error)
    }
  }

  /**
   * Cosine similarity of each document to a prepared query (0 where either has no vector yet),
   * shifted to be positive: the fusion keeps only positive scores, and only the order counts.
   */
  readonly rank = (query: string, docs: readonly ToolSearchDocument[]): number[] => {
    const scores = new Array<number>(docs.length).fill(0)
    const q = this.failed || !this.complete ? undefined : this.recall(normalizeQuery(query))
    if (q === undefined) return scores
    const { matrix, at } = this.matrix(docs, q.length)
    // Two documents per pass over the request's vector (see dot2); an odd one out alone.
    let pending = -1
    for (let i = 0; i < docs.length; i++) {
      const row = at[i] as number
      if (row === NO_VECTOR) continue
      if (row === OTHER_LENGTH) {
        scores[i] = dot(q, this.vectorOf(docs[i] as ToolSearchDocument) as Float32Array) + 1
        continue
      }
      if (pending < 0) {
        pending = i
        continue
      }
      dot2(q, matrix, (at[pending] as number) * q.length, row * q.length, scores, pending, i)
      pending = -1
    }
    if (pending >= 0) scores[pending] = dot(q, matrix, (at[pending] as number) * q.length) + 1
    return scores
  }

  private vectorOf(doc: ToolSearchDocument): Float32Array | undefined {
    const digest = this.digests.get(doc)
    return digest === undefined ? undefined : this.vectors.get(digest)
  }

  /**
   * The documents' vectors as rows of one matrix, and each document's row: a search reads them
   * in order from one block of memory (a third less time than 1,000 separate vectors, measured)
   * and looks up no digest. Rebuilt when the documents or any vector changed since the last search.
   */
  private matrix(docs: readonly ToolSearchDocument[], width: number): Rows {
    const last = this.rows
    if (
      last !== undefined &&
      last.version === this.version &&
      last.width === width &&
      last.docs.length === docs.length &&
      last.docs.every((doc, i) => doc === docs[i])
    )
      return last
    const at = new Int32Array(docs.length)
    const vectors: Float32Array[] = []
    docs.forEach((doc, i) => {
      const v = this.vectorOf(doc)
      if (v === undefined) at[i] = NO_VECTOR
      else if (v.length !== width) at[i] = OTHER_LENGTH
      else at[i] = vectors.push(v) - 1
    })
    const matrix = new Float32Array(vectors.length * width)
    vectors.forEach((v, row) => {
      matrix.set(v, row * width)
    })
    this.rows = { docs: [...docs], version: this.version, width, matrix, at }
    return this.rows
  }

  /**
   * Stop embedding and release the encoder (its worker threads), once it has loaded if it is still
   * loading. Searches afterwards rank on the full text alone; nothing is reported.
   */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.waiting.clear()
    const encoder = await this.loading?.catch(() => undefined)
    await encoder?.close?.()
  }

  /** A cached request's vector, marked as the most recently used. */
  private recall(key: string): Float32Array | undefined {
    const vector = this.queries.get(key)
    if (vector !== undefined) {
      this.queries.delete(key)
      this.queries.set(key, vector)
    }
    return vector
  }

  private model(): Promise<SentenceEncoder> {
    this.loading ??= this.load().then((encoder) => {
      if (this.modelId !== undefined && encoder.id !== this.modelId)
        throw new Error(`the sentence encoder loaded as ${encoder.id}, expected ${this.modelId}`)
      this.modelId = encoder.id
      this.readCache()
      this.loaded = encoder
      return encoder
    })
    return this.loading
  }

  /**
   * Digest the waiting tools and take what the cache file holds; queue the rest for the encoder.
   * Needs no model when the source announced the model's id (a bare loader's model names the
   * vectors, so it loads first).
   */
  private async digest(): Promise<void> {
    try {
      if (this.failed || this.closed) return
      const id = this.modelId ?? (await this.model()).id
      this.readCache()
      const batch = [...this.waiting]
      this.waiting.clear()
      const missing: MissingVector[] = []
      for (const [doc, text] of batch) {
        const digest = createHash('sha256').update(`${id}\n${text}`).digest('base64url')
        this.digests.set(doc, digest)
        this.version++
        if (!this.vectors.has(digest)) missing.push({ digest, text })
      }
      if (missing.length === 0) return
      this.unembedded += missing.length
      this.embedding = this.embedding.then(() => this.embedMissing(missing))
    } catch (error) {
      this.fail(error)
    } finally {
      // Tools added from here on go to the next pass (nothing above awaits after the batch is taken).
      this.digesting = undefined
    }
  }

  private async embedMissing(missing: readonly MissingVector[]): Promise<void> {
    try {
      // A turn first, so a request waiting on the digests is answered before the model's load,
      // which starts with a synchronous load of its modules (hundreds of ms on a busy machine).
      await new Promise((resolve) => setImmediate(resolve))
      if (this.failed || this.closed) return
      const encoder = await this.model()
      const embedded = await encoder.embed(missing.map((entry) => entry.text))
      missing.forEach((entry, i) => {
        this.vectors.set(entry.digest, unit(embedded[i]))
      })
      this.version++
      this.dirty = true
      this.writeCache()
    } catch (error) {
      this.fail(error)
    } finally {
      this.unembedded -= missing.length
    }
  }

  private fail(error: unknown): void {
    // A call cut short by `close` is no failure of the encoder.
    if (this.failed || this.closed) return
    this.failed = true
    this.waiting.clear()
    this.report(error)
  }

  /** Read the cache file, once, for the model's id (known by now). */
  private readCache(): void {
    const model = this.modelId
    if (this.cacheFile === undefined || this.cacheRead || model === undefined) return
    this.cacheRead = true
    let parsed: unknown
    try {
      parsed = JSON.parse(readFileSync(this.cacheFile, 'utf8'))
    } catch {
      // No cache yet, or an unreadable one: every tool is embedded again and the file rewritten.
      return
    }
    if (!isRecord<Record<string, unknown>>(parsed) || parsed.model !== model) return
    const vectors = parsed.vectors
    if (!isRecord<Record<string, unknown>>(vectors)) return
    for (const [digest, encoded] of Object.entries(vectors)) {
      if (typeof encoded !== 'string') continue
      const bytes = Buffer.from(encoded, 'base64')
      if (bytes.length % 4 !== 0) continue
      this.vectors.set(digest, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)))
    }
    this.version++
  }

  private writeCache(): void {
    if (this.cacheFile === undefined || !this.dirty || this.modelId === undefined) return
    const vectors: Record<string, string> = {}
    for (const [digest, vector] of this.vectors)
      vectors[digest] = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
    try {
      mkdirSync(path.dirname(this.cacheFile), { recursive: true })
      // Written whole to a temporary name and renamed, so a reader never sees half a file.
      const temporary = `${this.cacheFile}.${process.pid}.tmp`
      writeFileSync(temporary, JSON.stringify({ model: this.modelId, vectors }))
      renameSync(temporary, this.cacheFile)
      this.dirty = false
    } catch {
      // A cache that cannot be written costs the embedding again at the next start, nothing more.
    }
  }
}

/** `encoder.embed([text])`, with an encoder that throws rather than rejects made to reject. */
function embedNow(encoder: SentenceEncoder, text: string): Promise<ArrayLike<number>[]> {
  try {
    return encoder.embed([text])
  } catch (error) {
    return Promise.reject(error)
  }
}

/** `EmbeddingRanker`'s matrix of the documents last ranked. */
interface Rows {
  readonly docs: readonly ToolSearchDocument[]
  readonly version: number
  readonly width: number
  /** One row per document that has a vector of `width` floats, in the documents' order. */
  readonly matrix: Float32Array
  /** Each document's row, or NO_VECTOR, or OTHER_LENGTH (scored on its own vector). */
  readonly at: Int32Array
}
const NO_VECTOR = -1
const OTHER_LENGTH = -2

function warnEncoderFailed(error: unknown): void {
  const reason = error instanceof Error ? error.message : String(error)
  process.emitWarning(
    `toolgate tool search: the sentence encoder is unavailable (${reason}); searches rank on the full text alone`,
    'ToolgateWarning',
  )
}

/**
 * The dot product, in four running sums: one sum waits on its previous addition at every step,
 * which made it most of a fused search's time at 1,000 tools; four interleave. The products are
 * exact in doubles (of two floats), so only the order of the additions differs, by rounding.
 */
function dot(q: Float32Array, v: Float32Array, from = 0): number {
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  const whole = q.length - (q.length % 4)
  let i = 0
  for (; i < whole; i += 4) {
    s0 += q[i] * v[from + i]
    s1 += q[i + 1] * v[from + i + 1]
    s2 += q[i + 2] * v[from + i + 2]
    s3 += q[i + 3] * v[from + i + 3]
  }
  for (; i < q.length; i++) s0 += q[i] * v[from + i]
  return s0 + s1 + s2 + s3
}

/**
 * `dot(q, m, a) + 1` into `out[i]` and `dot(q, m, b) + 1` into `out[j]`, in one pass: each keeps its
 * own four sums, added in the same order as `dot`'s (the same numbers to the last bit), and the two
 * documents' eight sums interleave, so a pass waits on its additions half as often.
 */
function dot2(q: Float32Array, m: Float32Array, a: number, b: number, out: number[], i: number, j: number): void {
  let a0 = 0
  let a1 = 0
  let a2 = 0
  let a3 = 0
  let b0 = 0
  let b1 = 0
  let b2 = 0
  let b3 = 0
  const whole = q.length - (q.length % 4)
  let k = 0
  for (; k < whole; k += 4) {
    const q0 = q[k]
    const q1 = q[k + 1]
    const q2 = q[k + 2]
    const q3 = q[k + 3]
    a0 += q0 * m[a + k]
    a1 += q1 * m[a + k + 1]
    a2 += q2 * m[a + k + 2]
    a3 += q3 * m[a + k + 3]
    b0 += q0 * m[b + k]
    b1 += q1 * m[b + k + 1]
    b2 += q2 * m[b + k + 2]
    b3 += q3 * m[b + k + 3]
  }
  for (; k < q.length; k++) {
    a0 += q[k] * m[a + k]
    b0 += q[k] * m[b + k]
  }
  out[i] = a0 + a1 + a2 + a3 + 1
  out[j] = b0 + b1 + b2 + b3 + 1
}

function unit(vector: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(vector)
  let norm = 0
  for (let i = 0; i < out.length; i++) norm += out[i] * out[i]
  norm = Math.sqrt(norm) || 1
  for (let i = 0; i < out.length; i++) out[i] /= norm
  return out
}
