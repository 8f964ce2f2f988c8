/**
 * Recipe: use another MCP server's tools (docs/guide/recipes/serve-over-mcp.md). Starts
 * examples/serve-mcp.ts as a child process, registers its tools under a prefix, and calls one
 * through this runtime's own pipeline, where local policies (here a deny rule) apply to remote tools.
 *
 *   npx tsx examples/use-mcp-server.ts
 */
import { fileURLToPath } from 'node:url'
import { createToolRuntime } from 'toolgate'
import { connectMcpServer } from 'toolgate/mcp'

// #region connect
await using runtime = await createToolRuntime()
const { ctx, tools } = runtime
const server = fileURLToPath(new URL('./serve-mcp.ts', import.meta.url))
const connection = await connectMcpServer(
  ctx,
  { command: process.execPath, args: ['--import', 'tsx', server], cwd: fileURLToPath(new URL('..', import.meta.url)) },
  { prefix: 'calc__' },
)
console.log(`registered: ${connection.tools.join(', ')}`)

// A local policy on a remote tool: the pipeline is the same for every registration.
ctx.on('tools/pre-execute', async (exec, next) =>
  exec.name === 'calc__word_count' ? { kind: 'deny', reason: 'not today' } : next(),
)
for (const [name, args] of [
  ['calc__add', { a: 20, b: 22 }],
  ['calc__word_count', { text: 'one two three' }],
] as const) {
  const result = await tools.execute({ callId: name, name, arguments: args, signal: AbortSignal.timeout(60_000) })
  const text = result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join(' ')
  console.log(`${name}: ${result.isError ? result.error.info?.code : 'ok'} ${text}`)
}
await connection.close()
// #endregion connect
