/**
 * Recipe: serve toolgate's tools over MCP (docs/guide/recipes/serve-over-mcp.md). Any MCP client
 * (an IDE, a desktop app, examples/use-mcp-server.ts) can start this file and call `add` and
 * `word_count` through toolgate's pipeline and policies.
 *
 *   npx tsx examples/serve-mcp.ts          # speaks MCP on stdin/stdout
 */
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import { createAgent, createToolRuntime, defineTool } from 'toolgate'
import { createMcpServer } from 'toolgate/mcp'

// #region serve
const { ctx, tools } = await createToolRuntime({ defaultTimeoutMs: 30_000 })
tools.register(
  defineTool({
    name: 'add',
    description: 'Add two integers.',
    parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
    output: {
      schema: { type: 'integer' },
      render: (args, sum) => [{ type: 'text', text: `${args.a} + ${args.b} = ${sum}` }],
    },
    execute: async ({ a, b }) => a + b,
  }),
)
tools.register(
  defineTool({
    name: 'word_count',
    description: 'Count the words of a text.',
    parameters: { text: { type: 'string', required: true } },
    output: { schema: { type: 'integer' }, render: (_args, count) => [{ type: 'text', text: `${count} words` }] },
    execute: async ({ text }) => text.split(/\s+/).filter(Boolean).length,
  }),
)
// The MCP client sees what this agent sees: restrict it, add policies on agent.ctx, and so on.
const agent = createAgent(ctx, { id: 'mcp-client' })
const server = createMcpServer(ctx, { agent, name: 'toolgate-example', version: '1.0.0' })
await server.connect(new StdioServerTransport())
// #endregion serve
