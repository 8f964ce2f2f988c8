// toAiSdkTools inside the AI SDK's own generateText loop: toolgate policies apply (issue #12).
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import type { ApprovalRequest } from '../../src/contract/execution.js'
import { createToolRuntime } from '../../src/preset/create.js'
import { toAiSdkTools } from '../../src/providers/ai-sdk/index.js'
import { createAgent } from '../../src/runtime/agent.js'
import { CallbackApproval } from '../../src/scheduling/approval.js'
import { defineTool } from '../../src/schema/define-tool.js'
import { PNG } from './scenario.js'

type CallOptions = Parameters<MockLanguageModelV3['doGenerate']>[0]
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>

const usage: GenerateResult['usage'] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
}

describe('toAiSdkTools with generateText (issue #12)', () => {
  it('runs every call through ctx.tools.execute: approval denies one, allows another, images reach the model', async () => {
    const { ctx, tools } = await createToolRuntime()
    const agent = createAgent(ctx, { id: 'ai-sdk' })
    const asked: ApprovalRequest[] = []
    ctx.plugin(CallbackApproval, {
      decide: (request: ApprovalRequest) => {
        asked.push(request)
        return request.toolName === 'delete_all'
          ? { kind: 'denied', reason: 'too dangerous' }
          : { kind: 'allowed-once' }
      },
    })
    ctx.on('tools/pre-execute', async (exec, next) =>
      exec.name === 'echo' ? next() : { kind: 'ask', reason: 'writes' },
    )
    let deleted = 0
    tools.register(
      defineTool({
        name: 'delete_all',
        description: 'Delete everything.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        execute: async () => {
          deleted++
          return 'deleted'
        },
      }),
    )
    tools.register(
      defineTool({
        name: 'shot',
        description: 'Screenshot.',
        parameters: { label: { type: 'string', required: true } },
        output: {
          schema: { type: 'string' },
          render: (_a, v) => [
            { type: 'text', text: v },
            { type: 'image', mediaType: 'image/png', data: PNG },
          ],
        },
        execute: async ({ label }) => `shot ${label}`,
      }),
    )
    tools.register(
      defineTool({
        name: 'echo',
        description: 'Echo.',
        parameters: { text: { type: 'string', required: true } },
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        execute: async ({ text }) => text,
      }),
    )

    const calls: CallOptions[] = []
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        calls.push(options)
        if (calls.length === 1) {
          return {
            content: [
              { type: 'tool-call', toolCallId: 't1', toolName: 'delete_all', input: '{}' },
              { type: 'tool-call', toolCallId: 't2', toolName: 'shot', input: '{"label":"home"}' },
              { type: 'tool-call', toolCallId: 't3', toolName: 'echo', input: '{"text":7}' },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          }
        }
        return {
          content: [{ type: 'text', text: 'ok' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        }
      },
    })
    const result = await generateText({
      model,
      tools: toAiSdkTools(tools, { agent }),
      prompt: 'clean up',
      stopWhen: stepCountIs(3),
    })
    expect(result.text).toBe('ok')
    expect(deleted).toBe(0)
    expect(asked.map((r) => r.toolName).sort()).toEqual(['delete_all', 'shot'])
    expect(asked.every((r) => r.agentId === 'ai-sdk')).toBe(true)

    // The tools went to the model with their JSON Schemas.
    const sent = calls[0].tools ?? []
    expect(sent.map((t) => t.name)).toEqual(['delete_all', 'shot', 'echo'])
    expect(sent.find((t) => t.name === 'shot')).toMatchObject({
      type: 'function',
      inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
    })

    // What the model read back in the second request.
    const toolMessage = calls[1].prompt.find((m) => m.role === 'tool')
    expect(toolMessage?.role).toBe('tool')
    const outputs = Object.fromEntries(
      (toolMessage?.content ?? []).flatMap((part) =>
        part.type === 'tool-result' ? [[part.toolCallId, part.output]] : [],
      ),
    )
    expect(outputs.t1).toMatchObject({ type: 'execution-denied' })
    expect((outputs.t1 as { reason: string }).reason).toMatch(/too dangerous/)
    // The adapter answers 'image-data' on both majors; `ai` 7 hands it to the model as 'file-data' (issue 42).
    expect(outputs.t2).toMatchObject({
      type: 'content',
      value: [
        { type: 'text', text: 'shot home' },
        { type: expect.stringMatching(/^(?:image|file)-data$/), data: PNG, mediaType: 'image/png' },
      ],
    })
    // toolgate validated the arguments itself: the model sees why.
    expect(outputs.t3).toMatchObject({ type: 'error-text' })
    expect((outputs.t3 as { value: string }).value).toMatch(/text.*expected string, got number/)
  })

  it('answers a call of constructor, toString, hasOwnProperty or __proto__ as an unknown tool (issue 22)', async () => {
    const { ctx, tools } = await createToolRuntime()
    const agent = createAgent(ctx, { id: 'ai-sdk' })
    let echoed = 0
    tools.register(
      defineTool({
        name: 'echo',
        description: 'Echo.',
        parameters: { text: { type: 'string', required: true } },
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        execute: async ({ text }) => {
          echoed++
          return text
        },
      }),
    )
    const hostile = ['constructor', 'toString', 'hasOwnProperty', '__proto__']
    const calls: CallOptions[] = []
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        calls.push(options)
        if (calls.length === 1) {
          return {
            content: [
              ...hostile.map((toolName, i) => ({
                type: 'tool-call' as const,
                toolCallId: `h${i}`,
                toolName,
                input: '{}',
              })),
              { type: 'tool-call', toolCallId: 'e1', toolName: 'echo', input: '{"text":"hi"}' },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          }
        }
        return {
          content: [{ type: 'text', text: 'ok' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        }
      },
    })
    const set = toAiSdkTools(tools, { agent })
    const result = await generateText({ model, tools: set, prompt: 'go', stopWhen: stepCountIs(3) })
    // The turn went on to a second request: every call, the hostile ones included, was answered.
    expect(calls).toHaveLength(2)
    expect(result.text).toBe('ok')
    expect(echoed).toBe(1)
    const answered = calls[1].prompt
      .flatMap((m) => (m.role === 'tool' ? m.content : []))
      .flatMap((part) => (part.type === 'tool-result' ? [[part.toolCallId, part.output] as const] : []))
    const byId = new Map(answered)
    for (let i = 0; i < hostile.length; i++) {
      const output = byId.get(`h${i}`) as { type: string; value?: unknown } | undefined
      expect(output?.type).toBe('error-text')
      expect(String(output?.value)).toContain(hostile[i])
    }
    expect(byId.get('e1')).toEqual({ type: 'text', value: 'hi' })
    expect(Object.getPrototypeOf(set)).toBe(null)
  })
})

