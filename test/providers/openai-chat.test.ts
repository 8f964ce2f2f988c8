// Wire test: the official `openai` client, Chat Completions, against a local fake (issue #12).
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import { afterEach, describe, expect, it } from 'vitest'
import { runModelLoop } from '../../src/providers/index.js'
import { openAIChatModel } from '../../src/providers/openai/index.js'
import type { FakeServer } from './fake-server.js'
import { chatServer } from './openai-chat-server.js'
import { PNG, scenario, TURN_ONE } from './scenario.js'
import { type WireHarness, wireSuite } from './wire-suite.js'

const harness: WireHarness<'openai-chat'> = {
  userMessage: { role: 'user', content: 'go' },
  async start(script) {
    const { server, client, bodies } = await chatServer(script)
    return {
      server,
      bodies,
      model: openAIChatModel({ client, model: 'fake' }),
      replay: (messages) => client.chat.completions.create({ model: 'fake', messages }),
    }
  },
  checkAnswers(raw, run) {
    const body = raw as ChatCompletionCreateParamsNonStreaming
    // Tools went out strict; the optional `limit` is required-but-nullable.
    expect(body.tools?.find((t) => t.type === 'function' && t.function.name === 'search')).toEqual({
      type: 'function',
      function: {
        name: 'search',
        description: 'Search, optionally limited.',
        strict: true,
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string' },
            limit: { type: ['integer', 'null'], description: 'at most this many hits' },
          },
          required: ['query', 'limit'],
          additionalProperties: false,
        },
      },
    })
    // Assistant turn, eight tool messages in call order, then the image as one user message.
    const messages = body.messages
    expect(messages.slice(0, 2).map((m) => m.role)).toEqual(['user', 'assistant'])
    const toolMessages = messages.slice(2, 10) as ChatCompletionToolMessageParam[]
    expect(toolMessages.map((m) => [m.role, m.tool_call_id])).toEqual(TURN_ONE.map(([id]) => ['tool', id]))
    const text = Object.fromEntries(toolMessages.map((m) => [m.tool_call_id, m.content as string]))
    expect(text.c1).toBe('contents of a.txt')
    expect(text.c5).toBe('Error (TOOL_ERROR): kaboom')
    expect(text.c6).toMatch(/^Error \(TOOL_DENIED\): .*secrets are off-limits/)
    expect(text.c7).toMatch(/^Error \(INVALID_ARGS\): Invalid arguments for read: arguments are not valid JSON/)
    expect(text.c4).toBe('a screenshot\n[image (image/png) #1: attached in the next user message]')
    expect(messages[10]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Images returned by tool call "c4" (snapshot):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      ],
    })
    expect(messages).toHaveLength(11)
    expect(run.messages.at(-1)).toEqual({ role: 'assistant', content: 'All done.' })
  },
}

describe('openai-chat through the official client (issue #12)', () => {
  wireSuite(harness)

  let open: FakeServer | undefined
  afterEach(async () => {
    await open?.close()
    open = undefined
  })

  it('sends a tool non-strict, schema untouched, when strict mode cannot express it', async () => {
    const { tools, agent } = await scenario()
    tools.register({
      name: 'free',
      description: 'Takes anything.',
      parameters: { type: 'object', properties: { blob: {} } },
      output: { schema: {}, render: () => [{ type: 'text', text: 'ok' }] },
      execute: async () => null,
    })
    const { server, client, bodies } = await chatServer(['nothing to do'])
    open = server
    const run = await runModelLoop({
      tools,
      agent,
      model: openAIChatModel({ client, model: 'fake' }),
      messages: [{ role: 'user', content: 'go' }],
    })
    expect(run.stopReason).toBe('done')
    expect(bodies[0].tools?.find((t) => t.type === 'function' && t.function.name === 'free')).toEqual({
      type: 'function',
      function: {
        name: 'free',
        description: 'Takes anything.',
        strict: false,
        parameters: { type: 'object', properties: { blob: {} } },
      },
    })
  })
})
