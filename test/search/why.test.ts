// Issue 41 (items 2 and 3): tools.search says why a tool matched (fields and terms, and which
// request word led there), search_tools passes it to the model, and a pluggable ranker
// `(query, docs) => scores` is fused with the full-text ranking.
import { afterEach, describe, expect, it } from 'vitest'
import {
  ConfigError,
  createToolRuntime,
  defineTool,
  type ToolRanker,
  type ToolRuntimeHandle,
  type ToolSearchOptions,
} from '../../src/index.js'

const handles: ToolRuntimeHandle[] = []
afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.dispose()
})

async function runtime(search?: ToolSearchOptions): Promise<ToolRuntimeHandle> {
  const handle = await createToolRuntime({ mode: 'native', ...(search ? { search } : {}) })
  handles.push(handle)
  return handle
}

function tool(name: string, description: string) {
  return defineTool({
    name,
    description,
    parameters: { branch: { type: 'string', description: 'The base branch to merge into.' } },
    output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
    execute: async () => `${name} ran`,
    defer: true,
  })
}

const signal = new AbortController().signal

describe('why a tool matched', () => {
  it('tools.search lists the fields and terms met, and the request word each came from', async () => {
    const { tools } = await runtime()
    tools.register(tool('gh__merge_pull_request', 'Merge a pull request.'))
    tools.register(tool('gh__create_issue', 'Open a new issue.'))
    const [best] = tools.search('merge my PR')
    expect(best?.name).toBe('gh__merge_pull_request')
    expect(best?.why).toEqual(
      expect.arrayContaining([
        { field: 'name', term: 'merg', word: 'merge', how: 'word' },
        { field: 'name', term: 'pull', word: 'pr', how: 'synonym' },
        { field: 'description', term: 'request', word: 'pr', how: 'synonym' },
        { field: 'parameters', term: 'merg', word: 'merge', how: 'word' },
      ]),
    )
    // Fields in index order: name, description, parameters, server.
    const order = ['name', 'description', 'parameters', 'server']
    const fields = best?.why.map((reason) => order.indexOf(reason.field)) ?? []
    expect(fields).toEqual([...fields].sort((a, b) => a - b))
    expect(best?.why.some((reason) => reason.field === 'server' && reason.term === 'gh')).toBe(false)
  })

  it('names prefix and thesaurus matches as such', async () => {
    const { tools } = await runtime()
    tools.register(tool('gh__create_repository', 'Create a repository.'))
    tools.register(tool('notes__set_tag', 'Put a tag on a note.'))
    expect(tools.search('repositor')[0]?.why).toContainEqual({
      field: 'name',
      term: 'repositori',
      word: 'repositor',
      how: 'prefix',
    })
    expect(tools.search('label a note')[0]).toMatchObject({ name: 'notes__set_tag' })
    expect(tools.search('label a note')[0]?.why).toContainEqual({
      field: 'name',
      term: 'tag',
      word: 'label',
      how: 'thesaurus',
    })
  })

  it('search_tools returns why to the model and renders it', async () => {
    const { tools } = await runtime()
    tools.register(tool('gh__merge_pull_request', 'Merge a pull request.'))
    const result = await tools.execute({
      callId: 'c',
      name: 'search_tools',
      arguments: { query: 'merge my PR', limit: 1 },
      signal,
    })
    expect(result.isError).toBe(false)
    const value = (result as unknown as { value: { tools: { name: string; why: unknown[] }[] } }).value
    expect(value.tools[0]?.why).toContainEqual({ field: 'name', term: 'merg', word: 'merge', how: 'word' })
    const text = JSON.stringify((result as unknown as { content: unknown }).content)
    expect(text).toContain('Matched: name: merg, pull (from pr), request (from pr); description:')
  })
})

describe('a pluggable ranker', () => {
  it('is fused with the full-text ranking: its own best match ranks even with no word in common', async () => {
    const seen: string[][] = []
    const ranker: ToolRanker = (query, docs) => {
      seen.push(docs.map((doc) => doc.name))
      return docs.map((doc) => (query === 'ship it' && doc.name === 'ci__deploy' ? 0.9 : 0))
    }
    const { tools } = await runtime({ ranker })
    tools.register(tool('ci__deploy', 'Roll out a build to production.'))
    tools.register(tool('gh__merge_pull_request', 'Merge a pull request.'))
    expect(tools.search('ship it').map((match) => match.name)).toEqual(['ci__deploy'])
    expect(seen.at(-1)?.sort()).toEqual(['ci__deploy', 'gh__merge_pull_request'])
    // A full-text match still ranks, and carries its why; the ranker's pick has none to give.
    const merged = tools.search('merge a pull request')
    expect(merged[0]?.name).toBe('gh__merge_pull_request')
    expect(merged[0]?.why.length).toBeGreaterThan(0)
  })

  it("ranks the ranker's positive finite scores best first, the earlier tool first among equals", async () => {
    const scores: Record<string, number> = {
      z__nan: Number.NaN,
      z__three_a: 3,
      z__zero: 0,
      z__three_b: 3,
      z__negative: -1,
      z__infinite: Number.POSITIVE_INFINITY,
      z__two: 2,
    }
    const { tools } = await runtime({ ranker: (_query, docs) => docs.map((doc) => scores[doc.name] ?? 0) })
    for (const name of Object.keys(scores)) tools.register(tool(name, 'Qqq.'))
    // No word of the request is in any tool: the order is the ranker's alone.
    expect(tools.search('xyzzy', { limit: 10 }).map((match) => match.name)).toEqual([
      'z__three_a',
      'z__three_b',
      'z__two',
    ])
  })

  it("takes the same options as toolSearch (the issue's spelling), and refuses both names at once", async () => {
    const scores: Record<string, number> = { z__low: 1, z__high: 5 }
    const ranker: ToolRanker = (_query, docs) => docs.map((doc) => scores[doc.name] ?? 0)
    const handle = await createToolRuntime({ mode: 'native', toolSearch: { ranker } })
    handles.push(handle)
    for (const name of Object.keys(scores)) handle.tools.register(tool(name, 'Qqq.'))
    expect(handle.tools.search('xyzzy', { limit: 10 }).map((match) => match.name)).toEqual(['z__high', 'z__low'])
    const error = await createToolRuntime({ mode: 'native', search: { ranker }, toolSearch: { ranker } }).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect(String((error as Error).message)).toMatch(/toolSearch.*not both/)
  })

  it('refuses a ranker that returns something other than a number for a document', async () => {
    const { tools } = await runtime({ ranker: (_query, docs) => docs.map((_, i) => (i === 1 ? '2' : 1)) as number[] })
    tools.register(tool('a__one', 'One.'))
    tools.register(tool('a__two', 'Two.'))
    expect(() => tools.search('one')).toThrow(/search\.ranker: expected 2 numbers/)
  })

  it('refuses a ranker that does not return one number per document', async () => {
    const { tools } = await runtime({ ranker: () => [1] })
    tools.register(tool('a__one', 'One.'))
    tools.register(tool('a__two', 'Two.'))
    expect(() => tools.search('one')).toThrow(/search\.ranker: expected 2 numbers/)
  })

  it("accepts 'text' and 'hybrid' (test/search/hybrid.test.ts), and refuses any other name", async () => {
    const error = await runtime({ ranker: 'semantic' as unknown as 'text' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect(String((error as Error).message)).toMatch(/search\.ranker: expected 'text', 'hybrid' or a function/)
    await expect(runtime({ ranker: 'text' })).resolves.toBeDefined()
    await expect(runtime({ ranker: 'hybrid', embeddingCache: false })).resolves.toBeDefined()
  })
})
