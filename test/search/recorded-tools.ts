// The recorded tool listings and queries the search benchmarks use (bench/fixtures), for the
// tests that check the index on real tools, and the plain definition those tests register.
import { readFileSync } from 'node:fs'
import type { ToolDefinition } from '../../src/index.js'

interface Recorded {
  name: string
  description: string
  inputSchema: unknown
}
const servers = JSON.parse(
  readFileSync(new URL('../../bench/fixtures/mcp-tools.json', import.meta.url), 'utf8'),
) as Record<string, Recorded[]>

/** Every recorded tool, named `<server>__<tool>`, in the recording's order. */
export const real = Object.entries(servers).flatMap(([server, tools]) =>
  tools.map((tool) => ({ ...tool, name: `${server}__${tool.name}` })),
)

/** The benchmark's queries, in its order. */
export const queries = (
  JSON.parse(readFileSync(new URL('../../bench/fixtures/tool-search-queries.json', import.meta.url), 'utf8')) as {
    query: string
  }[]
).map((entry) => entry.query)

/** A tool with this name, description and parameters whose body and rendering do nothing. */
export function definition(name: string, description: string, parameters: unknown = {}): ToolDefinition {
  return {
    name,
    description,
    parameters: parameters as ToolDefinition['parameters'],
    output: { schema: {}, render: () => [] },
    execute: async () => null,
  }
}
