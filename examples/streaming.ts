/**
 * Streaming a turn (docs/guide/providers.md, "Streaming"): streamModelLoop takes runModelLoop's
 * options and yields what happens as it happens. The scripted model from toolgate/testing stands
 * in for a real one (every SDK adapter streams the same way).
 */
import { createAgent, createToolRuntime, defineTool } from 'toolgate'
import { streamModelLoop } from 'toolgate/providers'
import { scriptedModel } from 'toolgate/testing'

const { ctx, tools } = await createToolRuntime()
const agent = createAgent(ctx, { id: 'ui' })
tools.register(
  defineTool({
    name: 'count_words',
    description: 'Count the words of a text.',
    parameters: { text: { type: 'string', required: true } },
    output: { schema: { type: 'number' }, render: (_args, n) => [{ type: 'text', text: String(n) }] },
    execute: async ({ text }, exec) => {
      exec.progress({ message: 'counting', fraction: 0.5 })
      return text.split(/\s+/).filter(Boolean).length
    },
  }),
)
const model = scriptedModel({
  format: 'openai-responses',
  turns: [
    {
      reasoning: 'A word count: use the tool.',
      text: 'Let me count.',
      toolCalls: [{ name: 'count_words', arguments: { text: 'the quick brown fox' } }],
    },
    { text: 'Four words.' },
  ],
})

// #region stream
const out: string[] = []
for await (const event of streamModelLoop({
  tools,
  agent,
  model,
  messages: [{ role: 'user', content: 'How many words in "the quick brown fox"?' }],
})) {
  switch (event.type) {
    case 'reasoning-delta': // only where the provider sends reasoning
    case 'text-delta':
      out.push(event.text)
      break
    case 'tool-call-delta': // the arguments as the model writes them
      if (event.name !== undefined) out.push(`\n[${event.name}(`)
      out.push(event.argumentsDelta)
      break
    case 'tool-start':
      out.push(`)]\n${event.call.name} running`)
      break
    case 'tool-progress':
      out.push(` (${event.progress.message})`)
      break
    case 'tool-result':
      out.push(` -> ${event.result.isError ? event.result.error.message : JSON.stringify(event.result.value)}\n`)
      break
    case 'step-end':
      out.push(`\n-- step ${event.step}: ${event.usage?.totalTokens ?? '?'} tokens\n`)
      break
    case 'done':
      out.push(`stop: ${event.stopReason}, ${event.usage.totalTokens} tokens in all`)
      break
  }
}
console.log(out.join(''))
// #endregion stream
