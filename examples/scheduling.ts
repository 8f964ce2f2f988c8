/**
 * Concept: scheduling (docs/guide/scheduling.md). A model turn often asks for several calls at
 * once; executeBatch runs them in call order, overlapping the ones that are safe to overlap.
 *
 *   npx tsx examples/scheduling.ts
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createToolRuntime, defineTool, executeBatch } from 'toolgate'

const { ctx, tools } = await createToolRuntime()
const events: string[] = []
const tool = (name: string, safe: boolean) =>
  defineTool({
    name,
    description: `${name} a file.`,
    parameters: { path: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
    execute: async ({ path }) => {
      events.push(`start ${name} ${path}`)
      await sleep(50)
      events.push(`end   ${name} ${path}`)
      return `${name} ${path}`
    },
    // Reads may overlap; anything else runs alone, after everything before it.
    isConcurrencySafe: () => safe,
  })
tools.register(tool('read', true))
tools.register(tool('write', false))

// #region batch
const signal = AbortSignal.timeout(60_000)
const turn = [
  { callId: '1', name: 'read', arguments: { path: 'a' }, signal },
  { callId: '2', name: 'read', arguments: { path: 'b' }, signal },
  { callId: '3', name: 'write', arguments: { path: 'c' }, signal }, // waits for 1 and 2; 4 waits for it
  { callId: '4', name: 'read', arguments: { path: 'd' }, signal },
]
const batch = await executeBatch(tools, turn, { maxParallel: 4 })
console.log(events.join('\n'))
// One result per call, in call order, whatever failed.
console.log(batch.results.map((entry) => `${entry.call.callId}:${entry.mode.kind}`).join(' '))
// #endregion batch
await ctx.fiber.dispose()
