/**
 * Testing an agent offline: a fake OpenAI server from toolgate/testing, driven by a script of
 * turns, with the official `openai` client pointed at it; then the same agent streamed; then a
 * scripted model with no server at all. Plain `node:assert`, so it runs under any test runner.
 */
// #region imports
import assert from 'node:assert/strict'
import OpenAI from 'openai'
import { createAgent, createToolRuntime, defineTool } from 'toolgate'
import { runModelLoop, streamModelLoop } from 'toolgate/providers'
import { openAIChatModel } from 'toolgate/providers/openai'
import { scriptedModel, startFakeProvider } from 'toolgate/testing'

// #endregion imports

// #region agent
// The agent under test: one tool, and the loop that drives it.
async function createWeatherAgent() {
  const { ctx, tools } = await createToolRuntime()
  const agent = createAgent(ctx, { id: 'weather' })
  tools.register(
    defineTool({
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: { city: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
      execute: async ({ city }) => `Sunny in ${city}, 21 °C`,
    }),
  )
  return { tools, agent }
}
// #endregion agent

// #region fake
// Two turns: the model calls get_weather, then answers. Usage is optional (default 10 in, 5 out).
const fake = await startFakeProvider({
  format: 'openai-chat',
  turns: [
    {
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Lisbon' } }],
      usage: { inputTokens: 50, outputTokens: 12 },
    },
    { text: 'It is sunny in Lisbon.', usage: { inputTokens: 80, outputTokens: 6 } },
  ],
})
try {
  const { tools, agent } = await createWeatherAgent()
  const client = new OpenAI({ baseURL: fake.url, apiKey: 'test' })
  const run = await runModelLoop({
    tools,
    agent,
    model: openAIChatModel({ client, model: 'gpt-test' }),
    messages: [{ role: 'user', content: 'Weather in Lisbon?' }],
  })
  assert.equal(run.stopReason, 'done')
  assert.equal(run.messages.at(-1)?.content, 'It is sunny in Lisbon.')
  assert.equal(run.usage.inputTokens, 130) // summed over both requests
  assert.equal(run.usage.outputTokens, 18)
  // The fake recorded what the client sent: the second request carries the tool's result.
  assert.equal(fake.requests.length, 2)
  assert.match(JSON.stringify(fake.requests[1].body), /Sunny in Lisbon, 21 °C/)
  console.log(`fake server: ${run.stopReason}, ${run.usage.totalTokens} tokens, ${fake.requests.length} requests`)
} finally {
  await fake.close()
}
// #endregion fake

// #region stream
// The same script, streamed: the fake answers `stream: true` with server-sent events.
const streaming = await startFakeProvider({
  format: 'openai-chat',
  turns: [{ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'Snow in Oslo? No: sunny.' }],
})
try {
  const { tools, agent } = await createWeatherAgent()
  const client = new OpenAI({ baseURL: streaming.url, apiKey: 'test' })
  const kinds: string[] = []
  let text = ''
  for await (const event of streamModelLoop({
    tools,
    agent,
    model: openAIChatModel({ client, model: 'gpt-test' }),
    messages: [{ role: 'user', content: 'Weather in Oslo?' }],
  })) {
    if (kinds.at(-1) !== event.type) kinds.push(event.type)
    if (event.type === 'text-delta') text += event.text
  }
  assert.equal(text, 'Snow in Oslo? No: sunny.')
  assert.ok(streaming.requests.every((request) => request.stream))
  console.log(`streamed: ${kinds.join(' > ')}`)
} finally {
  await streaming.close()
}
// #endregion stream

// #region scripted
// No server: the scripted model answers the same kind of script in-process, in any format.
const { tools, agent } = await createWeatherAgent()
const model = scriptedModel({
  format: 'anthropic',
  turns: [{ toolCalls: [{ name: 'get_weather', arguments: { city: 'Porto' } }] }, 'Porto is sunny too.'],
})
const run = await runModelLoop({ tools, agent, model, messages: [{ role: 'user', content: 'And Porto?' }] })
assert.equal(run.stopReason, 'done')
assert.equal(model.requests.length, 2)
console.log(`scripted: ${run.stopReason} after ${run.steps.length} steps`)
// #endregion scripted
