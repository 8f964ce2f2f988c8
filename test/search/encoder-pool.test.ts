// Issue 41 (Targets, hybrid speed): the 'hybrid' ranker's encoder runs in a pool of worker threads.
// The real Universal Sentence Encoder lite gives the same vectors in a worker as in the calling
// thread, run the same way there (backend, SIMD binary, one pass per request); a worker that cannot load, crashes or exits makes the search fall back to the full text,
// reported once and with no unhandled rejection; the runtime's dispose stops the pool. Failures use
// a stand-in worker (test/fixtures/stand-in-encoder-worker.mjs) that speaks the pool's messages.
import dc from 'node:diagnostics_channel'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Worker } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createToolRuntime, defineTool } from '../../src/index.js'
import { EmbeddingRanker } from '../../src/search/embedding-ranker.js'
import { EncoderPool } from '../../src/search/encoder-pool.js'
import type { ToolSearchDocument } from '../../src/search/ranker-engine.js'
import { loadUseLiteEncoder } from '../../src/search/use-lite-encoder.js'

const standIn = () => new URL('../fixtures/stand-in-encoder-worker.mjs', import.meta.url)
// A worker whose model cannot load: it says so, as the real one does (src/search/encoder-worker.ts).
const failingToLoad = new URL(
  `data:text/javascript,${encodeURIComponent(
    "import { parentPort } from 'node:worker_threads'\nparentPort.postMessage({ type: 'failed', message: 'no weights here' })",
  )}`,
)
const doc = (name: string, description: string): ToolSearchDocument => ({ name, description, parameters: {} })

// Every worker thread started during a test, seen through Node's own diagnostics channel.
const started: Worker[] = []
const onWorker = (message: unknown) => started.push((message as { worker: Worker }).worker)
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
beforeEach(() => {
  started.length = 0
  unhandled.length = 0
  dc.subscribe('worker_threads', onWorker)
  process.on('unhandledRejection', onUnhandled)
})
afterEach(() => {
  dc.unsubscribe('worker_threads', onWorker)
  process.off('unhandledRejection', onUnhandled)
})

