import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { isRecord } from '../util/is-record.js'
import type { ToolSearchDocument } from './ranker-engine.js'
import { splitWords } from './words.js'

/** A sentence encoder: one unit-length vector per text, computed off the calling turn. */
export interface SentenceEncoder {
  /** Names the model and its version: vectors of another model are never reused. */
  readonly id: string
  embed(texts: readonly string[]): Promise<ArrayLike<number>[]>
  /** Release what the encoder holds (worker threads): called when the ranker is closed. */
  close?(): Promise<void>
}

// Queries embedded once and reused (an agent repeats its requests); dropped whole past this size.
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
 * so a restart with the same tools embeds nothing. A query is embedded by `prepare` (asynchronous,
 * like the encoder); `rank` is synchronous and scores by cosine similarity, so a tool or query not
 * embedded yet simply has no semantic score and ranks on its text alone.
 */
export class EmbeddingRanker {
  private encoder: SentenceEncoder | undefined
  private loading: Promise<SentenceEncoder> | undefined
  private readonly vectors = new Map<string, Float32Array>()
  private readonly queries = new Map<string, Float32Array>()
  private readonly digests = new Map<ToolSearchDocument, string>()
  private readonly waiting = new Map<ToolSearchDocument, string>()
  private pending: Promise<void> = Promise.resolve()
  private dirty = false
  private failed = false
  private closed = false

  /**
   * `report` is told, once, when the encoder cannot be loaded or fails: from then on the ranker
   * scores nothing and the fused search ranks on the full text alone (default: a process warning).
   */
  constructor(
    private readonly load: () => Promise<SentenceEncoder>,
    private readonly cacheFile?: string,
    private readonly report: (error: unknown) => void = warnEncoderFailed,
  ) {}

  /** Whether the encoder failed (to load or to embed): the ranker then scores nothing. */
  get unavailable(): boolean {
    return this.failed
  }

  /** Schedule a tool's embedding (a cached vector is reused). */
  add(doc: ToolSearchDocument): void {
    this.waiting.set(doc, embeddingText(doc))
    this.pending = this.pending.then(() => this.flush())
  }

  remove(doc: ToolSearchDocument): void {
    this.waiting.delete(doc)
    this.digests.delete(doc)
  }

  /**
   * Embed the query, and wait for the tools added so far. Never fails: an encoder that cannot be
   * loaded or fails is reported once, and the search then ranks on the full text alone.
   */
  async prepare(query: string): Promise<void> {
    await this.pending
    if (this.failed || this.closed || this.queries.has(query)) return
    try {
      const encoder = await this.model()
      const [vector] = await encoder.embed([query])
      if (vector === undefined) throw new Error('the sentence encoder returned no vector')
      if (this.queries.size >= QUERY_CACHE_LIMIT) this.queries.clear()
      this.queries.set(query, unit(vector))
    } catch (error) {
      this.fail(error)
    }
  }

  /** Cosine similarity of each document to a prepared query (0 where either has no vector yet). */
  readonly rank = (query: string, docs: readonly ToolSearchDocument[]): number[] => {
    const q = this.failed ? undefined : this.queries.get(query)
    return docs.map((doc) => {
      const digest = this.digests.get(doc)
      const v = digest === undefined ? undefined : this.vectors.get(digest)
      if (q === undefined || v === undefined) return 0
      let dot = 0
      for (let i = 0; i < q.length; i++) dot += q[i] * v[i]
      // Shifted to be positive: the fusion keeps only positive scores, and only the order counts.
      return dot + 1
    })
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

  private model(): Promise<SentenceEncoder> {
    this.loading ??= this.load().then((encoder) => {
      this.encoder = encoder
      this.readCache(encoder.id)
      return encoder
    })
    return this.loading
  }

  private async flush(): Promise<void> {
    if (this.waiting.size === 0 || this.failed || this.closed) return
    try {
      const encoder = await this.model()
      const batch = [...this.waiting]
      this.waiting.clear()
      const missing: Array<{ doc: ToolSearchDocument; digest: string; text: string }> = []
      for (const [doc, text] of batch) {
        const digest = createHash('sha256').update(`${encoder.id}\n${text}`).digest('base64url')
        this.digests.set(doc, digest)
        if (!this.vectors.has(digest)) missing.push({ doc, digest, text })
      }
      if (missing.length === 0) return
      const embedded = await encoder.embed(missing.map((entry) => entry.text))
      missing.forEach((entry, i) => {
        this.vectors.set(entry.digest, unit(embedded[i]))
      })
      this.dirty = true
      this.writeCache()
    } catch (error) {
      this.fail(error)
    }
  }

  private fail(error: unknown): void {
    // A call cut short by `close` is no failure of the encoder.
    if (this.failed || this.closed) return
    this.failed = true
    this.waiting.clear()
    this.report(error)
  }

  private readCache(model: string): void {
    if (this.cacheFile === undefined) return
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
  }

  private writeCache(): void {
    if (this.cacheFile === undefined || !this.dirty || this.encoder === undefined) return
    const vectors: Record<string, string> = {}
    for (const [digest, vector] of this.vectors)
      vectors[digest] = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
    try {
      mkdirSync(path.dirname(this.cacheFile), { recursive: true })
      // Written whole to a temporary name and renamed, so a reader never sees half a file.
      const temporary = `${this.cacheFile}.${process.pid}.tmp`
      writeFileSync(temporary, JSON.stringify({ model: this.encoder.id, vectors }))
      renameSync(temporary, this.cacheFile)
      this.dirty = false
    } catch {
      // A cache that cannot be written costs the embedding again at the next start, nothing more.
    }
  }
}

function warnEncoderFailed(error: unknown): void {
  const reason = error instanceof Error ? error.message : String(error)
  process.emitWarning(
    `toolgate tool search: the sentence encoder is unavailable (${reason}); searches rank on the full text alone`,
    'ToolgateWarning',
  )
}

function unit(vector: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(vector)
  let norm = 0
  for (let i = 0; i < out.length; i++) norm += out[i] * out[i]
  norm = Math.sqrt(norm) || 1
  for (let i = 0; i < out.length; i++) out[i] /= norm
  return out
}
