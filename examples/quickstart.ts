/**
 * The fifteen-minute path (docs/guide/getting-started.md): two tools, a runtime with an approval
 * service and a default deadline, an agent, and one model turn through the model loop.
 *
 * The model is scripted so that this file runs anywhere without a key: it asks for the weather,
 * then to send an email (which needs approval), then answers. examples/connect-a-model.ts swaps
 * in a real model.
 *
 *   npx tsx examples/quickstart.ts
 */
// #region imports
import { createAgent, createToolRuntime, defineTool } from 'toolgate'
import { runModelLoop } from 'toolgate/providers'
import { scriptedModel } from 'toolgate/testing'

// #endregion imports

// #region tools
const getWeather = defineTool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: { city: { type: 'string', required: true, description: 'city name' } },
  output: {
    schema: { type: 'string' },
    render: (_args, forecast) => [{ type: 'text', text: forecast }],
  },
  execute: async ({ city }) => `Sunny in ${city}, 21 °C`,
  isConcurrencySafe: () => true, // may run in parallel with other safe calls
})

const sendEmail = defineTool({
  name: 'send_email',
  description: 'Send an email.',
  parameters: {
    to: { type: 'string', required: true },
    body: { type: 'string', required: true },
  },
  output: {
    schema: { type: 'object', properties: { sent: { type: 'boolean', required: true } }, additionalProperties: false },
    render: (args) => [{ type: 'text', text: `Sent to ${args.to}.` }],
  },
  needsApproval: true, // every call goes to the approval service first
  timeoutMs: 5_000, // and gets at most five seconds
  execute: async ({ to }, exec) => {
    // A real body would pass exec.signal to fetch(); the deadline aborts it.
    exec.signal.throwIfAborted()
    return { sent: to.endsWith('@example.com') }
  },
})
// #endregion tools

// #region runtime
await using runtime = await createToolRuntime({
  // Called for every call that needs approval; answer with plain JSON.
  approval: (request) =>
    request.toolName === 'send_email' && JSON.stringify(request.arguments).includes('@example.com')
      ? { kind: 'allowed-once' }
      : { kind: 'denied', reason: 'only @example.com addresses' },
  defaultTimeoutMs: 30_000, // tools that declare no timeoutMs of their own
})
const { ctx, tools } = runtime
tools.register(getWeather)
tools.register(sendEmail)
const agent = createAgent(ctx, { id: 'assistant' })
// #endregion runtime

// #region model
// Scripted so this file runs offline; examples/connect-a-model.ts uses a real one.
const model = scriptedModel({
  turns: [
    { toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Lisbon' } }] },
    {
      toolCalls: [
        { id: 'c2', name: 'send_email', arguments: { to: 'ana@example.com', body: 'Sunny, 21 °C' } },
        { id: 'c3', name: 'send_email', arguments: { to: 'bob@elsewhere.org', body: 'Sunny, 21 °C' } },
      ],
    },
    'It is sunny in Lisbon. I emailed Ana; Bob is not on an allowed domain.',
  ],
})
// #endregion model

// #region turn
const turn = await runModelLoop({
  tools,
  agent,
  model,
  messages: [{ role: 'user', content: 'What is the weather in Lisbon? Email it to Ana and Bob.' }],
  onEvent: (event) => {
    if (event.type !== 'tool-result') return
    const { call, result } = event
    console.log(`${call.name} ${JSON.stringify(call.arguments)}: ${result.isError ? result.error.info?.code : 'ok'}`)
  },
})
console.log(`stop: ${turn.stopReason}`)
console.log(`answer: ${turn.messages.at(-1)?.content}`)
// #endregion turn
