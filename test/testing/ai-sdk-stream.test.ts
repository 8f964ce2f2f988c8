// The AI SDK streams its own loop: streamText with toAiSdkTools streams text and tool-input deltas,
// runs each call through ctx.tools.execute (approval included) and reports usage (issue 25 item 2).
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { simulateReadableStream, stepCountIs, streamText } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { expect, it } from 'vitest'
import { CallbackApproval } from '../../src/index.js'
import { toAiSdkTools } from '../../src/providers/ai-sdk/index.js'
import { toolRuntime } from './harness.js'

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
})

function step(parts: LanguageModelV3StreamPart[]) {
  return { stream: simulateReadableStream({ chunks: parts }) }
}

it('streamText with toAiSdkTools: deltas arrive, calls run through toolgate, usage totals', async () => {
  const { ctx, tools, agent, written } = await toolRuntime()
  const asked: string[] = []
  await ctx.plugin(CallbackApproval, {
    decide: (request) => {
      asked.push(request.toolName)
      return { kind: 'allowed-once' }
    },
  })
  let requests = 0
  const model = new MockLanguageModelV3({
    doStream: async () => {
      requests++
      if (requests === 1)
        return step([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't1' },
          { type: 'text-delta', id: 't1', delta: 'Writing ' },
          { type: 'text-delta', id: 't1', delta: 'now.' },
          { type: 'text-end', id: 't1' },
          { type: 'tool-input-start', id: 'c1', toolName: 'write' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"path":' },
          { type: 'tool-input-delta', id: 'c1', delta: '"x.txt"}' },
          { type: 'tool-input-end', id: 'c1' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'write', input: '{"path":"x.txt"}' },
          { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(20, 9) },
        ])
      return step([
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't2' },
        { type: 'text-delta', id: 't2', delta: 'Done.' },
        { type: 'text-end', id: 't2' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(31, 2) },
      ])
    },
  })
  const result = streamText({
    model,
    tools: toAiSdkTools(tools, { agent }),
    prompt: 'Write x',
    stopWhen: stepCountIs(3),
  })
  const seen: string[] = []
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') seen.push(`text:${part.text}`)
    if (part.type === 'tool-input-delta') seen.push(`args:${part.delta}`)
    if (part.type === 'tool-result') seen.push(`result:${JSON.stringify(part.output)}`)
  }
  expect(seen.slice(0, 4)).toEqual(['text:Writing ', 'text:now.', 'args:{"path":', 'args:"x.txt"}'])
  expect(seen.find((s) => s.startsWith('result:'))).toContain('wrote x.txt')
  expect(seen.at(-1)).toBe('text:Done.')
  expect(asked).toEqual(['write'])
  expect(written).toEqual(['x.txt'])
  expect((await result.totalUsage).inputTokens).toBe(51)
})
