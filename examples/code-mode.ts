/**
 * Concept: Code Mode (docs/guide/code-mode.md). Instead of one tool call per step, the model
 * writes one TypeScript program that calls the tools as functions. The program runs in a
 * QuickJS sandbox, and every call it makes goes through the same pipeline and policies.
 *
 *   npx tsx examples/code-mode.ts
 */
import { createAgent, createToolRuntime, defineTool } from 'toolgate'

const { ctx, tools } = await createToolRuntime()
tools.register(
  defineTool({
    name: 'get_price',
    description: 'The price of a product in cents.',
    parameters: { sku: { type: 'string', required: true } },
    output: {
      schema: { type: 'integer' },
      render: (args, cents) => [{ type: 'text', text: `${args.sku}: ${cents}` }],
    },
    execute: async ({ sku }) => (sku === 'tea' ? 450 : sku === 'cake' ? 320 : 999),
    isConcurrencySafe: () => true,
  }),
)

// #region code-mode
const agent = createAgent(ctx, { id: 'shopper' })
agent.ctx.tools.presentAs('code') // this agent's model sees one tool, run_code

console.log(`the model sees: ${tools.schemas(agent).map((schema) => schema.name)}`)
console.log(tools.sdk(agent)) // the typed SDK the run_code description carries

// What a model might send: one program instead of three round trips.
const program = `
  const skus = ['tea', 'cake', 'scone']
  const prices = await Promise.all(skus.map((sku) => tools.get_price({ sku })))
  console.log('prices', prices.join(', '))
  return { total: prices.reduce((a, b) => a + b, 0) }
`
const result = await tools.execute({
  callId: 'c1',
  name: 'run_code',
  arguments: { code: program, description: 'Total the basket' },
  agent,
  signal: AbortSignal.timeout(60_000),
})
console.log(JSON.stringify(result.value))
// #endregion code-mode
await ctx.fiber.dispose()
