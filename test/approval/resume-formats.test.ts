// Issue 22: the resume integrity checks re-read the stored reply the way each adapter read the
// response, so an untouched state of every format resumes (strict-mode nulls and Gemini's made-up
// call ids included), and an edited one is refused.
import { describe, expect, it } from 'vitest'
import { createAgent, createToolRuntime, defineTool, SuspendingApproval } from '../../src/index.js'
import { anthropicModel } from '../../src/providers/anthropic/index.js'
import { geminiModel } from '../../src/providers/gemini/index.js'
import { type ProviderModel, resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { openAIChatModel, openAIResponsesModel } from '../../src/providers/openai/index.js'
import type { ProviderFormat } from '../../src/providers/types.js'

/** A client stand-in that answers the adapter's request with the scripted responses in order. */
function scripted(responses: unknown[]) {
  let next = 0
  return async () => {
    const response = responses[next++]
    if (response === undefined) throw new Error('more requests than scripted')
    return response
  }
}

const ARGS = { path: 'x.txt', note: null }

const MODELS: Record<ProviderFormat, () => ProviderModel> = {
  'openai-chat': () =>
    openAIChatModel({
      model: 'fake',
      client: {
        chat: {
          completions: {
            create: scripted([
              {
                choices: [
                  {
                    message: {
                      role: 'assistant',
                      content: null,
                      tool_calls: [
                        { id: 'w1', type: 'function', function: { name: 'write', arguments: JSON.stringify(ARGS) } },
                      ],
                    },
                  },
                ],
              },
              { choices: [{ message: { role: 'assistant', content: 'done' } }] },
            ]),
          },
        },
      } as never,
    }),
  'openai-responses': () =>
    openAIResponsesModel({
      model: 'fake',
      client: {
        responses: {
          create: scripted([
            {
              output: [
                {
                  type: 'function_call',
                  id: 'fc_w1',
                  call_id: 'w1',
                  name: 'write',
                  arguments: JSON.stringify(ARGS),
                  status: 'completed',
                },
              ],
            },
            { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] }] },
          ]),
        },
      } as never,
    }),
  anthropic: () =>
    anthropicModel({
      model: 'fake',
      client: {
        messages: {
          create: scripted([
            { content: [{ type: 'tool_use', id: 'w1', name: 'write', input: ARGS }] },
            { content: [{ type: 'text', text: 'done' }] },
          ]),
        },
      } as never,
    }),
  gemini: () =>
    geminiModel({
      model: 'fake',
      client: {
        models: {
          generateContent: scripted([
            { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'write', args: ARGS } }] } }] },
            { candidates: [{ content: { role: 'model', parts: [{ text: 'done' }] } }] },
          ]),
        },
      } as never,
    }),
}

async function setup() {
  const { ctx, tools } = await createToolRuntime()
  await ctx.plugin(SuspendingApproval)
  const agent = createAgent(ctx, { id: 'agent-1' })
  const ran: unknown[] = []
  tools.register(
    defineTool({
      name: 'write',
      description: 'Write a file.',
      parameters: { path: { type: 'string', required: true }, note: { type: 'string' } },
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      needsApproval: () => 'writes change the workspace',
      execute: async (args) => {
        ran.push(args)
        return 'written'
      },
    }),
  )
  return { tools, agent, ran }
}

describe('resume integrity in every format (issue 22)', () => {
  it.each(Object.keys(MODELS) as ProviderFormat[])(
    '%s: an untouched state resumes; edited arguments are refused',
    async (format) => {
      const { tools, agent, ran } = await setup()
      const model = MODELS[format]()
      const first = await runModelLoop({ tools, agent, model, messages: [] })
      expect(first.stopReason).toBe('approval-required')
      const state = JSON.parse(JSON.stringify(first.state))
      const callId = state.pending.calls[0].callId as string
      expect(state.pending.calls[0].arguments).toEqual({ path: 'x.txt' })
      const edited = JSON.parse(JSON.stringify(state))
      edited.pending.calls[0].arguments = { path: '/etc/passwd' }
      edited.pending.requests[0].arguments = { path: '/etc/passwd' }
      const decisions = { [callId]: { kind: 'allowed-once' as const } }
      await expect(resumeModelLoop({ state: edited, decisions, tools, agent, model })).rejects.toThrow(
        /state\.pending\.calls\[0\]\.arguments: differ from the arguments in the stored assistant reply/,
      )
      expect(ran).toEqual([])
      const done = await resumeModelLoop({ state, decisions, tools, agent, model })
      expect(done.stopReason).toBe('done')
      expect(ran).toEqual([{ path: 'x.txt' }])
    },
  )
})
