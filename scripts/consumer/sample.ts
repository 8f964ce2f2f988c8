// A consumer's view of the packed toolgate: compiled under NodeNext, Node16 and Bundler with
// skipLibCheck off, and no @types/node or DOM lib of its own. Every line must type-check.
import { Context } from 'cordis'
import {
  CallbackApproval,
  createAgent,
  createToolRuntime,
  defineTool,
  type StandardJsonSchema,
  TimeoutPolicy,
  type ToolExecutionResult,
  ToolRuntime,
  terminalApproval,
} from 'toolgate'
import { renderToolResultLines } from 'toolgate/presentation'

const add = defineTool({
  name: 'add',
  description: 'Add two integers.',
  parameters: {
    a: { type: 'integer', required: true },
    b: { type: 'integer', required: true },
  },
  output: {
    schema: { type: 'object', properties: { sum: { type: 'integer', required: true } }, additionalProperties: false },
    render: (args, value) => [{ type: 'text', text: `${args.a} + ${args.b} = ${value.sum}` }],
  },
  // defineTool infers args as { a: number; b: number } and checks the return against the output schema.
  execute: async ({ a, b }) => ({ sum: a + b }),
})

defineTool({
  name: 'bad',
  description: 'The inferred output type is enforced.',
  parameters: { a: { type: 'integer', required: true } },
  output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
  // @ts-expect-error: execute must return the output schema's type (string), not a number
  execute: async ({ a }) => a,
})

// Any Standard JSON Schema (zod 4, arktype, valibot's toStandardJsonSchema) types execute from its output type.
const point: StandardJsonSchema<{ x: number }> = {
  '~standard': {
    version: 1,
    vendor: 'sample',
    jsonSchema: {
      input: () => ({ type: 'object', properties: { x: { type: 'number' } }, required: ['x'] }),
      output: () => ({ type: 'object', properties: { x: { type: 'number' } }, required: ['x'] }),
    },
  },
}
defineTool({
  name: 'negate',
  description: 'Negate x.',
  parameters: point,
  output: { schema: { type: 'number' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
  execute: async ({ x }) => -x,
})
defineTool({
  name: 'bad_negate',
  description: 'The Standard Schema output type is enforced.',
  parameters: point,
  output: { schema: { type: 'number' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
  // @ts-expect-error: x is a number, not a string
  execute: async ({ x }) => x.toUpperCase(),
})

export async function main(): Promise<ToolExecutionResult> {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime, { mode: 'native' })
  await ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: 1000 })
  await ctx.plugin(CallbackApproval, { decide: () => ({ kind: 'allowed-once' }) })
  const seen: string[] = []
  ctx.on('tools/result', (exec, result) => {
    const name: string = exec.name
    const failed: boolean = result.isError
    seen.push(`${name}:${failed}`)
    // @ts-expect-error: listener parameters are typed from toolgate's events, not any
    void exec.noSuchField
  })
  ctx.on('tools/pre-execute', async (exec, next) => {
    if (exec.name === 'never') return { kind: 'deny', reason: 'not here' }
    return next()
  })
  ctx.tools.register(add)
  // @ts-expect-error: ctx.tools is the typed service
  ctx.tools.register('add')
  const agent = createAgent(ctx, { id: 'main' })
  agent.ctx.tools.restrict({ deny: ['add'] })
  const result = await ctx.tools.execute({
    callId: 'c1',
    name: 'add',
    arguments: { a: 1, b: 2 },
    signal: new AbortController().signal,
  })
  const lines: string[] = renderToolResultLines({ card: 'generic', content: result.content })
  void lines
  {
    // The runtime and agents are async-disposable.
    // Plain policies: an approval callback and a default deadline, no Cordis idioms.
    await using standalone = await createToolRuntime({
      approval: (request) => (request.toolName === 'add' ? { kind: 'allowed-once' } : { kind: 'denied', reason: 'no' }),
      defaultTimeoutMs: 5000,
    })
    standalone.tools.register(add)
    standalone.tools.register(
      defineTool({
        name: 'halve',
        description: 'Halve an integer; asks before halving large ones.',
        parameters: { n: { type: 'integer', required: true } },
        output: { schema: { type: 'number' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
        // The predicate's args are typed from the parameters.
        needsApproval: ({ n }) => (n > 1000 ? `halve ${n}?` : false),
        execute: async ({ n }) => n / 2,
      }),
    )
    // A terminal decider on any streams, typed without @types/node.
    await using asked = await createToolRuntime({ approval: terminalApproval({ interactive: false }) })
    void asked
    await using scoped = createAgent(standalone.ctx, { id: 'scoped' })
    scoped.ctx.tools.register(add)
  }
  return result
}
