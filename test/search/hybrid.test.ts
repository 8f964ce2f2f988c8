// Issue 41 (item 2): the 'hybrid' ranker. Full-text and sentence-embedding rankings fused by
// reciprocal rank fusion; tools embedded in the background and cached by content digest in a file,
// so a restart with the same tools embeds nothing. The embedding cache is tested with a counting
// encoder; the runtime path with the real Universal Sentence Encoder lite the optional peers ship.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { ConfigError, createToolRuntime, defineTool, type ToolRuntimeHandle } from '../../src/index.js'
import {
  EmbeddingRanker,
  type EncoderSource,
  embeddingText,
  normalizeQuery,
  type SentenceEncoder,
} from '../../src/search/embedding-ranker.js'
import { TextSearchEngine } from '../../src/search/engine.js'
import { FusedSearchEngine, type ToolSearchDocument } from '../../src/search/ranker-engine.js'
import { loadUseLiteEncoder } from '../../src/search/use-lite-encoder.js'

const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-hybrid-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** An encoder whose vector is the text's letter counts, and which counts what it was asked. */
function countingEncoder(id = 'letters@1'): SentenceEncoder & { texts: string[] } {
  const texts: string[] = []
  return {
    id,
    texts,
    embed: async (batch) => {
      texts.push(...batch)
      return batch.map((text) => {
        const v = new Array<number>(26).fill(0)
        for (const c of text.toLowerCase()) if (c >= 'a' && c <= 'z') v[c.charCodeAt(0) - 97]++
        return v
      })
    },
  }
}

const doc = (name: string, description: string): ToolSearchDocument => ({ name, description, parameters: {} })

