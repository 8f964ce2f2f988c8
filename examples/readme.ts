import { createToolRuntime, defineTool } from 'toolgate'

export const add = defineTool({
  name: 'add',
  description: 'Add two integers.',
  parameters: {
    a: { type: 'integer', required: true, description: 'first addend' },
    b: { type: 'integer', required: true, description: 'second addend' },
  },
  output: {
    schema: {
      type: 'object',
      properties: { sum: { type: 'integer', required: true } },
      additionalProperties: false,
    },
    render: (args, value) => [{ type: 'text', text: `${args.a} + ${args.b} = ${value.sum}` }],
  },
  // `args` is { a: number; b: number }; the return type is checked against the output schema.
  execute: async ({ a, b }) => ({ sum: a + b }),
  isConcurrencySafe: () => true,
})

export async function main() {
  const { tools } = await createToolRuntime()
  tools.register(add)
  return tools.execute({
    callId: 'call-1',
    name: 'add',
    arguments: { a: 2, b: 3 },
    signal: new AbortController().signal,
  })
}
