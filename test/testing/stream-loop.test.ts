// streamModelLoop through each provider's official SDK client against startFakeProvider (issue 25
// item 2): event order, deltas, usage per step and in total (runModelLoop too), abort mid-stream,
// approval and suspension while streaming.
import { afterEach, describe, expect, it } from 'vitest'
import { CallbackApproval, SuspendingApproval } from '../../src/index.js'
import {
  ModelLoopError,
  type ModelLoopResult,
  type ProviderFormat,
  resumeModelLoop,
  runModelLoop,
  type StreamModelLoopEvent,
  streamModelLoop,
} from '../../src/providers/index.js'
import { type FakeProvider, type ScriptedTurn, startFakeProvider } from '../../src/testing/index.js'
import { FORMATS, sdkModel, textOf, toolRuntime, userMessage } from './harness.js'

let open: FakeProvider[] = []
afterEach(async () => {
  await Promise.all(open.map((fake) => fake.close()))
  open = []
})

async function fake(format: ProviderFormat, turns: ScriptedTurn[]): Promise<FakeProvider> {
  const started = await startFakeProvider({ format, turns })
  open.push(started)
  return started
}

async function collect<F extends ProviderFormat>(
  stream: AsyncIterable<StreamModelLoopEvent<F>>,
): Promise<{ events: StreamModelLoopEvent<F>[]; done: ModelLoopResult<F> }> {
  const events: StreamModelLoopEvent<F>[] = []
  for await (const event of stream) events.push(event)
  const last = events.at(-1)
  if (last?.type !== 'done') throw new Error('the stream did not end with done')
  return { events, done: last }
}

/** Event types in order, runs of one type collapsed (deltas come in many pieces). */
function shape(events: readonly { type: string }[]): string[] {
  return events.map((e) => e.type).filter((type, i, all) => i === 0 || all[i - 1] !== type)
}

const SCRIPT: ScriptedTurn[] = [
  {
    reasoning: 'Two numbers, so add them.',
    text: 'Adding them now.',
    toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }],
    usage: { inputTokens: 100, outputTokens: 20, reasoningTokens: 8 },
  },
  { text: 'The sum is 5.', usage: { inputTokens: 130, outputTokens: 7 } },
]