/** Let rejections that nobody handled surface (Node reports them after the microtask queue drains). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('the encoder pool', () => {
  it('gives the same vectors as the encoder in the calling thread, in the order asked', async () => {
    // Ten batches, long and short texts mixed, so the pool cuts and reorders them, and starts its
    // second worker while they wait.
    const texts = Array.from({ length: 80 }, (_, i) =>
      i % 3 === 0 ? `short ${i}` : `a much longer text number ${i} about the weather, files and mail`,
    )
    const pool = await EncoderPool.start({ size: 2 })
    try {
      expect(started).toHaveLength(1)
      const inThread = await loadUseLiteEncoder()
      expect(pool.id).toBe(inThread.id)
      // The worker (bundled from sources here) runs the encoder as the calling thread does: the
      // same backend and SIMD binary, and a request in one pass.
      expect(inThread.runtime).toMatchObject({ backend: 'wasm', onePass: true })
      expect(pool.runtime).toEqual(inThread.runtime)
      const [pooled, local, request] = await Promise.all([
        pool.embed(texts),
        inThread.embed(texts),
        // A request sent while the tool batches are queued is answered like any other.
        pool.embed(['will it rain in Paris tomorrow']),
      ])
      expect(pooled).toHaveLength(texts.length)
      pooled.forEach((vector, i) => {
        const expected = Array.from(local[i] ?? [])
        expect(vector).toHaveLength(512)
        Array.from(vector).forEach((x, k) => {
          expect(x).toBeCloseTo(expected[k] as number, 6)
        })
      })
      expect(pool.workers).toBe(2)
      const [alone] = await inThread.embed(['will it rain in Paris tomorrow'])
      Array.from(request[0] ?? []).forEach((x, k) => {
        expect(x).toBeCloseTo(Array.from(alone ?? [])[k] as number, 6)
      })
    } finally {
      await pool.close()
    }
    expect(started.every((worker) => worker.threadId === -1)).toBe(true)
  }, 180_000)

  for (const [how, text] of [
    ['exits', 'exit'],
    ['throws an uncaught error', 'throw'],
  ] as const)
    it(`falls back to the full text when a worker ${how}, reported once, nothing unhandled`, async () => {
      const reported: unknown[] = []
      const ranker = new EmbeddingRanker(
        () => EncoderPool.start({ size: 2, entry: standIn() }),
        undefined,
        (error) => reported.push(error),
      )
      const docs = [doc('a__abc', 'abc abc'), doc('a__xyz', 'xyz xyz')]
      for (const d of docs) ranker.add(d)
      await ranker.prepare('abc')
      expect(ranker.rank('abc', docs)[0]).toBeGreaterThan(0)
      // Tools queued behind the crash, and a request in flight with it.
      ranker.add(doc('a__more', 'more tools'))
      await Promise.all([ranker.prepare(text), ranker.prepare('another request')])
      await ranker.prepare('and another')
      expect(ranker.unavailable).toBe(true)
      expect(ranker.rank('abc', docs)).toEqual([0, 0])
      expect(reported).toHaveLength(1)
      expect((reported[0] as Error).message).toMatch(/encoder worker failed/)
      await settle()
      expect(unhandled).toEqual([])
      // The other worker is stopped too; closing afterwards is quiet.
      await ranker.close()
      await expect.poll(() => started.every((worker) => worker.threadId === -1)).toBe(true)
    }, 60_000)

  it('falls back when a worker cannot load the model, reported once', async () => {
    const reported: unknown[] = []
    const ranker = new EmbeddingRanker(
      () => EncoderPool.start({ size: 2, entry: failingToLoad }),
      undefined,
      (error) => reported.push(error),
    )
    ranker.add(doc('a__abc', 'abc abc'))
    await ranker.prepare('abc')
    await ranker.prepare('xyz')
    expect(ranker.unavailable).toBe(true)
    expect((reported as Error[]).map((e) => e.message)).toEqual(['no weights here'])
    await expect.poll(() => started.length > 0 && started.every((worker) => worker.threadId === -1)).toBe(true)
    await settle()
    expect(unhandled).toEqual([])
  }, 60_000)

  it('starts one worker, and another only while tool batches queue up, never for a request', async () => {
    const pool = await EncoderPool.start({ size: 3, entry: standIn() })
    try {
      expect(started).toHaveLength(1)
      expect(Array.from((await pool.embed(['ab']))[0] ?? []).slice(0, 3)).toEqual([1, 1, 0])
      await pool.embed(['cd', 'ef', 'gh'])
      expect(pool.workers).toBe(1)
      // 100 texts are 13 batches: one runs, 12 wait, so one worker more (not two) is started.
      const texts = Array.from({ length: 100 }, (_, i) => `text ${'b'.repeat(i % 7)}`)
      const embedding = pool.embed(texts)
      expect(pool.workers).toBe(2)
      const vectors = await embedding
      vectors.forEach((vector, i) => {
        expect(vector[1]).toBe(i % 7)
      })
      await expect.poll(() => started.filter((worker) => worker.threadId !== -1).length).toBe(2)
      expect(pool.workers).toBe(2)
    } finally {
      await pool.close()
    }
    await expect.poll(() => started.every((worker) => worker.threadId === -1)).toBe(true)
  }, 60_000)

  it('a call the worker refuses rejects that call only; closing rejects what waits', async () => {
    const pool = await EncoderPool.start({ size: 1, entry: standIn() })
    await expect(pool.embed(['reject'])).rejects.toThrow('this text cannot be embedded')
    expect(Array.from((await pool.embed(['ab']))[0] ?? []).slice(0, 3)).toEqual([1, 1, 0])
    const waiting = expect(pool.embed(Array.from({ length: 40 }, (_, i) => `text ${i}`))).rejects.toThrow('closed')
    await pool.close()
    await waiting
    await expect(pool.embed(['ab'])).rejects.toThrow('closed')
    await expect.poll(() => started.every((worker) => worker.threadId === -1)).toBe(true)
    await settle()
    expect(unhandled).toEqual([])
  }, 60_000)
})

describe("search: { ranker: 'hybrid' } in worker threads", () => {
  it('a restart whose tools are all in the cache file starts no worker until a request, then one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-lazy-encoder-'))
    const cache = path.join(dir, 'vectors.json')
    const tools = [
      ['weather__forecast', 'Get the weather forecast for a place.'],
      ['files__delete', 'Delete a file from the disk.'],
    ] as const
    const start = async () => {
      const handle = await createToolRuntime({ mode: 'native', search: { ranker: 'hybrid', embeddingCache: cache } })
      for (const [name, description] of tools)
        handle.tools.register(
          defineTool({
            name,
            description,
            parameters: {},
            output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
            execute: async () => 'done',
            defer: true,
          }),
        )
      return handle
    }
    try {
      const first = await start()
      try {
        await first.tools.prepareSearch('will it rain in Paris tomorrow')
      } finally {
        await first.dispose()
      }
      const written = readFileSync(cache, 'utf8')
      expect(Object.keys((JSON.parse(written) as { vectors: object }).vectors)).toHaveLength(2)
      started.length = 0

      const second = await start()
      try {
        // A blank request only waits for the tools to be indexed: from the file, loading nothing.
        await second.tools.prepareSearch('  ')
        expect(started).toHaveLength(0)
        // A search before any request is embedded ranks on the full text, loading nothing.
        expect(second.tools.search('delete a file')[0]?.name).toBe('files__delete')
        expect(started).toHaveLength(0)
        await second.tools.prepareSearch('will it rain in Paris tomorrow')
        // One worker, for the request; the tools' vectors came from the file, which is unchanged.
        expect(started).toHaveLength(1)
        expect(second.tools.search('will it rain in Paris tomorrow')[0]?.name).toBe('weather__forecast')
        expect(readFileSync(cache, 'utf8')).toBe(written)
      } finally {
        await second.dispose()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    await expect.poll(() => started.every((worker) => worker.threadId === -1)).toBe(true)
  }, 180_000)

  it('embeds in the pool, and the runtime dispose stops its workers', async () => {
    const handle = await createToolRuntime({ mode: 'native', search: { ranker: 'hybrid', embeddingCache: false } })
    try {
      handle.tools.register(
        defineTool({
          name: 'weather__forecast',
          description: 'Get the weather forecast for a place.',
          parameters: {},
          output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
          execute: async () => 'sunny',
          defer: true,
        }),
      )
      await handle.tools.prepareSearch('will it rain in Paris tomorrow')
      expect(handle.tools.search('will it rain in Paris tomorrow')[0]?.name).toBe('weather__forecast')
      expect(started.length).toBeGreaterThan(0)
      expect(started.some((worker) => worker.threadId !== -1)).toBe(true)
    } finally {
      await handle.dispose()
    }
    await expect.poll(() => started.every((worker) => worker.threadId === -1)).toBe(true)
    await settle()
    expect(unhandled).toEqual([])
  }, 180_000)
})
