/**
 * Concept: tool search (docs/guide/tool-search.md). Deferred tools stay callable but leave the
 * model's tool list; the model finds them with search_tools, which loads them for its agent.
 *
 *   npx tsx examples/tool-search.ts
 */
import { createAgent, createToolRuntime, defineTool } from 'toolgate'
import { deferredSchemas, toProviderTools } from 'toolgate/providers'

const { ctx, tools, dispose } = await createToolRuntime()
const tool = (name: string, description: string) =>
  defineTool({
    name,
    description,
    parameters: { number: { type: 'integer', required: true } },
    output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
    execute: async ({ number }) => `${name} #${number} done`,
  })
tools.register(tool('github__merge_pull_request', 'Merge a pull request.'))
tools.register(tool('github__create_issue', 'Create a new issue in a repository.'))
tools.register(tool('get_time', 'The current time.'))

// #region defer
const agent = createAgent(ctx, { id: 'assistant' })
tools.defer(['github__*'], agent) // deferred for this agent (and its child agents)
console.log(`listed: ${tools.schemas(agent).map((schema) => schema.name)}`)
console.log(`search: ${tools.search('merge a PR', { agent, limit: 1 }).map((match) => match.name)}`)

// What the model does: call search_tools; the matches are loaded for this agent.
const found = await tools.execute({
  callId: 'c1',
  name: 'search_tools',
  arguments: { query: 'merge a pull request', limit: 1 },
  agent,
  signal: new AbortController().signal,
})
console.log(`search_tools ok: ${!found.isError}`)
console.log(`listed now: ${tools.schemas(agent).map((schema) => schema.name)}`)
// #endregion defer

// #region code-mode-search
const coder = createAgent(ctx, { id: 'coder' })
coder.ctx.tools.presentAs('code')
tools.defer(['github__*'], coder)
const program = `
  const signatures = await tools.$search('open an issue')
  console.log(signatures.includes('github__create_issue'))
  return await tools.github__create_issue({ number: 7 })
`
const run = await tools.execute({
  callId: 'c2',
  name: 'run_code',
  arguments: { description: 'find and call', code: program },
  agent: coder,
  signal: new AbortController().signal,
})
console.log(run.isError ? 'run failed' : `program returned: ${JSON.stringify(run.value)}`)
// #endregion code-mode-search

// #region native-search
// A provider's own tool search instead of search_tools: the deferred tools go out to load on demand.
const writer = createAgent(ctx, { id: 'writer' })
tools.defer(['github__*'], writer)
const request = toProviderTools('anthropic', tools.schemas(writer), {
  toolSearch: 'native',
  deferred: deferredSchemas(tools, writer),
})
console.log(`anthropic tools: ${request.tools.map((tool) => tool.name)}`)
console.log(request.downgrades.at(-1))
// anthropicModel({ client, model, toolSearch: 'native' }) does the same on every request of a loop.
// #endregion native-search
// #region why
const [best] = tools.search('merge my PR')
console.log(
  `why: ${best?.why.map((reason) => `${reason.field}:${reason.term}<-${reason.word} (${reason.how})`).join(', ')}`,
)
// #endregion why

// #region ranker
// Your own ranker, fused with the built-in ranking: a toy word table stands in for an embedding model.
const related: Record<string, string> = { ship: 'deploy', release: 'deploy' }
const hybrid = await createToolRuntime({
  search: {
    ranker: (query, docs) =>
      docs.map((doc) => (query.split(' ').some((word) => doc.name.includes(related[word] ?? '\0')) ? 1 : 0)),
  },
})
hybrid.tools.register(tool('ci__deploy', 'Roll out a build to production.'))
hybrid.tools.register(tool('github__create_issue', 'Create a new issue in a repository.'))
console.log(`ranker: ${hybrid.tools.search('ship it', { limit: 1 }).map((match) => match.name)}`)
await hybrid.dispose()
// #endregion ranker
await dispose()