describe.each(FORMATS)('%s', (format) => {
  it('streams text, reasoning, argument deltas, tool events and step usage in order, then done', async () => {
    const provider = await fake(format, SCRIPT)
    const { tools, agent } = await toolRuntime()
    const { events, done } = await collect(
      streamModelLoop({
        tools,
        agent,
        model: sdkModel(format, provider.url),
        messages: [userMessage(format, 'What is 2 + 3?')],
      }),
    )
    expect(provider.requests.map((r) => r.stream)).toEqual([true, true])
    expect(shape(events)).toEqual([
      'model-request',
      'reasoning-delta',
      'text-delta',
      'tool-call-delta',
      'model-response',
      'tool-start',
      'tool-progress',
      'tool-result',
      'step-end',
      'model-request',
      'text-delta',
      'model-response',
      'step-end',
      'done',
    ])
    const step0 = events.filter((e) => 'step' in e && e.step === 0)
    const joined = (type: string) =>
      step0
        .filter((e) => e.type === type)
        .map((e) => ('text' in e ? e.text : ''))
        .join('')
    expect(joined('reasoning-delta')).toBe('Two numbers, so add them.')
    expect(joined('text-delta')).toBe('Adding them now.')
    // Text arrives in several pieces, as a UI wants it.
    expect(step0.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(1)
    const argDeltas = events.flatMap((e) => (e.type === 'tool-call-delta' ? [e] : []))
    expect(argDeltas[0]).toMatchObject({ index: 0, name: 'add' })
    expect(JSON.parse(argDeltas.map((d) => d.argumentsDelta).join(''))).toEqual({ a: 2, b: 3 })
    const progress = events.find((e) => e.type === 'tool-progress')
    expect(progress).toMatchObject({ step: 0, index: 0, call: { name: 'add' }, progress: { message: 'adding' } })
    const result = events.find((e) => e.type === 'tool-result')
    expect(result).toMatchObject({ call: { name: 'add' }, result: { isError: false, value: 'sum=5' } })
    expect(events.filter((e) => e.type === 'step-end')).toEqual([
      {
        type: 'step-end',
        step: 0,
        usage: expect.objectContaining({ inputTokens: 100, outputTokens: 20, totalTokens: 120 }),
      },
      { type: 'step-end', step: 1, usage: expect.objectContaining({ inputTokens: 130, outputTokens: 7 }) },
    ])
    // Anthropic reports no separate reasoning count; the others do.
    if (format !== 'anthropic') expect(done.steps[0].usage?.reasoningTokens).toBe(8)
    expect(done.stopReason).toBe('done')
    expect(done.usage).toMatchObject({ inputTokens: 230, outputTokens: 27, totalTokens: 257 })
    expect(textOf(done.messages.at(-1))).toBe('The sum is 5.')
    // The second request answered the call with the tool's output.
    expect(JSON.stringify(provider.requests[1].body)).toContain('sum=5')
  })

  it('runModelLoop (not streaming) reports the same usage and builds the same conversation', async () => {
    const streamed = await fake(format, SCRIPT)
    const whole = await fake(format, SCRIPT)
    const first = await toolRuntime()
    const { done } = await collect(
      streamModelLoop({
        tools: first.tools,
        agent: first.agent,
        model: sdkModel(format, streamed.url),
        messages: [userMessage(format, 'What is 2 + 3?')],
      }),
    )
    const second = await toolRuntime()
    const run = await runModelLoop({
      tools: second.tools,
      agent: second.agent,
      model: sdkModel(format, whole.url),
      messages: [userMessage(format, 'What is 2 + 3?')],
    })
    expect(whole.requests.map((r) => r.stream)).toEqual([false, false])
    expect(run.stopReason).toBe('done')
    expect(run.steps.map((s) => s.usage?.inputTokens)).toEqual([100, 130])
    expect(run.usage).toEqual(done.usage)
    expect(run.messages).toEqual(done.messages)
    // What the model got back in its second request is the same too.
    expect(streamed.requests[1].body).toMatchObject(
      format === 'gemini' ? { contents: (whole.requests[1].body as { contents: unknown }).contents } : {},
    )
  })

  it('an abort mid-stream ends with aborted and a valid conversation (nothing half-answered)', async () => {
    const provider = await fake(format, [
      { text: 'Let me start by', toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }], hang: true },
    ])
    const { tools, agent } = await toolRuntime()
    const controller = new AbortController()
    const events: StreamModelLoopEvent[] = []
    for await (const event of streamModelLoop({
      tools,
      agent,
      model: sdkModel(format, provider.url),
      messages: [userMessage(format, 'Go')],
      signal: controller.signal,
    })) {
      events.push(event)
      if (event.type === 'text-delta') controller.abort()
    }
    const done = events.at(-1)
    expect(done).toMatchObject({ type: 'done', stopReason: 'aborted' })
    if (done?.type !== 'done') return
    // The half-streamed reply is not kept, so no call is left without its result.
    expect(done.messages).toEqual([userMessage(format, 'Go')])
    expect(events.some((e) => e.type === 'tool-start')).toBe(false)
  })

  it('an abort while the calls run answers every call once, and the next request is valid', async () => {
    const provider = await fake(format, [
      {
        toolCalls: [
          { name: 'slow', arguments: {} },
          { name: 'add', arguments: { a: 1, b: 2 } },
        ],
      },
      'Stopped.',
    ])
    const { tools, agent, slowStarted } = await toolRuntime()
    const controller = new AbortController()
    slowStarted.then(() => controller.abort())
    const { events, done } = await collect(
      streamModelLoop({
        tools,
        agent,
        model: sdkModel(format, provider.url),
        messages: [userMessage(format, 'Go')],
        signal: controller.signal,
      }),
    )
    expect(done.stopReason).toBe('aborted')
    const results = events.flatMap((e) => (e.type === 'tool-result' ? [e] : []))
    expect(results.map((r) => r.index).sort()).toEqual([0, 1])
    expect(done.steps[0].results.map((r) => r.name)).toEqual(['slow', 'add'])
    expect(done.steps[0].results[0].result).toMatchObject({ isError: true, error: { info: { code: 'ABORTED' } } })
    // The conversation goes on: the provider gets one result per call in the next request.
    const next = await runModelLoop({ tools, agent, model: sdkModel(format, provider.url), messages: done.messages })
    expect(next.stopReason).toBe('done')
    const sent = JSON.stringify(provider.requests[1].body)
    for (const call of done.steps[0].calls)
      if (!call.callId.startsWith('toolgate-')) expect(sent.split(call.callId).length).toBeGreaterThan(2)
  })

  it('an approval asked while streaming is answered before the call runs', async () => {
    const provider = await fake(format, [{ toolCalls: [{ name: 'write', arguments: { path: 'a.txt' } }] }, 'Written.'])
    const { ctx, tools, agent, written } = await toolRuntime()
    const asked: string[] = []
    // What a terminal would show, in order: the consumer's line for each event, and the question.
    const screen: string[] = []
    await ctx.plugin(CallbackApproval, {
      decide(request) {
        asked.push(request.reason ?? '')
        screen.push(`asked: ${request.toolName}`)
        return { kind: 'allowed-once' }
      },
    })
    const events: StreamModelLoopEvent<typeof format>[] = []
    for await (const event of streamModelLoop({
      tools,
      agent,
      model: sdkModel(format, provider.url),
      messages: [userMessage(format, 'Write')],
    })) {
      events.push(event)
      if (event.type === 'tool-start' || event.type === 'tool-result') screen.push(`${event.type}: ${event.call.name}`)
    }
    const done = events.at(-1)
    if (done?.type !== 'done') throw new Error('the stream did not end with done')
    // The consumer has shown the call's start before the approval question is asked (issue 37, from the trial).
    expect(screen).toEqual(['tool-start: write', 'asked: write', 'tool-result: write'])
    expect(asked).toEqual(['writes change the workspace'])
    expect(written).toEqual(['a.txt'])
    expect(done.stopReason).toBe('done')
    expect(shape(events).slice(0, 6)).toEqual([
      'model-request',
      'tool-call-delta',
      'model-response',
      'tool-start',
      'tool-result',
      'step-end',
    ])
  })

  it('a suspended approval ends the stream with approval-required; the resumed run keeps the usage', async () => {
    const provider = await fake(format, [
      {
        toolCalls: [
          { name: 'write', arguments: { path: 'b.txt' } },
          { name: 'add', arguments: { a: 4, b: 4 } },
        ],
        usage: { inputTokens: 50, outputTokens: 10 },
      },
      { text: 'Both done.', usage: { inputTokens: 70, outputTokens: 4 } },
    ])
    const { ctx, tools, agent, written } = await toolRuntime()
    await ctx.plugin(SuspendingApproval)
    const model = sdkModel(format, provider.url)
    const { events, done } = await collect(
      streamModelLoop({ tools, agent, model, messages: [userMessage(format, 'Write and add')] }),
    )
    expect(done.stopReason).toBe('approval-required')
    expect(done.pending?.map((p) => p.toolName)).toEqual(['write'])
    expect(done.usage).toMatchObject({ inputTokens: 50, outputTokens: 10 })
    // The step has not ended: one call waits for a person.
    expect(events.some((e) => e.type === 'step-end')).toBe(false)
    expect(events.flatMap((e) => (e.type === 'tool-result' ? [e.call.name] : []))).toContain('add')
    expect(written).toEqual([])
    const callId = done.state?.pending?.calls[0].callId ?? ''
    const resumed = await resumeModelLoop({
      tools,
      agent,
      model,
      state: JSON.parse(JSON.stringify(done.state)),
      decisions: { [callId]: { kind: 'allowed-once' } },
    })
    expect(resumed.stopReason).toBe('done')
    expect(written).toEqual(['b.txt'])
    expect(resumed.steps.map((s) => s.usage?.inputTokens)).toEqual([50, 70])
    expect(resumed.usage).toMatchObject({ inputTokens: 120, outputTokens: 14, totalTokens: 134 })
  })

  it('a failed request throws ModelLoopError from the iteration', async () => {
    const provider = await fake(format, [{ error: { status: 400, message: 'bad request: no such model' } }])
    const { tools, agent } = await toolRuntime()
    const events: string[] = []
    const run = async () => {
      for await (const event of streamModelLoop({
        tools,
        agent,
        model: sdkModel(format, provider.url),
        messages: [userMessage(format, 'Hi')],
      }))
        events.push(event.type)
    }
    await expect(run()).rejects.toThrow(ModelLoopError)
    expect(events).toEqual(['model-request'])
  })
})

