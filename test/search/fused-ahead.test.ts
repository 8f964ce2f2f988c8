// Issue 41 (Targets: hybrid speed): a new request's full-text half runs while the encoder embeds it.
// The ranker hands the request to its encoder before `prepare` first awaits; the fused engine then
// scores the full text, and the search after uses those scores, unless a tool was added or removed
// meanwhile. The rankings must be the ones a search computing everything afterwards gives.
import { describe, expect, it, vi } from 'vitest'
import type { ToolDefinition } from '../../src/index.js'
import { EmbeddingRanker, type SentenceEncoder } from '../../src/search/embedding-ranker.js'
import { TextSearchEngine } from '../../src/search/engine.js'
import { FusedSearchEngine } from '../../src/search/ranker-engine.js'

function definition(name: string, description: string): ToolDefinition {
  return {
    name,
    description,
    parameters: {},
    output: { schema: {}, render: () => [] },
    execute: async () => null,
  }
}

/** Letter counts as vectors (513 dimensions: an odd length exercises the last, unpaired sums); requests wait to be released. */
function heldEncoder() {
  const asked: string[] = []
  const held: Array<() => void> = []
  const vector = (text: string) => {
    const v = new Array<number>(513).fill(0.01)
    for (const c of text.toLowerCase()) if (c >= 'a' && c <= 'z') v[(c.charCodeAt(0) - 97) * 19]++
    return v
  }
  const encoder: SentenceEncoder = {
    id: 'held@1',
    embed: (texts) => {
      asked.push(...texts)
      if (texts.length > 1 || !texts[0]?.startsWith('find')) return Promise.resolve(texts.map(vector))
      return new Promise((resolve) => held.push(() => resolve(texts.map(vector))))
    },
  }
  return {
    encoder,
    asked,
    release: () => {
      for (const go of held.splice(0)) go()
    },
  }
}

const all = () => true
const names = (engine: FusedSearchEngine, query: string) =>
  engine.search(query, all, 10).map(({ definition, score, why }) => ({ name: definition.name, score, why }))

async function setUp() {
  const held = heldEncoder()
  const ranker = new EmbeddingRanker({ id: 'held@1', load: async () => held.encoder })
  const text = new TextSearchEngine()
  const engine = new FusedSearchEngine(text, ranker.rank, ranker, 'score')
  for (const [name, description] of [
    ['mail__send', 'Send an email message to someone.'],
    ['chat__post', 'Post a message in a chat channel.'],
    ['files__read', 'Read a file from the disk.'],
    ['files__write', 'Write text to a file.'],
    ['calendar__create', 'Create a calendar event.'],
  ] as const)
    engine.add(definition(name, description))
  // A first request loads the model and waits for the tools' vectors.
  await engine.prepare('warm up')
  return { held, ranker, text, engine }
}

describe("the 'hybrid' search's full-text half, while the request is embedded", () => {
  it('hands the request to the encoder at once, scores the full text meanwhile, and ranks as computed afterwards', async () => {
    const { held, text, engine } = await setUp()
    const scores = vi.spyOn(text, 'scores')
    const prepared = engine.prepare('find a message in a file')
    // Before any turn: the encoder has the request and the full text is scored.
    expect(held.asked.at(-1)).toBe('find a message in a file')
    expect(scores).toHaveBeenCalledTimes(1)
    held.release()
    await prepared
    const found = names(engine, 'find a message in a file')
    // The search took the scores computed ahead.
    expect(scores).toHaveBeenCalledTimes(1)
    // The same search again computes everything afterwards: the same ranking, to the last bit.
    expect(names(engine, 'find a message in a file')).toEqual(found)
    expect(scores).toHaveBeenCalledTimes(2)
    expect(found.length).toBeGreaterThan(1)
  })

  it('scores the full text again when a tool came or went while the request was embedded', async () => {
    const { held, ranker, engine } = await setUp()
    const prepared = engine.prepare('find a message in a file')
    const late = definition('notes__message', 'Keep a message in a file of notes.')
    engine.add(late)
    held.release()
    await prepared
    await ranker.indexed()
    // The late tool is ranked on its words too (scores from before it came would have none).
    const match = engine.search('find a message in a file', all, 10).find((m) => m.definition === late)
    expect(match?.why?.map((reason) => reason.term)).toEqual(expect.arrayContaining(['messag', 'file']))
    const again = engine.prepare('find a file')
    engine.remove(late)
    held.release()
    await again
    expect(names(engine, 'find a file').map((found) => found.name)).not.toContain('notes__message')
  })
})
