// Compiled with only `@anthropic-ai/sdk` installed.
import Anthropic from '@anthropic-ai/sdk'
import { createToolRuntime } from 'toolgate'
import { parseToolCalls, runModelLoop, toProviderTools } from 'toolgate/providers'
import { anthropicModel } from 'toolgate/providers/anthropic'

export async function anthropic(): Promise<Anthropic.Messages.MessageParam[]> {
  await using runtime = await createToolRuntime()
  const client = new Anthropic({ apiKey: 'none', baseURL: 'http://127.0.0.1:9' })
  const result = await runModelLoop({
    tools: runtime.tools,
    model: anthropicModel({ client, model: 'claude-sonnet-4-5', params: { system: 'Be brief.' } }),
    messages: [{ role: 'user', content: 'hi' }],
  })
  const message = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    messages: result.messages,
    tools: toProviderTools('anthropic', runtime.tools.schemas()).tools,
  })
  void parseToolCalls('anthropic', message)
  return result.messages
}
