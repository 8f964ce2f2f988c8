// toolgate/testing (issue 25 item 4): scriptedModel and startFakeProvider, for each format, whole
// and streamed; the fake records what the official client sent and answers in the provider's shape.
import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/index.js'
import { ModelLoopError, runModelLoop, streamModelLoop } from '../../src/providers/index.js'
import { accumulateAnthropic, accumulateOpenAIChat } from '../../src/providers/stream-accumulate.js'
import { sumUsage, usageOf } from '../../src/providers/usage.js'
import { type FakeProvider, scriptedModel, startFakeProvider } from '../../src/testing/index.js'
import { FORMATS, sdkModel, textOf, toolRuntime, userMessage } from './harness.js'

let open: FakeProvider[] = []
afterEach(async () => {
  await Promise.all(open.map((fake) => fake.close()))
  open = []
})

const TURNS = [
  { text: 'Checking.', toolCalls: [{ name: 'add', arguments: { a: 40, b: 2 } }] },
  { text: 'It is 42.', usage: { inputTokens: 33, outputTokens: 3 } },
]

describe.each(FORMATS)('%s', (format) => {
  it('scriptedModel answers the script the same way whole and streamed, and records the requests', async () => {
    const whole = scriptedModel({ format, turns: TURNS })
    const streamed = scriptedModel({ format, turns: TURNS })
    const first = await toolRuntime()
    const run = await runModelLoop({
      tools: first.tools,
      agent: first.agent,
      model: whole,
      messages: [userMessage(format, 'Add')],
    })
    const second = await toolRuntime()
    const deltas: string[] = []
    let done: unknown
    for await (const event of streamModelLoop({
      tools: second.tools,
      agent: second.agent,
      model: streamed,
      messages: [userMessage(format, 'Add')],
    })) {
      if (event.type === 'text-delta') deltas.push(event.text)
      if (event.type === 'done') done = event
    }
    expect(run.stopReason).toBe('done')
    expect(textOf(run.messages.at(-1))).toBe('It is 42.')
    expect(done).toMatchObject({ stopReason: 'done', messages: run.messages, usage: run.usage })
    expect(deltas.join('')).toBe('Checking.It is 42.')
    expect(run.usage).toMatchObject({ inputTokens: 43, outputTokens: 8, totalTokens: 51 })
    expect(whole.requests).toHaveLength(2)
    expect(JSON.stringify(whole.requests[1])).toContain('sum=42')
  })

  it('a streamed call with malformed argument text answers INVALID_ARGS and the loop goes on', async () => {
    const provider = await startFakeProvider({
      format,
      turns: [{ toolCalls: [{ name: 'add', arguments: '{"a": 1, "b": ' }] }, 'Sorry.'],
    })
    open.push(provider)
    const { tools, agent } = await toolRuntime()
    const events = []
    for await (const event of streamModelLoop({
      tools,
      agent,
      model: sdkModel(format, provider.url),
      messages: [userMessage(format, 'Add')],
    }))
      events.push(event)
    const done = events.at(-1)
    expect(done).toMatchObject({ type: 'done', stopReason: 'done' })
    const result = events.find((e) => e.type === 'tool-result')
    expect(result).toMatchObject({ result: { isError: true, error: { info: { code: 'INVALID_ARGS' } } } })
  })

  it('the fake records each request and answers past the script with an error the SDK raises', async () => {
    const provider = await startFakeProvider({ format, turns: ['Hello.'] })
    open.push(provider)
    const { tools, agent } = await toolRuntime()
    const model = sdkModel(format, provider.url)
    const first = await runModelLoop({ tools, agent, model, messages: [userMessage(format, 'Hi')] })
    expect(textOf(first.messages.at(-1))).toBe('Hello.')
    const second = runModelLoop({ tools, agent, model, messages: [userMessage(format, 'Again')] })
    await expect(second).rejects.toThrow(ModelLoopError)
    await expect(second).rejects.toThrow(/the script has 1 turns; request 2 has none/)
    expect(provider.requests).toHaveLength(2)
    expect(provider.requests[0]).toMatchObject({ method: 'POST', stream: false })
    expect(JSON.stringify(provider.requests[1].body)).toContain('Again')
    // The tools went out in the format's own shape.
    expect(JSON.stringify(provider.requests[0].body)).toContain('"add"')
  })
})

