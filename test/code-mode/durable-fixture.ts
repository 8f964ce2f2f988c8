// A Code Mode turn whose program needs approval for some sub-calls, shared by the durable-program
// tests and the child process that resumes a stored state. Every tool body appends a line to a
// marker file, so how often each ran is visible across processes.
import { appendFileSync } from 'node:fs'
import { Context } from 'cordis'
import { CallbackApproval, createAgent, defineTool, SuspendingApproval, ToolRuntime } from '../../src/index.js'
import type { ModelReply, ModelRequest, ProviderModel } from '../../src/providers/index.js'

export const STATE_KEY = 'durable-programs-test-key-0123456789'

/** A model that calls run_code with `code` once, then answers "done". */
export function programModel(code: string): ProviderModel<'openai-chat'> {
  return {
    format: 'openai-chat',
    async generate(request: ModelRequest<'openai-chat'>): Promise<ModelReply<'openai-chat'>> {
      const messages = request.messages as unknown as { role: string }[]
      if (!messages.some((m) => m.role === 'assistant')) {
        const calls = [{ callId: 'call_p', name: 'run_code', arguments: { code, description: 'durable test' } }]
        const reply = {
          role: 'assistant',
          content: null,
          tool_calls: calls.map((c) => ({
            id: c.callId,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.arguments) },
          })),
        }
        return { messages: [reply], calls } as unknown as ModelReply<'openai-chat'>
      }
      return { messages: [{ role: 'assistant', content: 'done' }], calls: [] } as unknown as ModelReply<'openai-chat'>
    },
  }
}

/** `step` (runs at once) and `guarded` (asks for approval), each logging `<tool>:<n>` to `marker`. */
export async function setupProgramTurn(
  marker: string,
  approve: 'suspend' | 'allow' = 'suspend',
  /** `guarded` runs alone (not concurrency-safe), as an upstream tool without hints does in the gateway. */
  guardedAlone = false,
) {
  const ctx = new Context()
  const fiber = ctx.plugin(ToolRuntime, { mode: 'code', codeMode: { runtime: 'inline' } })
  await fiber
  // 'allow': a person who answers at once (an uninterrupted run), else every ask suspends.
  if (approve === 'allow') await ctx.plugin(CallbackApproval, { decide: () => ({ kind: 'allowed-once' }) })
  else await ctx.plugin(SuspendingApproval)
  const agent = createAgent(ctx, { id: 'agent-1' })
  const render = (_args: unknown, value: unknown) => [{ type: 'text' as const, text: JSON.stringify(value) }]
  for (const name of ['step', 'guarded']) {
    ctx.tools.register(
      defineTool({
        name,
        description: `The ${name} tool.`,
        parameters: { n: { type: 'integer', required: true } },
        output: { schema: { type: 'string' }, render },
        // Concurrency-safe, so the branches of a Promise.all overlap (and wait for approval together).
        isConcurrencySafe: () => !(guardedAlone && name === 'guarded'),
        execute: async ({ n }) => {
          appendFileSync(marker, `${name}:${n}\n`)
          return `${name} ${n} done`
        },
      }),
    )
  }
  ctx.on('tools/pre-execute', async (exec, next) =>
    exec.name === 'guarded' ? { kind: 'ask', reason: 'guarded needs a person' } : next(),
  )
  return { ctx, tools: ctx.tools, agent, dispose: () => fiber.dispose() }
}
