/**
 * Concept: agents and scopes (docs/guide/agents-and-scopes.md). Every agent sees the global tools,
 * minus what its restrictions hide, plus what was registered in its own scope. Child agents
 * inherit from their parent.
 *
 *   npx tsx examples/agents-and-scopes.ts
 */
import { createAgent, createToolRuntime, defineTool } from 'toolgate'

const echo = (name: string) =>
  defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: {},
    output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
    execute: async () => `${name} ran`,
  })

// #region scopes
await using runtime = await createToolRuntime()
const { ctx, tools } = runtime
tools.register(echo('read_file')) // global: every agent sees it unless restricted
tools.register(echo('write_file'))
tools.register(echo('bash'))

const lead = createAgent(ctx, { id: 'lead' })
lead.ctx.tools.register(echo('plan')) // only `lead` and its children see `plan`

const reviewer = createAgent(lead.ctx, { id: 'reviewer' }) // a child of `lead`
reviewer.ctx.tools.restrict({ deny: ['write_file', 'bash'] }) // the reviewer only reads

const names = (agent?: typeof lead) =>
  tools
    .schemas(agent)
    .map((schema) => schema.name)
    .join(', ')
console.log(`global:   ${names()}`)
console.log(`lead:     ${names(lead)}`)
console.log(`reviewer: ${names(reviewer)}`)

// A call runs as an agent: what the agent cannot see does not exist for it.
const denied = await tools.execute({
  callId: 'c1',
  name: 'bash',
  arguments: {},
  agent: reviewer,
  signal: AbortSignal.timeout(5_000),
})
console.log(`reviewer calls bash: ${denied.error?.info?.code}`)

await reviewer.dispose() // its restriction goes with it
await lead.dispose() // and so does `plan`
console.log(`global after dispose: ${names()}`)
// #endregion scopes