describe('startFakeProvider', () => {
  it('speaks SSE with [DONE] to a raw OpenAI client, and 404s an unknown path', async () => {
    const provider = await startFakeProvider({ format: 'openai-chat', turns: ['One two three'] })
    open.push(provider)
    const client = new OpenAI({ apiKey: 'k', baseURL: `${provider.url}/v1`, maxRetries: 0 })
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
    })
    const text: string[] = []
    for await (const chunk of stream) text.push(chunk.choices[0]?.delta.content ?? '')
    expect(text.join('')).toBe('One two three')
    expect(provider.requests[0].path).toBe('/v1/chat/completions')
    const missing = await fetch(`${provider.url}/v1/embeddings`, { method: 'POST', body: '{}' })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: { message: expect.stringContaining('no such endpoint') } })
  })

  it('refuses a bad format or script with a path-qualified ConfigError', async () => {
    await expect(startFakeProvider({ format: 'cohere' as never, turns: [] })).rejects.toThrow(ConfigError)
    await expect(startFakeProvider({ format: 'gemini', turns: [{ toolCalls: [{ name: '' }] }] })).rejects.toThrow(
      'startFakeProvider(options).turns[0].toolCalls[0].name',
    )
    expect(() => scriptedModel({ turns: [{ usage: { inputTokens: -1, outputTokens: 0 } }] })).toThrow(
      'scriptedModel(options).turns[0].usage.inputTokens',
    )
  })
})

describe('token usage', () => {
  it('reads each provider’s counters into one shape (cache and reasoning included)', () => {
    expect(
      usageOf('anthropic', {
        usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 90, cache_creation_input_tokens: 5 },
      }),
    ).toEqual({ inputTokens: 105, outputTokens: 4, totalTokens: 109, cachedInputTokens: 90 })
    expect(
      usageOf('gemini', {
        usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3, thoughtsTokenCount: 6, totalTokenCount: 16 },
      }),
    ).toEqual({ inputTokens: 7, outputTokens: 9, totalTokens: 16, reasoningTokens: 6 })
    expect(usageOf('openai-chat', { usage: { prompt_tokens: 'x' } })).toBeUndefined()
    expect(sumUsage([{ inputTokens: 1, outputTokens: 2, totalTokens: 3 }, undefined])).toEqual({
      inputTokens: 1,
      outputTokens: 2,
      totalTokens: 3,
    })
  })
})

describe('folding a stream back into a response', () => {
  async function* from(items: unknown[]) {
    yield* items
  }

  it('Chat chunks without an index (some compatible servers) still make one call per id', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
    const deltas: unknown[] = []
    const folded = await accumulateOpenAIChat(
      from([
        chunk({ tool_calls: [{ id: 'a', function: { name: 'add', arguments: '{"a":' } }] }),
        chunk({ tool_calls: [{ function: { arguments: '1,"b":2}' } }] }),
        chunk({ tool_calls: [{ id: 'b', function: { name: 'add', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
      (delta) => deltas.push(delta),
    )
    expect(folded.choices).toEqual([
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } },
            { id: 'b', type: 'function', function: { name: 'add', arguments: '{}' } },
          ],
        },
      },
    ])
    expect(deltas.map((d) => (d as { index: number }).index)).toEqual([0, 0, 1])
  })

  it('a stream cut before its end marker is an error, not a reply', async () => {
    await expect(
      accumulateOpenAIChat(from([{ choices: [{ index: 0, delta: { content: 'Hel' } }] }]), () => {}),
    ).rejects.toThrow('openAIChatModel: the stream ended before a finish_reason')
    await expect(
      accumulateAnthropic(from([{ type: 'message_start', message: { role: 'assistant', content: [] } }]), () => {}),
    ).rejects.toThrow('anthropicModel: the stream ended before message_stop')
  })
})
