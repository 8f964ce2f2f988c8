// Issue 41 (Targets: the default ranker's speed): the full-text index is built in idle slices once
// the registrations settle, so the first search does not build it. A build in steps must give the
// index one build gives; a search that comes first builds the rest itself, never twice; and the
// rankings are the same warmed or not.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createToolRuntime, type ToolDefinition, type ToolRuntimeHandle } from '../../src/index.js'
import { idleBuild } from '../../src/search/idle-build.js'
import { TextSearchEngine } from '../../src/search/index.js'
import { until } from '../store/until.js'
import { definition, queries, real } from './recorded-tools.js'

const tools = () => real.map((tool) => definition(tool.name, tool.description, tool.inputSchema))

const all = () => true
/** Every match of every query: names, scores to the last bit, and what matched. */
const rankings = (search: (query: string) => readonly { name: string; score: number; why: unknown }[]) =>
  queries.map((query) => search(query).map(({ name, score, why }) => ({ name, score, why })))
const engineRankings = (engine: TextSearchEngine) =>
  rankings((query) =>
    engine.search(query, all, 20).map(({ definition, score, why }) => ({ name: definition.name, score, why })),
  )

const handles: ToolRuntimeHandle[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const handle of handles.splice(0)) await handle.dispose()
})

describe('building the full-text index in steps', () => {
  it('gives the index one build gives, with tools added and removed between the steps', () => {
    const definitions = tools()
    const stepped = new TextSearchEngine()
    const whole = new TextSearchEngine()
    const removed = new Set([3, 40, 41, 90])
    for (const [i, d] of definitions.entries()) {
      stepped.add(d)
      whole.add(d)
      // Steps between the adds, and removals of tools both indexed already and not yet.
      if (i % 25 === 24) expect(stepped.buildStep(7)).toBe(false)
      if (i === 60) for (const at of removed) stepped.remove(definitions[at] as ToolDefinition)
    }
    for (const at of removed) whole.remove(definitions[at] as ToolDefinition)
    while (!stepped.buildStep(5));
    expect(stepped.isBuilt).toBe(true)
    expect(engineRankings(stepped)).toEqual(engineRankings(whole))
    expect(stepped.buildsBySearch).toBe(0)
    expect(whole.buildsBySearch).toBe(1)
  })

  it('a search between two steps builds the rest itself, once; the idle build then has nothing left to do', async () => {
    const definitions = tools()
    const engine = new TextSearchEngine()
    const fresh = new TextSearchEngine()
    for (const d of definitions) {
      engine.add(d)
      fresh.add(d)
    }
    const warm = idleBuild(engine)
    warm.changed()
    expect(engine.buildStep(10)).toBe(false)
    const first = engineRankings(engine)
    expect(engine.buildsBySearch).toBe(1)
    await warm.done
    // Indexed once: a tool indexed twice would score twice over.
    expect(engineRankings(engine)).toEqual(first)
    expect(first).toEqual(engineRankings(fresh))
    expect(engine.buildsBySearch).toBe(1)
  })

  it('waits for the registrations to settle, does not start for an empty index, and stops when told', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] })
    try {
      const definitions = tools()
      const engine = new TextSearchEngine()
      const warm = idleBuild(engine)
      warm.changed()
      vi.runAllTimers()
      expect(engine.isBuilt).toBe(false)
      engine.add(definitions[0] as ToolDefinition)
      warm.changed()
      vi.advanceTimersByTime(200)
      // More tools before the pause is over: the build waits for them too.
      for (const d of definitions.slice(1)) {
        engine.add(d)
        warm.changed()
      }
      vi.advanceTimersByTime(200)
      expect(engine.isBuilt).toBe(false)
      vi.runAllTimers()
      expect(engine.isBuilt).toBe(true)
      expect(engine.buildsBySearch).toBe(0)

      const stopped = new TextSearchEngine()
      const halted = idleBuild(stopped)
      for (const d of definitions) stopped.add(d)
      halted.changed()
      halted.stop()
      halted.changed()
      vi.runAllTimers()
      expect(stopped.isBuilt).toBe(false)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('tool search builds its index in idle time', () => {
  it('the first search after the registrations settle finds the index built, and ranks as one built by it', async () => {
    const engines: TextSearchEngine[] = []
    const step = vi.spyOn(TextSearchEngine.prototype, 'buildStep')
    const searched = vi.spyOn(TextSearchEngine.prototype, 'search')
    const runtime = async () => {
      const handle = await createToolRuntime({ mode: 'native' })
      handles.push(handle)
      for (const d of tools()) handle.tools.register(d)
      return handle
    }
    const warmed = await runtime()
    const engine = await until(
      () =>
        step.mock.contexts.find(
          (of): of is TextSearchEngine => of instanceof TextSearchEngine && (of as TextSearchEngine).isBuilt,
        ),
      'the idle build',
    )
    engines.push(engine)
    const warmedRankings = rankings((query) => warmed.tools.search(query, { limit: 20 }))
    expect(engine.buildsBySearch).toBe(0)

    // Another runtime searched at once, before its idle build: the search builds the index.
    const cold = await runtime()
    const coldRankings = rankings((query) => cold.tools.search(query, { limit: 20 }))
    const coldEngine = searched.mock.contexts.find(
      (of): of is TextSearchEngine => of instanceof TextSearchEngine && !engines.includes(of as TextSearchEngine),
    )
    expect(coldEngine?.buildsBySearch).toBe(1)
    expect(warmedRankings).toEqual(coldRankings)
  }, 60_000)
})
