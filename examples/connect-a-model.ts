/**
 * Recipe: connect a real model (docs/guide/recipes/connect-a-model.md). Any OpenAI-compatible
 * endpoint works: OpenAI, vLLM, llama.cpp, Ollama, ... (Anthropic, Gemini and the AI SDK have
 * adapters of the same shape).
 *
 *   npm install openai
 *   OPENAI_API_KEY=sk-... MODEL=gpt-5-mini npx tsx examples/connect-a-model.ts
 *   OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=unused MODEL=qwen3:8b npx tsx examples/connect-a-model.ts
 */
import OpenAI from 'openai'
import { createAgent, createToolRuntime, defineTool } from 'toolgate'
import { runModelLoop } from 'toolgate/providers'
import { openAIChatModel } from 'toolgate/providers/openai'

// #region connect
await using runtime = await createToolRuntime({
  approval: 'terminal', // asks y/N on this terminal (and denies when there is none)
  defaultTimeoutMs: 30_000,
})
runtime.tools.register(
  defineTool({
    name: 'get_time',
    description: 'The current UTC time in a city, as HH:MM.',
    parameters: { city: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (args, time) => [{ type: 'text', text: `${args.city}: ${time}` }] },
    execute: async () => new Date().toISOString().slice(11, 16),
  }),
)
const agent = createAgent(runtime.ctx, { id: 'main' })

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY })
const turn = await runModelLoop({
  tools: runtime.tools,
  agent,
  model: openAIChatModel({ client, model: process.env.MODEL ?? 'gpt-5-mini' }),
  messages: [{ role: 'user', content: 'What time is it in Lisbon?' }],
  onEvent: (event) => {
    if (event.type === 'tool-start') console.log(`→ ${event.call.name} ${JSON.stringify(event.call.arguments)}`)
  },
})
console.log(`stop: ${turn.stopReason}`)
console.log(turn.messages.at(-1)?.content)
// #endregion connect
