// Compiled with only `openai` installed: the adapters and the format functions carry its types.
import OpenAI from 'openai'
import { createToolRuntime } from 'toolgate'
import { parseToolCalls, runModelLoop, toProviderTools } from 'toolgate/providers'
import { openAIChatModel, openAIResponsesModel } from 'toolgate/providers/openai'

export async function openai(): Promise<string> {
  await using runtime = await createToolRuntime()
  const client = new OpenAI({ apiKey: 'sk-none', baseURL: 'http://127.0.0.1:9/v1' })
  const result = await runModelLoop({
    tools: runtime.tools,
    model: openAIChatModel({ client, model: 'gpt-5-mini' }),
    messages: [{ role: 'user', content: 'hi' }],
  })
  const last = result.messages.at(-1)
  // The loop's messages are the SDK's own type, ready for the next request.
  const again: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = result.messages
  void again
  void openAIResponsesModel({ client, model: 'gpt-5-mini' })
  // toProviderTools and parseToolCalls speak the SDK's types once the subpath is imported.
  const completion = await client.chat.completions.create({
    model: 'gpt-5-mini',
    messages: result.messages,
    tools: toProviderTools('openai-chat', runtime.tools.schemas()).tools,
  })
  void parseToolCalls('openai-chat', completion)
  return typeof last?.content === 'string' ? last.content : ''
}