describe('the embedding side of the hybrid ranker', () => {
  it('embeds each tool once, ranks a prepared query by cosine similarity, and none before', async () => {
    const encoder = countingEncoder()
    const ranker = new EmbeddingRanker(async () => encoder)
    const docs = [doc('a__zzz', 'zzz zzz'), doc('a__abc', 'abc abc')]
    for (const d of docs) ranker.add(d)
    expect(ranker.rank('abc', docs)).toEqual([0, 0])
    await ranker.prepare('abc')
    const [zzz, abc] = ranker.rank('abc', docs)
    expect(abc).toBeGreaterThan(zzz ?? 0)
    await ranker.prepare('abc')
    // Two tools and one query, each embedded once.
    expect(encoder.texts).toEqual([
      embeddingText(docs[0] as ToolSearchDocument),
      embeddingText(docs[1] as ToolSearchDocument),
      'abc',
    ])
  })

  it('scores on the vectors of now: after a tool is removed or another embedded, with the same or new lists', async () => {
    const encoder = countingEncoder()
    const ranker = new EmbeddingRanker(async () => encoder)
    const [a, b, c] = [doc('a__zzz', 'zzz zzz'), doc('a__abc', 'abc abc'), doc('a__cab', 'cab bca')]
    const letters = (text: string) => {
      const v = new Array<number>(26).fill(0)
      for (const ch of text.toLowerCase()) if (ch >= 'a' && ch <= 'z') v[ch.charCodeAt(0) - 97]++
      return v
    }
    const cosine = (x: number[], y: number[]) => {
      const dot = x.reduce((sum, value, i) => sum + value * (y[i] as number), 0)
      return dot / Math.hypot(...x) / Math.hypot(...y)
    }
    const expected = (d: ToolSearchDocument) => cosine(letters('abc'), letters(embeddingText(d))) + 1
    for (const d of [a, b]) ranker.add(d)
    await ranker.prepare('abc')
    const both = [a, b] as ToolSearchDocument[]
    const first = ranker.rank('abc', both)
    expect(first[0]).toBeCloseTo(expected(a as ToolSearchDocument), 6)
    expect(first[1]).toBeCloseTo(expected(b as ToolSearchDocument), 6)
    // The same list again, one of its tools removed meanwhile: it has no vector now.
    ranker.remove(b as ToolSearchDocument)
    expect(ranker.rank('abc', both)).toEqual([first[0], 0])
    // A third tool embedded, an odd number of them ranked.
    ranker.add(b as ToolSearchDocument)
    ranker.add(c as ToolSearchDocument)
    await ranker.prepare('abc')
    const three = ranker.rank('abc', [c, a, b] as ToolSearchDocument[])
    expect(three).toEqual([ranker.rank('abc', [c] as ToolSearchDocument[])[0], first[0], first[1]])
    expect(three[0]).toBeCloseTo(expected(c as ToolSearchDocument), 6)
  })

  it('keeps vectors in the cache file by content digest: a restart embeds only what changed', async () => {
    const file = path.join(dir, 'nested', 'cache.json')
    const first = countingEncoder()
    const before = new EmbeddingRanker(async () => first, file)
    before.add(doc('a__one', 'First tool.'))
    before.add(doc('a__two', 'Second tool.'))
    await before.prepare('one')
    expect(first.texts).toHaveLength(3)
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { model: string; vectors: Record<string, string> }
    expect(stored.model).toBe('letters@1')
    expect(Object.keys(stored.vectors)).toHaveLength(2)

    const second = countingEncoder()
    const after = new EmbeddingRanker(async () => second, file)
    const same = doc('a__one', 'First tool.')
    const changed = doc('a__two', 'Second tool, now with more words.')
    after.add(same)
    after.add(changed)
    await after.prepare('one')
    expect(second.texts).toEqual([embeddingText(changed), 'one'])
    expect(after.rank('one', [same, changed]).every((score) => score > 0)).toBe(true)

    // Another model's vectors are never reused.
    const other = countingEncoder('other@2')
    const third = new EmbeddingRanker(async () => other, file)
    third.add(same)
    await third.prepare('one')
    expect(other.texts).toEqual([embeddingText(same), 'one'])
  })

  it('reads the cache before loading a model: a restart with every tool cached loads none until a request', async () => {
    const file = path.join(dir, 'lazy', 'cache.json')
    // A source whose id is known without loading, counting its loads (the runtime's: the pool).
    const source = (encoder: SentenceEncoder): EncoderSource & { loads: number } => {
      const counted = {
        id: encoder.id,
        loads: 0,
        load: async () => {
          counted.loads++
          return encoder
        },
      }
      return counted
    }
    const tools = [doc('a__one', 'First tool.'), doc('a__two', 'Second tool.')]
    const first = source(countingEncoder())
    const before = new EmbeddingRanker(first, file)
    for (const d of tools) before.add(d)
    await before.indexed()
    expect(first.loads).toBe(1)

    const encoder = countingEncoder()
    const second = source(encoder)
    const after = new EmbeddingRanker(second, file)
    for (const d of tools) after.add(d)
    await after.indexed()
    // Every tool came from the cache file: no model loaded, nothing embedded.
    expect(second.loads).toBe(0)
    expect(after.modelRequested).toBe(false)
    expect(after.rank('one', tools)).toEqual([0, 0])
    // A blank request is never ranked: it waits for the tools and loads nothing either.
    await after.prepare(' ')
    expect(second.loads).toBe(0)
    // The first request loads it, once, and embeds the request alone.
    await after.prepare('one')
    expect(second.loads).toBe(1)
    expect(encoder.texts).toEqual(['one'])
    expect(after.rank('one', tools).every((score) => score > 0)).toBe(true)

    // A tool the cache lacks loads the model too, and only that tool is embedded.
    const third = source(countingEncoder())
    const again = new EmbeddingRanker(third, file)
    for (const d of tools) again.add(d)
    const added = doc('a__three', 'Third tool.')
    again.add(added)
    await again.indexed()
    expect(third.loads).toBe(1)
  })

  it('refuses a loaded encoder whose id is not the one its source announced', async () => {
    const reported: unknown[] = []
    const ranker = new EmbeddingRanker(
      { id: 'letters@1', load: async () => countingEncoder('letters@2') },
      undefined,
      (error) => reported.push(error),
    )
    ranker.add(doc('a__one', 'First tool.'))
    await ranker.prepare('one')
    expect(ranker.unavailable).toBe(true)
    expect((reported as Error[]).map((e) => e.message)).toEqual([
      'the sentence encoder loaded as letters@2, expected letters@1',
    ])
  })

  it('embeds a request once whatever its spacing, and keeps the 1,000 most recently used', async () => {
    expect(normalizeQuery('  send\tan   email\n')).toBe('send an email')
    expect(normalizeQuery('Send ａn email')).toBe('Send an email')
    const encoder = countingEncoder()
    const ranker = new EmbeddingRanker(async () => encoder)
    const docs = [doc('a__abc', 'abc abc')]
    ranker.add(docs[0] as ToolSearchDocument)
    await ranker.prepare('  abc   abc ')
    await ranker.prepare('abc abc')
    expect(encoder.texts.slice(1)).toEqual(['abc abc'])
    expect(ranker.rank(' abc  abc', docs)[0]).toBeGreaterThan(0)

    for (let i = 0; i < 999; i++) await ranker.prepare(`request ${i}`)
    // Full (1,000). Using 'abc abc' again makes 'request 0' the least recently used.
    await ranker.prepare('abc abc')
    ranker.rank('abc abc', docs)
    await ranker.prepare('one more')
    const embedded = encoder.texts.length
    await ranker.prepare('abc abc')
    await ranker.prepare('request 1')
    expect(encoder.texts.length).toBe(embedded)
    await ranker.prepare('request 0')
    expect(encoder.texts.slice(embedded)).toEqual(['request 0'])
  })

  it('ignores an unreadable cache file and rewrites it', async () => {
    const file = path.join(dir, 'broken.json')
    writeFileSync(file, '{ not json')
    const encoder = countingEncoder()
    const ranker = new EmbeddingRanker(async () => encoder, file)
    ranker.add(doc('a__one', 'First tool.'))
    await ranker.prepare('one')
    expect(JSON.parse(readFileSync(file, 'utf8')).model).toBe('letters@1')
  })

  it('reports an encoder that fails to load once, and then scores nothing rather than failing', async () => {
    const reported: unknown[] = []
    let loads = 0
    const ranker = new EmbeddingRanker(
      async () => {
        loads++
        throw new Error('no weights')
      },
      undefined,
      (error) => reported.push(error),
    )
    const docs = [doc('a__one', 'First tool.'), doc('a__two', 'Second tool.')]
    for (const d of docs) ranker.add(d)
    await ranker.prepare('one')
    await ranker.prepare('two')
    ranker.add(doc('a__three', 'Third tool.'))
    await ranker.prepare('three')
    expect(ranker.unavailable).toBe(true)
    expect(ranker.rank('one', docs)).toEqual([0, 0])
    // Loaded once, reported once: a broken model is not retried on every search.
    expect(loads).toBe(1)
    expect(reported.map((e) => (e as Error).message)).toEqual(['no weights'])
  })

  it('reports an encoder that fails while embedding a request, and stops using it', async () => {
    const reported: unknown[] = []
    const encoder = countingEncoder()
    const ranker = new EmbeddingRanker(
      async () => ({
        id: encoder.id,
        embed: async (texts) => {
          if (texts.includes('boom')) throw new Error('out of memory')
          return encoder.embed(texts)
        },
      }),
      undefined,
      (error) => reported.push(error),
    )
    const docs = [doc('a__abc', 'abc abc')]
    ranker.add(docs[0] as ToolSearchDocument)
    await ranker.prepare('abc')
    expect(ranker.rank('abc', docs)[0]).toBeGreaterThan(0)
    await ranker.prepare('boom')
    expect(reported.map((e) => (e as Error).message)).toEqual(['out of memory'])
    expect(ranker.rank('abc', docs)).toEqual([0])
  })
})

