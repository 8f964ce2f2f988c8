// Shared by the streaming and testing-kit suites: a runtime with a few tools, and each format's
// official SDK client pointed at a fake provider.
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { createAgent, createToolRuntime, defineTool } from '../../src/index.js'
import { anthropicModel } from '../../src/providers/anthropic/index.js'
import { geminiModel } from '../../src/providers/gemini/index.js'
import type { ProviderFormat, ProviderModel } from '../../src/providers/index.js'
import { openAIChatModel, openAIResponsesModel } from '../../src/providers/openai/index.js'

const textOutput = {
  schema: { type: 'string' },
  render: (_args: unknown, text: string) => [{ type: 'text' as const, text }],
} as const

export const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as const satisfies ProviderFormat[]

/** The format's adapter over its official SDK client, talking to `url`. */
export function sdkModel(format: ProviderFormat, url: string): ProviderModel {
  switch (format) {
    case 'openai-chat':
      return openAIChatModel({ client: new OpenAI({ apiKey: 'test', baseURL: url, maxRetries: 0 }), model: 'gpt-test' })
    case 'openai-responses':
      return openAIResponsesModel({
        client: new OpenAI({ apiKey: 'test', baseURL: url, maxRetries: 0 }),
        model: 'gpt-test',
      })
    case 'anthropic':
      return anthropicModel({
        client: new Anthropic({ apiKey: 'test', baseURL: url, maxRetries: 0 }),
        model: 'claude-test',
      })
    case 'gemini':
      return geminiModel({
        client: new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: url } }),
        model: 'gemini-test',
      })
  }
}

/** The opening user message in each format. */
export function userMessage(format: ProviderFormat, text: string): never {
  switch (format) {
    case 'openai-chat':
    case 'anthropic':
      return { role: 'user', content: text } as never
    case 'openai-responses':
      return { role: 'user', content: text, type: 'message' } as never
    case 'gemini':
      return { role: 'user', parts: [{ text }] } as never
  }
}

/** The text of a model message (any format), joined. */
export function textOf(message: unknown): string {
  const m = message as Record<string, unknown>
  if (typeof m.content === 'string') return m.content
  const blocks = (Array.isArray(m.content) ? m.content : Array.isArray(m.parts) ? m.parts : []) as Record<
    string,
    unknown
  >[]
  return blocks
    .filter((b) => b.thought !== true && (b.type === undefined || b.type === 'text' || b.type === 'output_text'))
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join('')
}

/**
 * `add {a, b}` (reports progress, answers `sum=N`), `slow {}` (waits for its signal), and
 * `write {path}` (asks for approval first).
 */
export async function toolRuntime() {
  const { ctx, tools } = await createToolRuntime()
  const agent = createAgent(ctx, { id: 'agent-1' })
  let slowStarted: () => void = () => {}
  const slow = new Promise<void>((resolve) => {
    slowStarted = resolve
  })
  const written: string[] = []
  tools.register(
    defineTool({
      name: 'add',
      description: 'Add two numbers.',
      output: textOutput,
      parameters: { a: { type: 'number', required: true }, b: { type: 'number', required: true } },
      isConcurrencySafe: () => true,
      execute: async ({ a, b }, run) => {
        run.progress({ message: 'adding', fraction: 0.5 })
        return `sum=${a + b}`
      },
    }),
  )
  tools.register(
    defineTool({
      name: 'slow',
      description: 'Wait until cancelled.',
      output: textOutput,
      parameters: {},
      isConcurrencySafe: () => true,
      execute: (_args, run) =>
        new Promise<string>((_resolve, reject) => {
          slowStarted()
          run.signal.addEventListener('abort', () => reject(run.signal.reason), { once: true })
        }),
    }),
  )
  tools.register(
    defineTool({
      name: 'write',
      description: 'Write a file.',
      output: textOutput,
      parameters: { path: { type: 'string', required: true } },
      execute: async ({ path }) => {
        written.push(path)
        return `wrote ${path}`
      },
    }),
  )
  ctx.on('tools/pre-execute', async (exec, next) =>
    exec.name === 'write' ? { kind: 'ask', reason: 'writes change the workspace' } : next(),
  )
  return { ctx, tools, agent, slowStarted: slow, written }
}
