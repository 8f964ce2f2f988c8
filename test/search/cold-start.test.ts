// Issue 41 (Targets, hybrid speed): a request made while the 'hybrid' ranker is still embedding the
// tools (a cold start) is not held until every tool has its vector. `search_tools` answers it from
// the full text at once, marked partial (in its structured output and in what the model reads);
// once the tools are embedded, requests get the fused ranking. `tools.prepareSearch` still waits.
// The encoder is a stand-in whose tool embedding is held until the test releases it, so "before the
// embeddings are done" is a state the test controls, not a race.
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime, defineTool, type ToolRuntimeHandle } from '../../src/index.js'
import { EmbeddingRanker, type SentenceEncoder } from '../../src/search/embedding-ranker.js'
import { TextSearchEngine } from '../../src/search/engine.js'
import { FusedSearchEngine, type ToolSearchDocument } from '../../src/search/ranker-engine.js'

/**
 * A stand-in encoder with three meanings (weather, files, mail): a text's vector says which it
 * mentions. Calls of more than one text (the tools) wait for `release`; a request (one text) does not.
 */
function heldEncoder(): SentenceEncoder & { release(): void; asked: string[] } {
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  const asked: string[] = []
  const meaning = (text: string) => {
    const t = text.toLowerCase()
    return [
      /weather|rain|forecast/.test(t) ? 1 : 0,
      /file|disk|delete/.test(t) ? 1 : 0,
      /mail|message/.test(t) ? 1 : 0,
    ].map((x) => x + 0.01)
  }
  return {
    id: 'meanings@1',
    asked,
    release,
    embed: async (texts) => {
      asked.push(...texts)
      if (texts.length > 1) await released
      return texts.map(meaning)
    },
  }
}

const handles: ToolRuntimeHandle[] = []
afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.dispose()
})

const tool = (name: string, description: string) =>
  defineTool({
    name,
    description,
    parameters: {},
    output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
    execute: async () => `${name} ran`,
    defer: true,
  })

const TOOLS = [
  ['weather__forecast', 'Get the weather forecast for a place.'],
  ['files__delete', 'Delete a file from the disk.'],
  ['mail__send', 'Send an email message.'],
] as const

// The lexical side finds only files__delete ("delete"); the meanings add weather__forecast ("rain").
const REQUEST = 'delete what says rain tomorrow'

interface Found {
  tools: { name: string; partial?: boolean }[]
  partial?: boolean
}

async function searchTools(handle: ToolRuntimeHandle, callId: string, query: string) {
  const result = await handle.tools.execute({
    callId,
    name: 'search_tools',
    arguments: { query },
    signal: new AbortController().signal,
  })
  expect(result.isError).toBe(false)
  const value = (result as unknown as { value: Found }).value
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
  return { value, names: value.tools.map((t) => t.name), text }
}

async function runtimeWith(encoder: SentenceEncoder) {
  const ranker = new EmbeddingRanker(async () => encoder)
  const engine = new FusedSearchEngine(new TextSearchEngine(), ranker.rank, ranker, 'score')
  const handle = await createToolRuntime({ mode: 'native', search: { engine } })
  handles.push(handle)
  for (const [name, description] of TOOLS) handle.tools.register(tool(name, description))
  return { handle, ranker }
}