describe("score fusion (the 'hybrid' ranker's)", () => {
  const definitions = [
    tool('mail__send', 'Send an email message.'),
    tool('mail__draft', 'Write an email draft and keep it.'),
    tool('chat__post', 'Post to a channel.'),
  ]
  const engineWith = (scores: Record<string, number>) => {
    const engine = new FusedSearchEngine(
      new TextSearchEngine(),
      (_query, docs) => docs.map((doc) => scores[doc.name] ?? 0),
      {},
      'score',
    )
    for (const definition of definitions) engine.add(definition)
    return engine
  }
  const names = (engine: FusedSearchEngine, query: string) =>
    engine.search(query, () => true, 5).map((match) => match.definition.name)

  it('averages the two sides scaled to 0–1: a strong ranker score lifts a tool the text ranks lower', () => {
    const text = new TextSearchEngine()
    for (const definition of definitions) text.add(definition)
    expect(text.search('send an email', () => true, 5).map((m) => m.definition.name)).toEqual([
      'mail__send',
      'mail__draft',
    ])
    // The ranker's best (1.0) against its worst (0.5): the draft gets the ranker's whole share.
    expect(names(engineWith({ mail__send: 0.5, mail__draft: 1, chat__post: 0.6 }), 'send an email')).toEqual([
      'mail__draft',
      'mail__send',
      'chat__post',
    ])
    // A tool the text does not match still ranks on the ranker's share, after the text's both.
    expect(names(engineWith({ mail__send: 1, mail__draft: 0.5, chat__post: 0.9 }), 'send an email')).toEqual([
      'mail__send',
      'chat__post',
      'mail__draft',
    ])
  })

  it('is the full-text order when the ranker scores nothing (a request not embedded), with why kept', () => {
    const engine = engineWith({})
    const found = engine.search('send an email', () => true, 5)
    expect(found.map((match) => match.definition.name)).toEqual(['mail__send', 'mail__draft'])
    expect(found[0]?.why?.length).toBeGreaterThan(0)
  })

  it('refuses a score that is not a number, naming the option', () => {
    const engine = new FusedSearchEngine(
      new TextSearchEngine(),
      (_q, docs) => docs.map(() => 'x') as never,
      {},
      'score',
    )
    engine.add(definitions[0] as ReturnType<typeof tool>)
    expect(() => engine.search('send', () => true, 5)).toThrow(/search\.ranker: expected 1 numbers/)
  })
})

