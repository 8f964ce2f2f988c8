// Issue 27 item 4: the first request's tool payload for 200 aggregated tools, every one deferred,
// with toolgate's search_tools and with each provider's native tool search: the bytes the request
// body carries, and what of it enters the model's context before any search.
//
//   npm run build && npx tsx bench/native-search.bench.ts
import { readFileSync } from 'node:fs'
import { isMain, loadBuilt } from './util.js'

const { createAgent, createToolRuntime } = await loadBuilt()
const { deferredSchemas, toProviderTools } = (await import(
  new URL('../dist/providers/index.js', import.meta.url).href
)) as typeof import('../src/providers/index.js')

interface Recorded {
  name: string
  description?: string
  inputSchema?: unknown
}
const servers = JSON.parse(readFileSync(new URL('./fixtures/mcp-tools.json', import.meta.url), 'utf8')) as Record<
  string,
  Recorded[]
>
const real = Object.entries(servers).flatMap(([server, list]) =>
  list.map((tool) => ({ ...tool, name: `${server}__${tool.name}` })),
)

export async function run(): Promise<void> {
  const handle = await createToolRuntime()
  const { ctx, tools } = handle
  for (let i = 0; i < 200; i++) {
    const tool = real[i % real.length]
    tools.register({
      name: i < real.length ? tool.name : `m${Math.floor(i / real.length)}_${tool.name}`,
      description: tool.description ?? '',
      parameters: (tool.inputSchema ?? { type: 'object' }) as never,
      output: { schema: {}, render: () => [] },
      execute: async () => null,
    })
  }
  const agent = createAgent(ctx, { id: 'a' })
  tools.defer(['*'], agent)
  const schemas = tools.schemas(agent)
  const deferred = deferredSchemas(tools, agent)
  const chars = (value: unknown) => JSON.stringify(value).length
  const tokens = (n: number) => `${n.toLocaleString('en')} chars ≈ ${Math.round(n / 4).toLocaleString('en')} tokens`
  // OpenAI shows a deferred function's name and description up front (only its parameters wait).
  const namesAndDescriptions = chars(deferred.map(({ name, description }) => ({ name, description })))
  console.log('\n## First request tool payload, 200 deferred tools, native tool search\n')
  for (const format of ['anthropic', 'openai-responses'] as const) {
    const toolgate = toProviderTools(format, schemas, { toolSearch: 'toolgate' })
    const native = toProviderTools(format, schemas, { toolSearch: 'native', deferred })
    const loaded = native.tools.filter((tool) => (tool as { defer_loading?: boolean }).defer_loading !== true)
    console.log(`- ${format}, search_tools: body and context ${tokens(chars(toolgate.tools))}`)
    console.log(`- ${format}, native: body ${tokens(chars(native.tools))}; not deferred ${tokens(chars(loaded))}`)
  }
  console.log(`- names and descriptions of the 200: ${tokens(namesAndDescriptions)}`)
  await handle.dispose()
}

if (isMain(import.meta.url)) await run()