describe("a request during the 'hybrid' ranker's cold start", () => {
  it('search_tools answers from the full text at once, marked partial; later requests get the fused ranking', async () => {
    const encoder = heldEncoder()
    const { handle, ranker } = await runtimeWith(encoder)
    const textOnly = await createToolRuntime({ mode: 'native' })
    handles.push(textOnly)
    for (const [name, description] of TOOLS) textOnly.tools.register(tool(name, description))
    const lexical = await searchTools(textOnly, 't', REQUEST)
    expect(lexical.names).toEqual(['files__delete'])
    expect(lexical.value.partial).toBeUndefined()

    // The tools' embedding is held: were search_tools waiting for it, this call would never return.
    const cold = await searchTools(handle, 'c1', REQUEST)
    expect(ranker.complete).toBe(false)
    expect(cold.names).toEqual(lexical.names)
    expect(cold.value.partial).toBe(true)
    expect(cold.value.tools.every((t) => t.partial === true)).toBe(true)
    expect(cold.text).toMatch(/Ranked on matching words only: the tools are still being indexed by meaning/)
    // Nothing was asked of the encoder for the request: it would only be ranked against part of the tools.
    expect(encoder.asked).not.toContain(REQUEST)

    encoder.release()
    await ranker.indexed()
    const warm = await searchTools(handle, 'c2', REQUEST)
    expect(warm.names).toEqual(['files__delete', 'weather__forecast'])
    expect(warm.value.partial).toBeUndefined()
    expect(warm.value.tools.some((t) => 'partial' in t)).toBe(false)
    expect(warm.text).not.toMatch(/Ranked on matching words only/)
    expect(encoder.asked).toContain(REQUEST)
  })

  it('tools.prepareSearch still waits for every tool, so the search after it is fused', async () => {
    const encoder = heldEncoder()
    const { handle } = await runtimeWith(encoder)
    let prepared = false
    const preparing = handle.tools.prepareSearch(REQUEST).then(() => {
      prepared = true
    })
    // The encoder holds the tools until released: the wait cannot have ended.
    await new Promise((resolve) => setImmediate(resolve))
    expect(prepared).toBe(false)
    // A synchronous search meanwhile ranks on the full text, and says so.
    const meanwhile = handle.tools.search(REQUEST)
    expect(meanwhile.map((m) => m.name)).toEqual(['files__delete'])
    expect(meanwhile.every((m) => m.partial === true)).toBe(true)
    encoder.release()
    await preparing
    const fused = handle.tools.search(REQUEST)
    expect(fused.map((m) => m.name)).toEqual(['files__delete', 'weather__forecast'])
    expect(fused.some((m) => 'partial' in m)).toBe(false)
  })

  it('never fuses over part of the tools: a tool added later turns the semantic side off until it is embedded', async () => {
    const encoder = heldEncoder()
    const ranker = new EmbeddingRanker(async () => encoder)
    const docs: ToolSearchDocument[] = TOOLS.slice(0, 2).map(([name, description]) => ({
      name,
      description,
      parameters: {},
    }))
    for (const d of docs) ranker.add(d)
    encoder.release()
    await ranker.prepare('rain')
    expect(ranker.ready('rain')).toBe(true)
    expect(ranker.rank('rain', docs).every((score) => score > 0)).toBe(true)
    // One more tool: a single text, which the stand-in embeds at once, but not before a turn passes.
    const mail: ToolSearchDocument = { name: 'mail__send', description: 'Send an email message.', parameters: {} }
    ranker.add(mail)
    expect(ranker.complete).toBe(false)
    expect(ranker.ready('rain')).toBe(false)
    expect(ranker.rank('rain', [...docs, mail])).toEqual([0, 0, 0])
    await ranker.indexed()
    expect(ranker.ready('rain')).toBe(true)
    expect(ranker.rank('rain', [...docs, mail]).every((score) => score > 0)).toBe(true)
  })

  it('a request with allowPartial during a cold start embeds nothing; a blank request is always ready', async () => {
    const encoder = heldEncoder()
    const ranker = new EmbeddingRanker(async () => encoder)
    ranker.add({ name: 'weather__forecast', description: 'Get the weather forecast.', parameters: {} })
    ranker.add({ name: 'files__delete', description: 'Delete a file.', parameters: {} })
    await ranker.prepare('rain', { allowPartial: true })
    expect(ranker.ready('rain')).toBe(false)
    expect(ranker.ready('  ')).toBe(false)
    expect(encoder.asked).not.toContain('rain')
    encoder.release()
    await ranker.indexed()
    await ranker.prepare('rain', { allowPartial: true })
    expect(ranker.ready('rain')).toBe(true)
    expect(ranker.ready('  ')).toBe(true)
    expect(encoder.asked.filter((text) => text === 'rain')).toHaveLength(1)
  })
})