describe("toAiSdkTools keeps toolgate's scheduling (issue 25)", () => {
  /** One model step with `calls`, then a final text answer. */
  function stepModel(calls: ReadonlyArray<readonly [id: string, tool: string]>): MockLanguageModelV3 {
    let step = 0
    return new MockLanguageModelV3({
      doGenerate: async () => {
        step++
        if (step === 1)
          return {
            content: calls.map(([toolCallId, toolName]) => ({
              type: 'tool-call' as const,
              toolCallId,
              toolName,
              input: `{"id":"${toolCallId}"}`,
            })),
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          }
        return {
          content: [{ type: 'text', text: 'ok' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        }
      },
    })
  }

  /** A barrier `size` calls must all reach; fails (instead of hanging) when they never do together. */
  function barrier(size: number): () => Promise<void> {
    let arrived = 0
    let open: () => void = () => {}
    const opened = new Promise<void>((resolve) => {
      open = resolve
    })
    return async () => {
      if (++arrived === size) open()
      let timer: NodeJS.Timeout | undefined
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the calls never ran at the same time')), 10_000)
      })
      try {
        await Promise.race([opened, bound])
      } finally {
        clearTimeout(timer)
      }
    }
  }

  async function setup(meet: () => Promise<void>) {
    const { ctx, tools } = await createToolRuntime()
    const log: string[] = []
    const asked: string[] = []
    ctx.plugin(CallbackApproval, {
      decide: (request: ApprovalRequest) => {
        asked.push(request.callId)
        return { kind: 'allowed-once' }
      },
    })
    // Writes ask first: approval goes through the same service as every other call.
    ctx.on('tools/pre-execute', async (exec, next) =>
      exec.name === 'write' ? { kind: 'ask', reason: 'writes' } : next(),
    )
    for (const [name, safe] of [
      ['write', false],
      ['read', true],
    ] as const) {
      tools.register(
        defineTool({
          name,
          description: `${name}s`,
          parameters: { id: { type: 'string', required: true } },
          output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
          isConcurrencySafe: () => safe,
          execute: async ({ id }) => {
            log.push(`start ${id}`)
            if (safe) await meet()
            // A few turns of the event loop: time for any other started call to interleave.
            for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
            log.push(`end ${id}`)
            return id
          },
        }),
      )
    }
    return { tools, log, asked }
  }

  it('runs calls that are not concurrency-safe one at a time, in call order, approvals included', async () => {
    const { tools, log, asked } = await setup(async () => {})
    const result = await generateText({
      model: stepModel([
        ['w1', 'write'],
        ['w2', 'write'],
        ['w3', 'write'],
      ]),
      tools: toAiSdkTools(tools),
      prompt: 'write',
      stopWhen: stepCountIs(2),
    })
    expect(result.text).toBe('ok')
    expect(log).toEqual(['start w1', 'end w1', 'start w2', 'end w2', 'start w3', 'end w3'])
    expect(asked).toEqual(['w1', 'w2', 'w3'])
  })

  it('overlaps the concurrency-safe calls between two exclusive ones', async () => {
    const { tools, log } = await setup(barrier(2))
    await generateText({
      model: stepModel([
        ['w1', 'write'],
        ['r1', 'read'],
        ['r2', 'read'],
        ['w2', 'write'],
      ]),
      tools: toAiSdkTools(tools),
      prompt: 'read and write',
      stopWhen: stepCountIs(2),
    })
    // Both reads started before either ended (each waited for the other), after w1 and before w2.
    expect(log.slice(0, 2)).toEqual(['start w1', 'end w1'])
    expect(log.slice(2, 4).sort()).toEqual(['start r1', 'start r2'])
    expect(log.slice(4, 6).sort()).toEqual(['end r1', 'end r2'])
    expect(log.slice(6)).toEqual(['start w2', 'end w2'])
  })

  it('checks maxParallel', async () => {
    const { tools } = await createToolRuntime()
    expect(() => toAiSdkTools(tools, { maxParallel: 0 })).toThrow(/toAiSdkTools\(tools, options\)\.maxParallel/)
  })
})
