// The two tools the model-loop journal tests script calls to (issue 25 item 6): `look`, safe to
// run in parallel, and `write`, which asks for approval; each answers a line of text.
import { type createToolRuntime, defineTool } from '../../src/index.js'

const textOutput = {
  schema: { type: 'string' },
  render: (_args: unknown, text: string) => [{ type: 'text' as const, text }],
} as const

/** Registers `look` (`saw <path>`) and `write` (`wrote <path>`, after approval) with `tools`. */
export function registerLookAndWrite(tools: Awaited<ReturnType<typeof createToolRuntime>>['tools']): void {
  tools.register(
    defineTool({
      name: 'look',
      description: 'Look at a file.',
      output: textOutput,
      parameters: { path: { type: 'string', required: true } },
      isConcurrencySafe: () => true,
      execute: async ({ path }) => `saw ${path}`,
    }),
  )
  tools.register(
    defineTool({
      name: 'write',
      description: 'Write a file.',
      output: textOutput,
      parameters: { path: { type: 'string', required: true } },
      needsApproval: true,
      execute: async ({ path }) => `wrote ${path}`,
    }),
  )
}