describe('leaving a stream early', () => {
  it('break aborts the loop and waits for it: the hanging request is closed', async () => {
    const provider = await fake('openai-chat', [{ text: 'Thinking about it', hang: true }])
    const { tools, agent } = await toolRuntime()
    const seen: string[] = []
    for await (const event of streamModelLoop({
      tools,
      agent,
      model: sdkModel('openai-chat', provider.url),
      messages: [userMessage('openai-chat', 'Go')],
      onEvent: (e) => seen.push(e.type),
    })) {
      if (event.type === 'text-delta') break
    }
    // The loop is over once the for-await returns: no event arrives after it.
    const count = seen.length
    await new Promise((resolve) => setImmediate(resolve))
    expect(seen.length).toBe(count)
    expect(seen).not.toContain('model-response')
  })

  it('checks its options when called, before iterating', () => {
    expect(() => streamModelLoop({ tools: {} as never, model: {} as never, messages: [] })).toThrow(
      /runModelLoop\(options\)\.tools/,
    )
  })
})

describe('runModelLoop with a signal', () => {
  it('still suspends a call that waits for approval (the batch copies each input to fuse the signal)', async () => {
    const { ctx, tools, agent, written } = await toolRuntime()
    await ctx.plugin(SuspendingApproval)
    const provider = await fake('openai-chat', [{ toolCalls: [{ name: 'write', arguments: { path: 'c.txt' } }] }])
    const run = await runModelLoop({
      tools,
      agent,
      model: sdkModel('openai-chat', provider.url),
      messages: [userMessage('openai-chat', 'Write')],
      signal: new AbortController().signal,
    })
    expect(run.stopReason).toBe('approval-required')
    expect(run.pending?.map((p) => p.toolName)).toEqual(['write'])
    expect(written).toEqual([])
  })
})