const handles: ToolRuntimeHandle[] = []
afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.dispose()
})

function tool(name: string, description: string) {
  return defineTool({
    name,
    description,
    parameters: { city: { type: 'string', description: 'Where.' } },
    output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
    execute: async () => `${name} ran`,
    defer: true,
  })
}

describe("search: { ranker: 'hybrid' }", () => {
  it('finds a tool that shares no word with the request, through the sentence encoder', async () => {
    const cache = path.join(dir, 'runtime-cache.json')
    const handle = await createToolRuntime({ mode: 'native', search: { ranker: 'hybrid', embeddingCache: cache } })
    handles.push(handle)
    const { tools } = handle
    tools.register(tool('weather__forecast', 'Get the weather forecast for a place.'))
    tools.register(tool('files__delete', 'Delete a file from the disk.'))
    tools.register(tool('mail__send', 'Send an email message.'))
    const request = 'will it rain in Paris tomorrow'
    // The full text alone finds nothing: no word in common.
    expect(tools.search(request)).toEqual([])
    await tools.prepareSearch(request)
    expect(tools.search(request)[0]?.name).toBe('weather__forecast')
    // The tools' vectors are in the cache file, under the model's name.
    const stored = JSON.parse(readFileSync(cache, 'utf8')) as { model: string; vectors: Record<string, string> }
    expect(stored.model).toMatch(/^use-lite@/)
    expect(Object.keys(stored.vectors)).toHaveLength(3)
  }, 120_000)

  it('search_tools falls back to the full text when the encoder cannot load, warning once (not an error)', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => {
      if (warning.message.includes('sentence encoder')) warnings.push(warning.message)
    }
    process.on('warning', onWarning)
    try {
      const broken = new EmbeddingRanker(async () => {
        throw new Error('cannot read the model weights')
      })
      const engine = new FusedSearchEngine(new TextSearchEngine(), broken.rank, broken)
      const withBroken = await createToolRuntime({ mode: 'native', search: { engine } })
      const textOnly = await createToolRuntime({ mode: 'native' })
      handles.push(withBroken, textOnly)
      for (const { tools } of [withBroken, textOnly]) {
        tools.register(tool('weather__forecast', 'Get the weather forecast for a place.'))
        tools.register(tool('files__delete', 'Delete a file from the disk.'))
        tools.register(tool('mail__send', 'Send an email message and a weather report.'))
      }
      const found = async (handle: ToolRuntimeHandle, callId: string) => {
        const result = await handle.tools.execute({
          callId,
          name: 'search_tools',
          arguments: { query: 'weather forecast' },
          signal: new AbortController().signal,
        })
        expect(result.isError).toBe(false)
        return (result as unknown as { value: { tools: { name: string }[] } }).value.tools.map((t) => t.name)
      }
      const expected = await found(textOnly, 't')
      expect(expected).toEqual(['weather__forecast', 'mail__send'])
      expect(await found(withBroken, 'b1')).toEqual(expected)
      expect(await found(withBroken, 'b2')).toEqual(expected)
      await withBroken.tools.prepareSearch('delete a file')
      expect(withBroken.tools.search('delete a file')[0]?.name).toBe('files__delete')
      // process.emitWarning delivers on a later tick.
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/cannot read the model weights.*full text alone/)
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('the built-in encoder batches texts by length yet returns each vector in the order asked', async () => {
    const encoder = await loadUseLiteEncoder()
    // Ten texts (more than one batch), long and short mixed, so sorting by length reorders them.
    const texts = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? `short ${i}` : `a much longer text number ${i} about the weather, files and mail`,
    )
    const together = await encoder.embed(texts)
    for (const [i, text] of texts.entries()) {
      const [alone] = await encoder.embed([text])
      const a = Array.from(together[i] ?? [])
      const b = Array.from(alone ?? [])
      const cosine = a.reduce((sum, x, k) => sum + x * (b[k] ?? 0), 0) / (Math.hypot(...a) * Math.hypot(...b))
      expect(cosine).toBeGreaterThan(0.99)
    }
  }, 120_000)

  it('refuses an embedding cache that is neither a path nor false', async () => {
    const error = await createToolRuntime({
      mode: 'native',
      search: { ranker: 'hybrid', embeddingCache: 3 as unknown as string },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect(String((error as Error).message)).toMatch(/search\.embeddingCache: expected a file path or false/)
  })
})
