/**
 * Concept: the pipeline and its events (docs/guide/pipeline.md). Every call goes through the same
 * steps, and each step is an event you can listen to: observers see, waterfalls decide.
 *
 *   npx tsx examples/pipeline.ts
 */
import { createToolRuntime, defineTool } from 'toolgate'

const { ctx, tools } = await createToolRuntime()
tools.register(
  defineTool({
    name: 'lookup',
    description: 'Look a word up.',
    parameters: { word: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
    execute: async ({ word }, exec) => {
      exec.progress({ message: 'searching', fraction: 0.5 })
      return `${word}: a word`
    },
  }),
)

// #region events
const log = (line: string) => console.log(`  ${line}`)
ctx.on('tools/call', (exec) => log(`call         ${exec.name} ${JSON.stringify(exec.arguments)}`))
// Waterfalls: answer, or pass on with next().
ctx.on('tools/pre-execute', async (exec, next) => {
  log(`pre-execute  allow, deny or ask (${exec.callId})`)
  return next()
})
ctx.on('tools/execute', async (exec, next) => {
  log(`execute      around the body: timeouts, tracing (${exec.signal.aborted ? 'aborted' : 'live'})`)
  return next()
})
ctx.on('tools/progress', (_exec, progress) => log(`progress     ${progress.message} ${progress.fraction}`))
ctx.on('tools/post-execute', async (_exec, result, next) => {
  log(`post-execute accept, replace or block (isError: ${result.isError})`)
  return next()
})
ctx.on('tools/finalize-content', () => {
  log('finalize     last look at what the model will read')
  return undefined // keep the content
})
ctx.on('tools/result', (_exec, result) => log(`result       ${JSON.stringify(result.content)}`))
// #endregion events

console.log('lookup:')
await tools.execute({ callId: 'c1', name: 'lookup', arguments: { word: 'gate' }, signal: AbortSignal.timeout(5_000) })
await ctx.fiber.dispose()
