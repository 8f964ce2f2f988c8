/**
 * Recipe: give tools a deadline (docs/guide/recipes/add-a-timeout.md).
 *
 *   npx tsx examples/add-timeout.ts
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createToolRuntime, defineTool } from 'toolgate'

// #region tools
const slowSearch = defineTool({
  name: 'slow_search',
  description: 'Search an index that is sometimes slow.',
  parameters: { query: { type: 'string', required: true }, delayMs: { type: 'integer', required: true } },
  output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
  timeoutMs: 2_000, // this tool's own deadline
  // The body must observe exec.signal: the deadline aborts it, and the call then ends as TOOL_TIMEOUT.
  execute: async ({ query, delayMs }, exec) => {
    await sleep(delayMs, undefined, { signal: exec.signal })
    return `3 hits for "${query}"`
  },
})

const crawl = defineTool({
  name: 'crawl',
  description: 'Crawl pages, reporting progress after each one.',
  parameters: { pages: { type: 'integer', required: true }, stallAt: { type: 'integer' } },
  output: { schema: { type: 'integer' }, render: (_args, count) => [{ type: 'text', text: `${count} pages` }] },
  idleTimeoutMs: 1_000, // no fixed deadline: it may run as long as it keeps reporting progress
  execute: async ({ pages, stallAt }, exec) => {
    for (let page = 1; page <= pages; page++) {
      await sleep(page === stallAt ? 5_000 : 150, undefined, { signal: exec.signal })
      exec.progress({ message: `page ${page}`, fraction: page / pages })
    }
    return pages
  },
})
// #endregion tools

// #region runtime
// defaultTimeoutMs applies to tools that declare no timeoutMs (or idleTimeoutMs) of their own.
await using runtime = await createToolRuntime({ defaultTimeoutMs: 10_000 })
runtime.tools.register(slowSearch)
runtime.tools.register(crawl)

const calls = [
  { name: 'slow_search', arguments: { query: 'bees', delayMs: 10 } },
  { name: 'slow_search', arguments: { query: 'wasps', delayMs: 5_000 } },
  { name: 'crawl', arguments: { pages: 10 } }, // 10 × 150 ms: longer than 1 s, but never idle
  { name: 'crawl', arguments: { pages: 10, stallAt: 3 } },
]
for (const [i, call] of calls.entries()) {
  const result = await runtime.tools.execute({ callId: `call-${i}`, ...call, signal: AbortSignal.timeout(60_000) })
  const outcome = result.isError ? result.error.info?.code : JSON.stringify(result.value)
  console.log(`${call.name} ${JSON.stringify(call.arguments)} -> ${outcome}`)
}
// #endregion runtime
