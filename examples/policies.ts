/**
 * Concept: policies (docs/guide/policies.md). A policy is a listener on the pipeline: it can deny
 * a call, ask a person, guard what an agent may do, rewrite or block a result, and cap its size.
 *
 *   npx tsx examples/policies.ts
 */
import { createAgent, createToolRuntime, defineTool, ResultBudget } from 'toolgate'

const { ctx, tools } = await createToolRuntime({ approval: () => ({ kind: 'denied', reason: 'nobody is around' }) })
tools.register(
  defineTool({
    name: 'fetch_page',
    description: 'Fetch a web page.',
    parameters: { url: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, html) => [{ type: 'text', text: html }] },
    execute: async ({ url }) => (url.includes('big') ? 'x'.repeat(5_000) : `<p>page at ${url}</p> token=sk-123`),
  }),
)
const agent = createAgent(ctx, { id: 'browser' })

// #region policies
// 1. Decide before the call: allow (next), deny, or ask the approval service.
ctx.on('tools/pre-execute', async (exec, next) => {
  const url = String((exec.arguments as { url?: string }).url)
  if (url.startsWith('http://')) return { kind: 'deny', reason: 'plain http is not allowed' }
  if (url.includes('.internal')) return { kind: 'ask', reason: 'an internal host' }
  return next()
})

// 2. A guard: a synchronous rule for one agent's scope; a returned string denies.
agent.ctx.tools.guard((exec) => (JSON.stringify(exec.arguments).includes('admin') ? 'no admin pages' : undefined))

// 3. After the call: accept, replace the content (or the value), or block the result.
ctx.on('tools/post-execute', async (_exec, result, next) => {
  const text = JSON.stringify(result.content)
  if (text.includes('sk-')) {
    const redacted = result.content.map((block) =>
      block.type === 'text' ? { ...block, text: block.text.replace(/sk-\w+/g, '[redacted]') } : block,
    )
    return { kind: 'accept', content: redacted }
  }
  return next()
})

// 4. A size budget for what the model reads (the full value stays in result.value).
await ctx.plugin(ResultBudget, { maxBytes: 2_048 })
// #endregion policies

for (const url of [
  'https://example.com',
  'http://example.com',
  'https://wiki.internal',
  'https://example.com/admin',
  'https://example.com/big',
]) {
  const result = await tools.execute({
    callId: url,
    name: 'fetch_page',
    arguments: { url },
    agent,
    signal: AbortSignal.timeout(5_000),
  })
  const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  console.log(`${url}: ${result.isError ? result.error.info?.code : 'ok'} ${text.slice(0, 60)} (${text.length} chars)`)
}
await ctx.fiber.dispose()
